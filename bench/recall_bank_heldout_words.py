"""The held-out bank's words: pools, how facts are phrased, and distractors.

Shares no pool, phrasing or distractor with ``recall_bank_tune_words``: other cities, other
life events (studies, a stolen bike, a band, an allotment, an engagement, a parent's
operation, a language exam, coaching), other ways of saying when.
"""

from __future__ import annotations

NAMES = (
    ("Inès", "ines"), ("Björn", "bjorn"), ("Noor", "noor"), ("Mateus", "mateus"),
    ("Chloé", "chloe"), ("Dário", "dario"), ("Hana", "hana"), ("Rafael", "rafael"),
)  # fmt: skip
PARTNERS = ("Sasha", "Ruben", "Ingrid", "Malik", "Léa", "Oskar", "Yara", "Emil", "Noor", "Dário")
FRIENDS = ("Beatrix", "Cormac", "Ifeoma", "Lucía", "Matteo", "Signe", "Hana", "Rafael")
CITIES = (
    "Utrecht", "Bergen", "Tallinn", "Córdoba", "Nîmes", "Malmö", "Bogotá", "Wrocław",
    "Trondheim", "Curitiba", "Graz", "Aarhus", "Gdańsk", "Sevilla", "Łódź", "Brno",
)  # fmt: skip
CONFERENCE_CITIES = ("Helsinki", "Riga", "Bilbao", "Trieste", "Ghent", "Salzburg", "Vilnius")
REGIONS = (
    "the Dolomites", "the Picos de Europa", "the Tatras", "the Lofoten islands",
    "the Scottish Highlands", "the Julian Alps",
)  # fmt: skip
WEDDING_PLACES = ("Cádiz", "Lake Bled", "Dubrovnik", "Galway", "Annecy", "Hvar")
FIELDS = (
    "marine ecology", "medieval history", "urban planning", "bioinformatics",
    "music therapy", "structural engineering", "public health",
)  # fmt: skip
SUPERVISORS = (
    "Dr. Abernathy", "Professor Ndiaye", "Dr. Kowalczyk", "Professor Haugen", "Dr. Ferreira",
    "Dr. Lindqvist",
)  # fmt: skip
ROLES = (
    ("junior planner", "Stadsbureau Noord"), ("lab technician", "Helix Genomics"),
    ("archivist", "the National Archive"), ("music therapist", "Harmonia Care"),
    ("site engineer", "Vanguard Structures"), ("epidemiologist", "the Regional Health Agency"),
    ("field ecologist", "Blue Shore Trust"),
)  # fmt: skip
BIKES = (
    "Brompton", "Cannondale Synapse", "Gazelle Esprit", "Trek FX 3", "Specialized Allez",
    "Canyon Grail", "Cube Nature",
)  # fmt: skip
THEFT_SPOTS = ("the train station", "the gym", "the public library", "the supermarket", "my office")
INSTRUMENTS = ("bass", "drums", "keyboard", "trumpet", "violin")
BANDS = (
    "The Paper Moths", "Velvet Static", "Los Lentos", "Northern Larks", "Quiet Engines",
    "The Honey Vans",
)  # fmt: skip
VENUES = ("the Blue Cellar", "Klub Neon", "the Old Mill", "Sala Íris", "the Lantern Rooms")
VEGETABLES = ("pumpkin", "marrow", "runner beans", "leeks", "beetroot", "onions")
PRIZES = ("first prize", "second place", "a rosette")
SHOWS = ("the county show", "the harvest fair", "the allotment society show")
MET_AT = (
    "a pub quiz", "a friend's barbecue", "a language exchange", "a delayed night train",
    "a volunteering day", "a board game café",
)  # fmt: skip
PROCEDURES = ("hip replacement", "cataract surgery", "heart bypass", "hernia operation")
HOSPITALS = (
    "Mercy General", "St. Olav's", "Riverside Infirmary", "Klinikum Süd", "Hôpital Sainte-Anne",
)  # fmt: skip
LANGUAGES = ("Portuguese", "Greek", "Turkish", "Dutch", "Korean", "Polish")
TUTORS = ("Mariana", "Kostas", "Selin", "Daan", "Min-jung", "Agata")
LEVELS = ("A2", "B1", "B2", "C1")
TEAMS = ("the Hornets", "the Otters", "the Comets", "the Red Foxes", "the Badgers")
WHEN = ("a week ago", "the day before yesterday", "yesterday")

HOME1 = (
    "Sharing a flat in {c} with two others. The kitchen rota is a warzone.",
    "Cycled across {c} at sunset, and this city still surprises me.",
)
HOME2 = (
    "Got the keys to our place in {c} {w}! Empty rooms echo so much.",
    "We picked up the keys in {c} {w}. First night sleeping on a mattress on the floor.",
)
HOME3 = (
    "Everything's unpacked in {c}, and the neighbours already know our names.",
    "The relocation to {c} is done, and I even found a good bakery on the corner.",
)
STUDY = (
    "Enrolled {w}: a master's in {f}, studying again at my age!",
    "First lecture of my master's in {f} was {w}. Studying again means so much reading.",
)
SUPERVISOR = (
    "Meeting with my thesis supervisor, {s}, went better than expected.",
    "{s} agreed to supervise my thesis. Slightly terrified, mostly thrilled.",
)
GRADUATION = ("Graduated {w}! Gown, silly hat, the works.", "It's official, I graduated {w}.")
FIRST_JOB = (
    "Signed my first proper contract: {ar} at {o}!",
    "Starting Monday as {ar} at {o}. Real salary, real desk.",
)
STOLEN = (
    "Someone stole my {b} from outside {p} {w}. Lock cut clean through.",
    "My {b} got stolen {w}, right outside {p}. I'm livid.",
)
NEW_BIKE = (
    "Bought a {b} {w}, second-hand but in great shape. Back on a bike!",
    "New wheels: a {b}, picked up {w} from a guy who barely rode the bike.",
)
BAND = (
    "I've joined a band! I'm playing {i} for {b}, rehearsals on Thursdays.",
    "Guess who's the new {i} player in {b}? This person.",
)
GIG = (
    "First gig done! We played at {v} {w} and people actually danced.",
    "We had our first ever show at {v} {w}. Nerves of jelly, but it went well.",
)
PRIZE = (
    "My {v} won {p} at {s}! Ridiculously proud.",
    "{s} results: {p} for my {v}. All those early mornings paid off.",
)
MET = (
    "{p} and I met at {m}, of all places. Two years ago now.",
    "Funny story: {p} and I met at {m}.",
)
ENGAGED = ("{p} proposed {w}!!! I said yes.", "We got engaged {w}. {p} cried more than I did.")
OPERATION = (
    "Dad had his {x} at {h} {w}; the surgeon is pleased.",
    "Dad's {x} at {h} went fine {w}. He's already grumbling about the food.",
)
TUTOR = (
    "Found a {l} tutor, {t}, and we meet twice a week online.",
    "My {l} tutor {t} makes me read the news aloud. Brutal but it works.",
)
EXAM = ("Passed my {l} {lv} exam {w}!!", "The {l} {lv} certificate arrived {w}. I passed!")
TEAM = (
    "Coaching the under-10s on Saturdays now, {t}. Total chaos, love it.",
    "I'm the new coach of {t}, an under-10s side. Twelve kids, one ball pump.",
)
CONFERENCE = ("At a conference in {c} all week, my brain is full.",)
HIKE = ("Back from a week of hiking in {r} with {p}. My calves are destroyed.",)
WEDDING = ("In {pl} for {f}'s wedding, the ceremony is by the water.",)

Items = list[tuple[str, str]]  # (user text, assistant reply)


def home_mentions(other1: str, other2: str) -> Items:
    return [
        (f"An old classmate keeps telling me to move to {other1}.",
         f"{other1} has its fans! What is it they love about it?"),
        (f"Would {other2} be a good place for a long weekend?",
         f"{other2} works well for a long weekend: walkable and full of cafés."),
        ("Measured the living room three times and the sofa still won't fit.",
         "Could it go in on its side? Or is it time for a smaller sofa?"),
        ("The upstairs neighbours vacuum at midnight.", "That's a strange hour for it!"),
    ]  # fmt: skip


def bike_mentions() -> Items:
    return [
        ("Got a puncture on the way in, walked the last two kilometres.",
         "Worth carrying a spare tube and a mini pump."),
        ("Is a D-lock really better than a chain?",
         "A good D-lock is harder to cut; many people use both."),
        ("Cycling to work in the rain is character-building.", "Mudguards are your friend!"),
        ("Apparently a bike thief is working our street. Everyone lock up!",
         "Good to know. A second lock makes a bike a lot less tempting to a thief."),
    ]  # fmt: skip


def band_mentions(instrument: str) -> Items:
    return [
        ("Rehearsal ran late again, my fingers are numb.", "Sounds like a productive session."),
        (f"How do I stop rushing the tempo on the {instrument}?",
         f"Practise the {instrument} parts with a metronome at a slower tempo, then speed up."),
        ("We're arguing about the setlist again.", "Maybe each member picks two songs?"),
    ]  # fmt: skip


def partner_mentions(partner: str) -> Items:
    return [
        (f"{partner} made dinner and it was actually amazing.", "Lucky you!"),
        (f"{partner} and I are arguing about paint colours for the hallway.",
         "Paint a few swatches on the wall and live with them for a week."),
        (f"Planning a surprise for {partner}'s birthday. Ideas?",
         "A day built around their favourite things is hard to beat."),
    ]  # fmt: skip


def study_mentions() -> Items:
    return [
        ("Library until closing time, again.", "Remember to take breaks!"),
        ("My thesis draft has more comments than text.", "Comments mean someone read it closely."),
        ("Academic writing is a different language, I swear.",
         "It gets easier; reading good papers in your area helps a lot."),
        ("My research is going nowhere this week.", "Weeks like that happen to everyone."),
        ("I have to present my project to the whole department on Friday.",
         "Rehearse it out loud twice and you'll be fine."),
        ("How do I cite a dataset properly?",
         "Most styles want the author, year, title, version and a persistent link."),
    ]  # fmt: skip


def garden_mentions(vegetable: str) -> Items:
    return [
        ("Slugs ate half the lettuce overnight.", "Beer traps or copper tape might help."),
        (f"When should I water the {vegetable}?",
         f"Water the {vegetable} early in the morning, deeply and less often."),
        ("Spent all Sunday at the allotment, weeding.", "Therapeutic, though?"),
    ]  # fmt: skip


def family_mentions(language: str) -> Items:
    return [
        ("Dad is driving everyone mad at home, he hates sitting still.",
         "Recovery is hard for active people."),
        ("Mum sent a voice message that was four minutes long.", "Classic."),
        (f"Is {language} grammar supposed to be this hard?",
         f"{language} has some tricky corners, but everyone hits the same walls."),
        ("Did my flashcards on the bus this morning.", "Little and often is the way."),
    ]  # fmt: skip


def coaching_mentions() -> Items:
    return [
        ("Lost 6-1 on Saturday but the kids had fun.", "That's what counts at that age."),
        ("One of the parents shouted at the referee. Mortifying.",
         "A quiet word before next match might help."),
        ("What's a good warm-up game for eight-year-olds?",
         "Try tag with a ball: whoever is 'it' has to dribble."),
    ]  # fmt: skip


def travel_mentions(other: str) -> Items:
    return [
        (f"Colleagues are going to a workshop in {other}, I'm jealous.",
         f"Maybe next time it'll be you in {other}!"),
        ("Hand luggage only: genius or madness?", "Genius, if you roll your clothes."),
        ("My suitcase wheel broke on the cobbles.", "Cobblestones are suitcase killers."),
    ]  # fmt: skip
