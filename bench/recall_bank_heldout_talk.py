"""The held-out bank's small talk, distinct from the tune bank's.

Spreadsheet formulas, phrases to translate, board-game rules, small repairs, savings sums,
podcasts, commutes, playlists, a child's homework, card messages, packing lists, word
choices, bill splitting, temperatures, names for things, summaries and the odd joke.
"""

from __future__ import annotations

import math
import random

from bench.recall_bank_base import Turns

ACK = (
    "Oh, that's quite something. How do you feel?",
    "Thank you for sharing that with me.",
    "Wow, okay! What happens next?",
)
RECAP_ASKS = (
    "Please remember this one.",
    "Save that in your memory, would you?",
    "Don't let me forget that, ok?",
)
REPLY_FOLLOW_UPS = (
    "What's the next step?",
    "I'd love to hear how it unfolds.",
    "Is there anything you'd like me to look up?",
    "How did everyone else take it?",
)
TRIP_REPLIES = (
    "Safe travels! Take lots of photos.",
    "Oh, lovely. Is it your first time there?",
    "Enjoy every minute, and send a photo or two.",
)
OPEN_MORNING = ("hiya, early one today", "rise and shine, it's me", "hej! coffee in hand")
OPEN_DAY = ("yo", "hi there", "back again with a question", "got a minute?", "psst")
OPEN_EVENING = ("late one, sorry", "hi, can't sleep", "evening, assistant")
OPEN_ASSISTANT = (
    "Always. What do you need?",
    "Hi there! Ready when you are.",
    "Of course. Go ahead.",
    "Hello again! Fire away.",
)
EXTRA = (
    "Shout if anything is unclear and I'll walk you through it step by step.",
    "I can go deeper on any of that if you tell me a bit more about the situation.",
    "Hope that sorts it out; if not, tell me what happened and we'll try something else.",
    "Tell me if you want a different angle, or a shorter version you can pass on.",
    "If it helps, I can also turn that into a little checklist.",
)
TAILS = (
    " Asking for a friend.",
    " No rush.",
    " Sorry, random question.",
    " Quick one before my meeting.",
    " My brain is fried today.",
    " Google was no help.",
)
FORMULAS = (
    ("add up a column", "=SUM(A2:A50), with your own range"),
    ("count the cells that say 'paid'", '=COUNTIF(B:B, "paid")'),
    ("look up a price from another sheet", "=VLOOKUP(A2, Prices!A:B, 2, FALSE), or XLOOKUP"),
    ("get the average while skipping blanks", "=AVERAGE(C2:C99), which already skips blanks"),
    ("join first and last names", '=A2&" "&B2, or TEXTJOIN for a whole row'),
)
PHRASES = (
    ("thank you very much", "French", "merci beaucoup"),
    ("where is the station", "Spanish", "¿dónde está la estación?"),
    ("I'd like a coffee", "Italian", "vorrei un caffè"),
    ("see you tomorrow", "German", "bis morgen"),
    ("how much does it cost", "French", "combien ça coûte ?"),
    ("excuse me", "Spanish", "perdone, or disculpe"),
    ("good night", "German", "gute Nacht"),
    ("the bill, please", "Italian", "il conto, per favore"),
)
RULES = (
    ("Catan", "can you trade with the bank on your first turn",
     "Yes: four of a kind for one, any time it's your turn, the first included."),
    ("Ticket to Ride", "does a route need cards of a single colour",
     "Yes, except grey routes, which take any one colour."),
    ("Carcassonne", "can two farmers end up in the same field",
     "Only if fields are joined later; you can't place straight into an occupied one."),
    ("Uno", "can you stack draw-two cards",
     "Not in the official rules, though plenty of families play it that way."),
    ("chess", "can a pawn capture en passant a turn later",
     "No, only on the very next move."),
)  # fmt: skip
REPAIRS = (
    ("unclog a sink without chemicals",
     "Boiling water first, then baking soda and vinegar, then a plunger."),
    ("fill a small hole in plaster", "Filler, let it dry, sand it flush, then paint over it."),
    ("stop a door from squeaking", "A drop of oil or petroleum jelly on the hinge pin."),
    ("hang a heavy mirror", "Find a stud, or use heavy-duty anchors rated for the weight."),
    ("re-seal around the bathtub",
     "Cut out the old sealant, clean and dry the joint, then run a fresh bead of silicone."),
)  # fmt: skip
PODCASTS = {
    "history": ("Tiny Histories", "The Long Now of Things"),
    "science": ("Lab Notes", "Curious Matter"),
    "true crime": ("Cold Case Files", "The Alibi"),
    "design": ("Form & Function", "Kerning Hour"),
    "football": ("Half Time Talk", "The False Nine"),
}
COMMUTES = (
    "Train is delayed again, {k} minutes this time.",
    "Stuck in traffic on the ring road, {k} minutes and counting.",
    "The tram broke down and we all had to walk the last {k} minutes.",
)
COMMUTE_REPLIES = (
    "Commutes like that are the worst. Got something good to listen to?",
    "Ugh. Maybe worth trying a different route for a week?",
    "Sorry! At least it's time for a podcast episode.",
)
SONGS = (
    "Beyoncé – Halo", "Sigur Rós – Hoppípolla", "Björk – Jóga", "Rosalía – Malamente",
    "Stromae – Alors on danse", "Daft Punk – One More Time", "Khruangbin – María También",
    "Bonobo – Kerala", "Fleetwood Mac – Dreams", "Nina Simone – Feeling Good",
)  # fmt: skip
ACTIVITIES = ("cooking", "a long drive", "cleaning the flat", "a rainy Sunday", "focusing")
HOMEWORK = (
    ("what photosynthesis is",
     "Plants use sunlight, water and carbon dioxide to make sugar, and they release oxygen."),
    ("why the moon changes shape",
     "It doesn't: we see different amounts of its sunlit half as it goes around us."),
    ("how many continents there are", "Seven in the usual count, though some places say six."),
    ("what 7 times 8 is", "56. A trick: 5, 6, 7, 8, so 56 = 7 × 8."),
    ("why leaves change colour in autumn",
     "The green chlorophyll breaks down and the yellow and orange pigments show through."),
)  # fmt: skip
CARDS = (
    ("birthday", "Happy birthday! May the year ahead be as kind to you as you are to others."),
    ("farewell", "It won't be the same without you. Keep in touch!"),
    ("get-well", "Thinking of you and hoping you're back on your feet soon."),
    ("thank-you", "Thank you so much, it meant more than you know."),
)
RECIPIENTS = ("a colleague", "my neighbour", "my old teacher", "a friend from choir")
PACKING = {
    "camping": "a sleeping bag, a head torch, layers, a rain jacket and a small first-aid kit",
    "city sightseeing": "comfy shoes, a light jacket, a power bank and a reusable bottle",
    "a work trip": "one smart outfit, chargers, your badge and a notebook",
    "a beach holiday": "sunscreen, a hat, swimwear, sandals and a paperback",
}
JOKES = (
    "Why don't skeletons fight each other? They don't have the guts.",
    "I told my suitcase there's no holiday this year. Now I'm dealing with emotional baggage.",
    "What do you call a fake noodle? An impasta.",
    "Why did the scarecrow win an award? He was outstanding in his field.",
)
COMMUTE_LINES = ("the 7:42", "line 4", "the S3", "the number 12 bus", "the ring road")
COMMUTE_WHY = ("a signal failure", "a broken-down lorry", "'staff shortages'", "leaves on the line")
USAGE = (
    ("affect", "effect", "'affect' is usually the verb and 'effect' the noun"),
    ("fewer", "less", "'fewer' for things you can count, 'less' for amounts"),
    ("who", "whom", "'whom' is the object: to whom, for whom; 'who' does the action"),
    ("its", "it's", "'it's' means 'it is'; 'its' is the possessive"),
    ("then", "than", "'than' compares; 'then' is about time"),
    ("lie down", "lay down", "you lie down yourself, but you lay something down"),
)
THINGS_TO_NAME = {
    "home wifi network": ("Pretty Fly for a Wifi", "The LAN Before Time", "Bill Wi the Science Fi"),
    "pub quiz team": ("Quiztopher Columbus", "The Know-It-Ales", "Les Quizérables"),
    "rowing boat": ("Row-mantic", "Oar Inspiring", "Knot Today"),
    "five-a-side team": ("Ctrl Alt Defeat", "Pitch Perfect", "Net Positive"),
}
NOTICES = (
    "the new recycling rules in our building", "the parking changes on our street",
    "the school's new term dates", "the gym's updated opening hours",
    "the water being off on Thursday", "the landlord's note about the bike shed",
)  # fmt: skip
SYNONYMS = (
    ("happy", "cheerful, content, delighted"),
    ("tired", "weary, drained, worn out"),
    ("important", "crucial, key, significant"),
    ("big", "vast, hefty, sizeable"),
    ("interesting", "intriguing, compelling, absorbing"),
)
SHORT = (
    ("cheers!", "You're welcome!"),
    ("brb", "Take your time."),
    ("lol", "😂"),
    ("got it", "Great."),
    ("nice one", "Glad it helped."),
)


def opener(rng: random.Random, hour: int) -> Turns:
    greetings = OPEN_MORNING if hour < 11 else OPEN_DAY if hour < 18 else OPEN_EVENING
    return [("user", rng.choice(greetings)), ("assistant", rng.choice(OPEN_ASSISTANT))]


def _plus(rng: random.Random, text: str) -> str:
    return f"{text} {rng.choice(EXTRA)}" if rng.random() < 0.7 else text


def filler(rng: random.Random) -> Turns:
    """One small-talk exchange; the question sometimes trails off with an aside."""
    turns = _exchange(rng)
    if len(turns[0][1]) > 20 and rng.random() < 0.3:
        turns[0] = ("user", turns[0][1] + rng.choice(TAILS))
    return turns


def _exchange(rng: random.Random) -> Turns:
    kind = rng.randrange(19)
    if kind == 0:
        task, formula = rng.choice(FORMULAS)
        return [
            ("user", f"What's the spreadsheet formula to {task}?"),
            ("assistant", _plus(rng, f"To {task}, use {formula}.")),
        ]
    if kind == 1:
        phrase, language, said = rng.choice(PHRASES)
        return [
            ("user", f"How do you say '{phrase}' in {language}?"),
            ("assistant", _plus(rng, f"In {language}, '{phrase}' is '{said}'.")),
        ]
    if kind == 2:
        game, question, answer = rng.choice(RULES)
        return [
            ("user", f"Settle an argument: in {game}, {question}?"),
            ("assistant", _plus(rng, f"In {game}: {answer}")),
        ]
    if kind == 3:
        task, how = rng.choice(REPAIRS)
        turns: Turns = [("user", f"How do I {task}?"), ("assistant", _plus(rng, how))]
        if rng.random() < 0.3:
            turns += [("user", "And if that doesn't work?"),
                      ("assistant", "Then it's probably time to call someone in.")]  # fmt: skip
        return turns
    if kind == 4:
        monthly, goal = rng.choice((50, 100, 150, 200, 250)), rng.choice((1000, 1500, 2000, 3000))
        months = math.ceil(goal / monthly)
        return [
            ("user", f"If I put away {monthly} a month, how long until I have {goal}?"),
            ("assistant", _plus(rng, f"Putting away {monthly} a month gets you to {goal} in "
             f"{months} months.")),
        ]  # fmt: skip
    if kind == 5:
        topic = rng.choice(sorted(PODCASTS))
        first, second = PODCASTS[topic]
        return [
            ("user", f"Any good podcast about {topic}?"),
            ("assistant", _plus(rng, f"For {topic}, a lot of people like {first}; "
             f"{second} is worth a try too.")),
        ]  # fmt: skip
    if kind == 6:
        line, why = rng.choice(COMMUTE_LINES), rng.choice(COMMUTE_WHY)
        text = rng.choice(COMMUTES).format(k=rng.randint(10, 45))
        return [
            ("user", f"{text} {line.capitalize()} again, because of {why}."),
            ("assistant", f"{rng.choice(COMMUTE_REPLIES)} Delays from {why} are maddening."),
        ]
    if kind == 7:
        activity = rng.choice(ACTIVITIES)
        songs = rng.sample(SONGS, 3)
        return [
            ("user", f"Make me a short playlist for {activity}?"),
            ("assistant", _plus(rng, f"For {activity}: {songs[0]}, {songs[1]} and {songs[2]}.")),
        ]
    if kind == 8:
        question, answer = rng.choice(HOMEWORK)
        return [
            ("user", f"My kid asked me {question} and I blanked."),
            ("assistant", _plus(rng, answer)),
        ]
    if kind == 9:
        occasion, message = rng.choice(CARDS)
        return [
            ("user", f"Help me word a {occasion} card for {rng.choice(RECIPIENTS)}?"),
            ("assistant", _plus(rng, f"How about: '{message}'")),
        ]
    if kind == 10:
        trip = rng.choice(sorted(PACKING))
        days = rng.randint(2, 10)
        return [
            ("user", f"Packing list for {days} days of {trip}?"),
            ("assistant", _plus(rng, f"For {days} days of {trip}: {PACKING[trip]}.")),
        ]
    if kind == 11 and rng.random() < 0.3:
        return [("user", rng.choice(("Tell me a joke, I need it.", "cheer me up?"))),
                ("assistant", rng.choice(JOKES))]  # fmt: skip
    if kind == 12:
        x, y, why = rng.choice(USAGE)
        return [
            ("user", f"Is it '{x}' or '{y}' in this sentence? I always mix them up."),
            ("assistant", _plus(rng, f"Easy to mix up: {why}. Paste the sentence and I'll check.")),
        ]
    if kind == 13:
        thing = rng.choice(sorted(THINGS_TO_NAME))
        ideas = THINGS_TO_NAME[thing]
        return [
            ("user", f"We need a name for our {thing}. Go."),
            ("assistant", f"For a {thing}: '{ideas[0]}', '{ideas[1]}' or '{ideas[2]}'."),
        ]
    if kind == 14:
        notice = rng.choice(NOTICES)
        return [
            ("user", f"Can you sum up {notice} in two lines? The notice is so long."),
            ("assistant", _plus(rng, f"In short, about {notice}: the changes take effect next "
             "month, and you only need to act if the notice asks you to reply.")),
        ]  # fmt: skip
    if kind == 15:
        word, others = rng.choice(SYNONYMS)
        return [
            ("user", f"Another word for '{word}'? I've used it three times in one paragraph."),
            ("assistant", _plus(rng, f"Instead of '{word}', try {others}.")),
        ]
    if kind == 16:
        total, people = rng.randint(40, 260), rng.randint(2, 8)
        tip = rng.choice((0, 10, 12, 15))
        share = total * (1 + tip / 100) / people
        return [
            ("user", f"Bill is {total}, {people} of us, {tip}% tip. How much each?"),
            ("assistant", f"With a {tip}% tip that's {total * (1 + tip / 100):.2f} in total, "
             f"so {share:.2f} each."),
        ]  # fmt: skip
    if kind == 17:
        fahrenheit = rng.choice((41, 50, 59, 68, 77, 86, 95, 104))
        return [
            ("user", f"A friend in Chicago says it's {fahrenheit}°F there. Celsius, please?"),
            ("assistant", f"{fahrenheit}°F is {(fahrenheit - 32) * 5 / 9:.0f}°C."),
        ]
    return list(zip(("user", "assistant"), rng.choice(SHORT), strict=True))


# The Japanese voice's small talk.
JA_TIPS = (
    (
        "敬語のメールで「了解しました」は失礼？",
        "目上の方には「承知しました」「かしこまりました」が無難です。",
    ),
    ("スマホの充電がすぐ減る。", "画面の明るさとバックグラウンド更新を見直すとかなり変わります。"),
    ("寝つきが悪い。", "寝る一時間前にスマホを置いて、部屋を少し暗くしてみてください。"),
    ("味噌汁の出汁、顆粒でもいい？", "もちろんです。最後に少し鰹節を足すと香りが立ちます。"),
    ("肩こりがひどい。", "一時間に一回、肩を回すだけでも違いますよ。"),
    ("洗濯物が部屋干しで臭う。", "干す間隔をあけて、扇風機で風を当てると早く乾きます。"),
)
JA_CHEER = (
    "温かいお茶でひと休みしましょう",
    "家でできるストレッチはどうですか",
    "好きな音楽をかけてみては",
)
JA_ANIME = (
    "葬送のフリーレン",
    "スパイファミリー",
    "君の名は。",
    "千と千尋の神隠し",
    "ハイキュー!!",
)
JA_OPEN = (("ちょっといい？", "はい、どうぞ。"), ("ただいま", "おかえりなさい！何かありましたか？"))
JA_OPEN_MORNING = ("おはよう", "おはようございます！今日はどんな一日ですか？")
JA_OPEN_EVENING = ("こんばんは", "こんばんは！今日もお疲れさまでした。")
JA_SHORT = (
    ("ありがとう！", "どういたしまして。"),
    ("なるほどね", "参考になればうれしいです。"),
    ("了解！", "よかったです。"),
)


def ja_opener(rng: random.Random, hour: int) -> Turns:
    timely = JA_OPEN_MORNING if hour < 11 else JA_OPEN_EVENING if hour >= 18 else JA_OPEN[0]
    user, assistant = rng.choice((*JA_OPEN, timely))
    return [("user", user), ("assistant", assistant)]


def ja_filler(rng: random.Random) -> Turns:
    kind = rng.randrange(5)
    if kind == 0:
        question, answer = rng.choice(JA_TIPS)
        return [("user", question), ("assistant", answer)]
    if kind == 1:
        title, other = rng.sample(JA_ANIME, 2)
        return [
            ("user", f"『{title}』見終わった。次は何がいい？"),
            ("assistant", f"『{title}』が好きなら『{other}』もおすすめです。"),
        ]
    if kind == 2:
        yen = rng.choice((500, 1200, 3000, 8000))
        return [
            ("user", f"{yen}円ってドルでいくらくらい？"),
            ("assistant", f"レートによりますが、{yen}円はだいたい{yen / 150:.0f}ドル前後です。"),
        ]
    if kind == 3:
        weather = rng.choice(("雨ばっかり", "暑すぎる", "寒くて布団から出られない"))
        return [
            ("user", f"最近{weather}。"),
            (
                "assistant",
                f"{weather}と気分も下がりますよね。{rng.choice(JA_CHEER)}。",
            ),
        ]
    return list(zip(("user", "assistant"), rng.choice(JA_SHORT), strict=True))
