"""The tune bank's words: pools of names and places, how facts are phrased, and distractors.

A distractor (a *mention*) shares the people, animals, places or topic of a fact but never
its answer: a pet by its name alone or its species alone, "work", "the new flat", a city
nobody in the story lives in.
"""

from __future__ import annotations

NAMES = (
    ("Maya", "maya"), ("Tom", "tom"), ("Zoë", "zoe"), ("Joaquín", "joaquin"),
    ("Priya", "priya"), ("Søren", "soren"), ("Amélie", "amelie"), ("Kofi", "kofi"),
)  # fmt: skip
RELATIVES = {
    "sister": ("Lena", "Maya", "Clara", "Ana", "Zoë", "Ruth", "Nadia", "Elif"),
    "brother": ("Jonas", "Tom", "Felix", "Marco", "Theo", "Hugo", "Kofi"),
}
CITIES = (
    "Lisbon", "Berlin", "Porto", "São Paulo", "Montréal", "Kraków", "Zürich", "Edinburgh",
    "Valencia", "Rotterdam", "Göteborg", "Ljubljana", "Dublin", "Lyon", "Bologna", "Tbilisi",
)  # fmt: skip
DESTINATIONS = (
    "Kyoto", "Reykjavík", "Marrakesh", "Oaxaca", "Hanoi", "Tromsø", "Cartagena", "Sicily",
    "Madeira", "Patagonia", "Crete", "Seoul", "Zanzibar", "Lapland",
)  # fmt: skip
HOTELS = (
    "Casa Azul", "the Pine Lodge", "Hotel Miramar", "Ryokan Hoshi", "Villa Limone",
    "the Harbour Inn", "Pension Müller", "Riad Yasmine", "Hostal Pérez", "Hotel Aurora",
)  # fmt: skip
JOBS = (
    ("chemistry teacher", "Westfield High"), ("ICU nurse", "St. Brigid's Hospital"),
    ("landscape architect", "Ferro & Lind"), ("data analyst", "Nordbank"),
    ("pastry chef", "Café Lumière"), ("physiotherapist", "Kinetica Clinic"),
    ("sound engineer", "Studio Nove"), ("UX designer", "Pixelfabrik"),
    ("museum curator", "the Maritime Museum"), ("quantity surveyor", "Brandt Bau"),
)  # fmt: skip
SIBLING_JOBS = (
    "midwife", "firefighter", "lawyer", "dentist", "airline pilot", "park ranger",
    "marine biologist", "electrician",
)  # fmt: skip
BREEDS = {
    "dog": ("beagle", "border collie", "dachshund", "greyhound", "corgi", "whippet", "schnauzer"),
    "cat": ("Maine Coon", "Siamese", "Ragdoll", "Bengal", "British Shorthair", "Sphynx"),
}
PET_NAMES = (
    "Biscuit", "Miso", "Pepper", "Noodle", "Olive", "Juniper", "Mochi", "Pixel", "Toast",
    "Clementine", "Pretzel", "Waffle", "Tofu", "Bruno",
)  # fmt: skip
CAUSES = ("kidney disease", "heart failure", "lymphoma", "diabetes")
HOBBIES = (
    ("pottery", "craft"), ("salsa", "dance"), ("ukulele", "instrument"),
    ("bouldering", "sport"), ("watercolour", "art"), ("life drawing", "art form"),
)  # fmt: skip
TEACHERS = ("Ilse", "Mr. Okafor", "Dolores", "Beatriz", "Ms. Halvorsen", "Renée", "Giorgio")
ALLERGENS = ("shellfish", "peanuts", "sesame", "kiwi", "hazelnuts", "celery", "mustard")
SPORTS = ("volleyball", "five-a-side football", "tennis", "basketball", "badminton")
PARTS = ("ankle", "wrist", "knee", "shoulder")
RACES = (  # name, fastest and slowest finish in minutes
    ("Harbour Half Marathon", 95, 140), ("Riverside 10K", 44, 62),
    ("Night Run 15K", 70, 95), ("Castle Trail 21K", 120, 170),
)  # fmt: skip
CARS = ("Škoda Octavia", "Fiat Panda", "Volvo V70", "Toyota Yaris", "Citroën Berlingo", "Kia Niro")
COLOURS = ("red", "silver", "dark blue", "white", "bottle-green")
RESTAURANTS = (
    ("Tasca do Zé", "bacalhau"), ("Pho Saigon", "pho"), ("Trattoria Nonna Pia", "cacio e pepe"),
    ("La Piñata", "tacos al pastor"), ("Café Mélange", "croque monsieur"),
    ("Ramen Kaito", "tonkotsu ramen"), ("Bäckerei Kühn", "cinnamon buns"),
)  # fmt: skip
WHEN = ("today", "yesterday", "last week", "this morning", "two weeks ago")

# How each fact is stated ({w} is a WHEN phrase where the date matters).
CITY1 = (
    "Our flat in {c} is tiny, but the light in the mornings makes up for it.",
    "Rent in {c} went up again. Living here is getting expensive.",
    "Walked along the river in {c} after work. Honestly, I love living here.",
)
MOVE2 = (
    "Signed the lease {w}! We're moving to {c} at the end of next month.",
    "Big step: I signed a lease in {c} {w}. Moving day is in four weeks.",
)
MOVE3 = (
    "Last box unpacked! The new place in {c} finally feels like ours.",
    "Update: I've relocated to {c} for good. Half the space, twice the charm.",
    "Settled into {c} at last. The view from the balcony is ridiculous.",
)
PET1 = (
    "{p} is {ab}, fourteen years old and still acts like she owns the flat.",
    "Typing one-handed because {p} is asleep on my arm. Classic {b} behaviour.",
    "People always ask what {p} is. Answer: a very opinionated {b}.",
)
DEATH = (
    "{p} passed away {w}. The vet said it was {c}. She was fourteen.",
    "Sad news: we lost {p} {w}. It was {c}, nothing more they could do.",
)
PET2 = (
    "Meet {p}: {ab} we adopted from the shelter {w}. Already chewed a shoe.",
    "We're adopting {ab}! Picked him up {w}, and we've named him {p}.",
    "New family member: {p}, {ab}. Adopted him {w} and I'm already obsessed.",
)
JOB1 = (
    "Long shift today. Being {ar} is rewarding, but my feet hate me.",
    "Eight years as {ar} and I still get nervous before Mondays.",
    "Being {ar} means I never really switch off, even on weekends.",
)
JOB2 = (
    "First week working at {w} done! Being {ar} there is a totally different pace.",
    "Signed the contract: I start at {w} as {ar} on Monday.",
    "New job! I'm now {ar} at {w}, and the team seems lovely.",
)
SIBLING = (
    "My {rel} {s} is coming to stay this weekend, I need to clear the spare room.",
    "Had a two-hour call with my {rel} {s}, we never run out of things to say.",
    "My {rel} {s} turns thirty next month. Any gift ideas?",
)
SIBLING_JOB = (
    "{s} started work as {aj} this week, so proud.",
    "{s} just qualified as {aj}! We're celebrating on Saturday.",
)
SIBLING_CITY = (
    "{s} finally found an apartment in {c}, after months of looking.",
    "{s} found a place in {c}, right by the station.",
)
HOBBY = (
    "Went to my first {h} class {w}! My hands are still sore.",
    "Signed up for {h} and had the first lesson {w}. Total beginner.",
)
TEACHER = (
    "My {h} teacher, {t}, says I have patient hands.",
    "{t}, who runs my {h} class, told me to practise at home more.",
    "Our {h} teacher {t} brought cake for the whole class.",
)
ALLERGY = (
    "Allergy test results are in: {a}. That explains a lot.",
    "So it turns out I'm allergic to {a}. Goodbye to half my favourite snacks.",
)
INJURY = (
    "Sprained my {p} playing {s} {w}, so I'm on the sofa for a while.",
    "I sprained my {p} at {s} {w}. Ice, rest, and a lot of complaining.",
)
RACE = ("Finished the {r} in {t}! The last hill nearly broke me.", "{r} done: {t}.")
TRIP = (
    "Just landed in {d}! Staying at {h} for the week.",
    "Greetings from {d}. We're staying at {h}; the breakfast alone is worth it.",
)
TRIP_WITH = ("Made it to {d} with my {rel}! We're staying at {h}.",)
TRIP_REPLIES = (
    "Have a wonderful time! Any plans for the first day?",
    "That sounds amazing. Send me your must-see list and I'll help plan.",
    "Enjoy! Don't forget to try the local food.",
)
CAR = (
    "Bought a car {w}! A second-hand {col} {car} with only 40,000 km on it.",
    "We finally bought a car {w}: a {col} {car}. No more waiting for buses.",
)
RESTAURANT = ("Found the best {d} in town at {p} {w}. I'm recommending it to everyone.",)

Items = list[tuple[str, str]]  # (user text, assistant reply)


def city_mentions(other1: str, other2: str) -> Items:
    return [
        (f"My colleague just moved to {other1} and keeps sending photos of the food.",
         f"Sounds like {other1} is treating them well! Tempted to visit?"),
        (f"Thinking about a weekend in {other2}. Worth it in the off-season?",
         f"{other2} can be lovely off-season: fewer crowds and cheaper hotels."),
        ("Spent the whole evening comparing flats online, the rents are wild.",
         "Flat hunting is exhausting. Want help listing what matters most to you?"),
    ]  # fmt: skip


NEW_FLAT_MENTIONS = [
    ("The moving boxes are still stacked in the hallway.",
     "Maybe unpack one box a day? It adds up quickly."),
    ("The radiator in the new flat clanks all night.",
     "Bleeding the radiator often stops the clanking; it takes five minutes."),
    ("Our new neighbours brought us a cake, how nice is that?",
     "That's a lovely welcome to the new building!"),
]  # fmt: skip


def pet_mentions(pet: str, species: str) -> Items:
    return [
        (f"{pet} knocked a full mug off my desk this morning.",
         "Oh no! I hope it wasn't your favourite mug."),
        (f"{pet} has claimed the sunny spot by the window and won't move.",
         "Honestly, a very good choice."),
        (f"{pet} snored through the whole film last night.", "That's adorable."),
        (f"Vet check-up for {pet} on Friday, just the yearly one.",
         "Good to stay on top of those. Want a reminder on Thursday?"),
        (f"{pet} stole a sock and paraded it around the flat.", "A sock thief! Bold."),
        (f"Is it normal for a {species} to sleep most of the day?",
         f"For a {species}, long sleep is usually normal. If it changes suddenly, ask the vet."),
        (f"The {species} woke me up at 5am demanding breakfast again.",
         f"Some people move the {species}'s breakfast later by ten minutes a day."),
        (f"What's a good way to keep a {species} cool in a heatwave?",
         f"Keep your {species} in the shade, with fresh water and a damp towel to lie on."),
        (f"Bought a fancy bed for the {species}. It prefers the cardboard box.", "Classic."),
        ("Is pet insurance worth it, honestly?",
         "It depends on the pet's age and breed; for big vet bills it can pay off."),
        ("A stranger at the park asked about the breed and we chatted for twenty minutes.",
         "Pet owners always find each other!"),
    ]  # fmt: skip


WORK_MENTIONS = [
    ("Long day at work, my inbox is a disaster.",
     "Sounds draining. Want help sorting the inbox tomorrow?"),
    ("My boss booked a meeting at 5pm on a Friday. Who does that?",
     "A bold choice. Maybe ask if it could be an email?"),
    ("Can you help me say no to extra work politely?",
     "Sure: 'Thanks for thinking of me! I'm at capacity this week, but could help next month.'"),
    ("Payday tomorrow, thank goodness.", "The best day of the month!"),
    ("Work drinks tonight. I'd rather be on my sofa.",
     "Maybe go for one drink and slip out early?"),
    ("Performance review next week and I'm weirdly nervous.",
     "Jot down three things you're proud of this year; it helps."),
]  # fmt: skip


def sibling_mentions(rel: str, sib: str) -> Items:
    return [
        (f"My {rel} called for an hour about nothing, as usual.", "Those calls are the best kind."),
        (f"{sib} sent me a photo of a very wonky cake.", "Wonky cakes taste the best."),
        (f"Should I tell my {rel} I can't make the birthday dinner?",
         "Honesty is usually best; maybe suggest another date."),
        (f"{sib} is coming over for lunch on Sunday, what should I cook?",
         "Something you can prepare ahead, like a lasagne, so you get to chat."),
    ]  # fmt: skip


def hobby_mentions(hobby: str) -> Items:
    return [
        (f"My {hobby} class is cancelled this week, the studio has a leak.",
         "What a shame. Maybe practise a bit at home instead?"),
        (f"Any tips for getting better at {hobby} faster?",
         f"The quickest way to improve at {hobby} is short, regular practice and feedback."),
        (f"Thinking of buying my own {hobby} gear. Too soon?",
         "Maybe borrow or rent for a couple of months first, then buy."),
        (f"Skipped {hobby} tonight, too tired.", "Rest is part of learning too."),
    ]  # fmt: skip


HEALTH_MENTIONS = [
    ("Physio today, she gave me a whole sheet of exercises.",
     "Doing them little and often is what makes them work."),
    ("Still limping a bit, but it's getting better.", "Good progress! Don't push it too soon."),
    ("Had to send a dish back at dinner, the waiter was really kind about it.",
     "Good on the restaurant for taking it seriously."),
    ("Do antihistamines make you drowsy?",
     "Some older antihistamines do; most newer ones don't. Check the label."),
    ("Training run in the rain, 8 km, felt great.", "Rain runs are underrated!"),
    ("Do I need special shoes for a longer race?",
     "Shoes you've already trained in are best; never race in brand-new ones."),
]  # fmt: skip


def travel_mentions(other1: str, other2: str) -> Items:
    return [
        (f"Looked at flights to {other1} but the prices are wild.",
         f"Flights to {other1} are often cheaper mid-week."),
        (f"A friend says {other2} is overrated. Thoughts?",
         f"{other2} gets crowded in summer, but outside the peak season it's lovely."),
        ("Need to renew my passport before it expires.",
         "Good idea, processing can take several weeks."),
        ("Travelling with only hand luggage this time. Wish me luck.",
         "Rolling your clothes saves a surprising amount of space when travelling light."),
        ("Still jet-lagged, my body thinks it's 3am.",
         "Daylight and normal mealtimes help reset the clock."),
    ]  # fmt: skip


CAR_MENTIONS = [
    ("The car needs new tyres already, great.", "Tyres add up; worth comparing a few garages."),
    ("Parking in this neighbourhood is impossible.", "Maybe check if there's a resident permit?"),
    ("Someone dinged the car door in the supermarket car park.",
     "Annoying! Small dents can often be pushed out cheaply."),
]  # fmt: skip


def food_mentions(dish: str) -> Items:
    return [
        (f"Craving {dish} again.", "Honestly, valid."),
        (
            f"Tried making {dish} at home, it was a disaster.",
            f"Homemade {dish} takes practice. Want a simple recipe?",
        ),
    ]
