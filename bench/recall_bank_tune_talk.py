"""The tune bank's small talk: what fills a session around the facts.

Everyday requests to an assistant (dinner ideas, an email, a misbehaving laptop, a book, a
bad night, trivia, unit conversions, gifts, a to-do list), built from parts so that sessions
rarely repeat a line, with assistant replies that echo the words of the request.
"""

from __future__ import annotations

import random

from bench.recall_bank_base import Turns

ACK = (
    "That's big news! How are you feeling about it?",
    "Thanks for telling me. Anything I can help with?",
    "Oh wow. Want to talk it through?",
)
RECAP_ASKS = (
    "Can you keep a note of that for me?",
    "remember that for me, ok?",
    "Could you jot that down so I don't forget?",
)
OPEN_MORNING = ("morning!", "good morning!", "hey, early start today", "morning :)")
OPEN_DAY = ("hey", "hi again", "hello", "ok I'm back", "hey, quick question", "afternoon!")
OPEN_EVENING = ("evening :)", "hey, still up?", "hi, long day", "good evening")
OPEN_ASSISTANT = (
    "Hi! What's up?",
    "Good to see you again. What can I do for you?",
    "Hey! How's your day going?",
    "Hello! What's on your mind?",
)
FOLLOW_UPS = (
    "Want me to go into more detail?",
    "Shall I make a short list?",
    "Let me know how it goes!",
    "Does that help?",
    "Happy to adjust it if you tell me more.",
)
REPLY_FOLLOW_UPS = (
    "How are you feeling about it?",
    "Anything I can help with?",
    "Tell me more whenever you like.",
    "Want to talk it through?",
    "I'm here if you need a hand with anything.",
)
INGREDIENTS = (
    "chickpeas", "spinach", "feta", "leftover rice", "eggs", "a tin of tomatoes", "halloumi",
    "sweet potatoes", "lentils", "mushrooms", "courgettes", "smoked salmon", "frozen peas",
    "gnocchi", "tofu",
)  # fmt: skip
DISHES = ("frittata", "traybake", "one-pot stew", "stir-fry", "curry", "grain bowl", "pasta bake")
METHODS = (
    "fry the aromatics first, then add everything else and let it simmer for twenty minutes",
    "roast everything at 200°C for about 25 minutes, turning once",
    "cook it all in one hot pan and finish with a squeeze of lemon",
)
RECIPIENTS = (
    "my landlord", "my kid's school", "my manager", "the plumber", "the building manager",
    "our neighbour",
)  # fmt: skip
ISSUES = (
    "the broken boiler", "the rent increase", "next week's deadline", "the parking space",
    "the noise late at night", "the leaking tap", "the missing parcel",
)  # fmt: skip
DEVICES = ("laptop", "phone", "router", "printer", "smart TV")
PROBLEMS = (
    "freezing", "dropping the wifi", "restarting on its own",
    "running out of battery by lunchtime", "getting really hot",
)  # fmt: skip
CAUSES = (
    "a pending update", "a nearly full disk", "an app running in the background",
    "a loose cable", "dust in the fan", "an old driver",
)  # fmt: skip
FIXES = (
    "restarting it and installing any pending updates",
    "checking which apps use the most resources",
    "resetting the network settings",
    "cleaning the vents with a bit of compressed air",
)
BOOKS = (
    "Piranesi", "The Remains of the Day", "Project Hail Mary", "Circe", "A Gentleman in Moscow",
    "Station Eleven", "The Overstory", "Klara and the Sun", "Pachinko", "The Secret History",
)  # fmt: skip
NIGHTS = (
    "the neighbours had a party", "my brain wouldn't switch off", "it was way too hot",
    "a mosquito kept buzzing around", "I drank coffee at 6pm like an idiot",
)  # fmt: skip
SLEEP_TIPS = (
    "A short walk in daylight can help reset your rhythm.",
    "Try keeping screens out of the bedroom for the last half hour.",
    "Earplugs and a cooler room make a surprising difference.",
    "Maybe an early night tonight, and go easy on caffeine after lunch.",
)
TRIVIA = (
    ("Quick one: why is the sky blue?",
     "Sunlight scatters off air molecules, and blue light scatters most, so the sky looks blue."),
    ("How many bones are in the human body?", "An adult has 206 bones."),
    ("Is a tomato a fruit or a vegetable?",
     "Botanically a fruit, but in the kitchen it's treated as a vegetable."),
    ("What's the difference between weather and climate?",
     "Weather is what happens day to day; climate is the average over decades."),
    ("Why do onions make you cry?",
     "Cutting them releases a gas that irritates your eyes and makes them water."),
    ("How long should I boil an egg for a soft yolk?",
     "About six minutes in boiling water, then straight into cold water."),
    ("What's a good stretch for a stiff neck?",
     "Slowly tilt your ear towards your shoulder and hold for twenty seconds on each side."),
    ("Can you explain compound interest simply?",
     "You earn interest on your interest: each year's gain is added to what earns next year."),
    ("What's the capital of Australia again?", "Canberra, not Sydney, which surprises people."),
)  # fmt: skip
WEATHER = ("pouring with rain", "grey and drizzly", "boiling hot", "freezing cold", "so windy")
MOODS = ("going stir crazy", "so unmotivated", "craving soup", "stuck indoors")
IDEAS = (
    "a museum, or a café with a good book",
    "a short home workout and a hot shower",
    "a big batch of soup for the week",
    "a film marathon under a blanket",
)
GIFTS = (
    ("coffee", "a hand grinder", "a bag of beans from a local roaster"),
    ("hiking", "a good pair of wool socks", "a trail guidebook"),
    ("board games", "a new co-op game", "a card game that fits in a pocket"),
    ("baking", "a proper digital scale", "a nice cookbook"),
    ("plants", "a self-watering pot", "a rare cutting"),
)
TASKS = (
    "do the laundry", "go to the post office", "call the bank", "buy groceries",
    "clean the bathroom", "answer emails", "fix the wobbly shelf", "return a parcel",
)  # fmt: skip
SHORT = (
    ("thanks, that helps!", "Anytime!"),
    ("ok perfect", "Great, let me know how it goes."),
    ("haha fair enough", "😄"),
    ("one sec, someone's at the door", "No rush!"),
    ("good to know", "Happy to help."),
)


EXERCISES = (
    "squats", "push-ups", "lunges", "a plank", "mountain climbers", "glute bridges",
    "jumping jacks", "tricep dips on a chair", "wall sits",
)  # fmt: skip
FILMS = {
    "cosy": ("Paddington 2", "Amélie", "The Grand Budapest Hotel", "Chef"),
    "rainy": ("Spirited Away", "The Princess Bride", "Knives Out", "Little Women"),
    "tense": ("Arrival", "Parasite", "Sicario", "Gone Girl"),
    "silly": ("Hot Fuzz", "What We Do in the Shadows", "Game Night", "Galaxy Quest"),
}
NEWS = (
    ("I finally fixed the squeaky door", "Victory! Squeaky doors are the worst."),
    (
        "the café downstairs started doing fresh croissants",
        "That's dangerous news for your wallet.",
    ),
    ("I found twenty euros in an old coat", "The best kind of surprise."),
    ("my plants survived the week I was away", "Impressive, they clearly like you."),
    ("the bus was on time for once", "Mark the date!"),
    ("I ran into an old school friend at the supermarket", "Small world! Did you catch up?"),
    ("I cleaned out the whole fridge", "Very satisfying. What was the oldest thing in there?"),
)
DIFFERENCES = (
    (
        "baking soda",
        "baking powder",
        "baking soda needs an acid to react, while baking powder already contains one",
    ),
    ("a latte", "a flat white", "a flat white has less milk and a thinner layer of foam"),
    ("an alligator", "a crocodile", "alligators have a wider, U-shaped snout"),
    ("a virus", "bacteria", "bacteria are living cells; a virus needs a host cell to copy itself"),
    ("a cold", "the flu", "the flu usually comes on faster, with fever and aches"),
    ("jam", "marmalade", "marmalade is made from citrus, peel included"),
)
MORE = {
    "cook": (
        "Season at the end, and taste as you go.",
        "A handful of herbs on top makes it feel fancier than it is.",
        "It keeps well, so make extra for lunch tomorrow.",
    ),
    "tech": (
        "If that doesn't help, a backup and a fresh install usually does.",
        "It's also worth checking whether it only happens with one app.",
        "And if it's still under warranty, the shop should look at it for free.",
    ),
    "sleep": (
        "One bad night is not a pattern, so don't worry too much.",
        "A consistent wake-up time helps more than an early bedtime.",
    ),
    "books": (
        "The first is a bit slower to start, but it pays off in the second half.",
        "Both are on most library apps, so you could try a chapter before committing.",
        "If you'd rather have something shorter in between, a short story collection works well.",
    ),
    "weather": (
        "Days like this are also perfect for the small jobs you keep putting off.",
        "And a warm drink at the window counts as an activity, I promise.",
    ),
    "gift": (
        "Wrapping it with a handwritten note makes any of them feel more personal.",
        "If you're unsure, a voucher from a shop they love is never wrong.",
    ),
    "plan": (
        "Batching the errands that are near each other saves a surprising amount of time.",
        "Leave a bit of slack in between; something always takes longer than expected.",
    ),
    "workout": (
        "Warm up for a couple of minutes first, and keep a glass of water nearby.",
        "If anything hurts, swap it for an easier version rather than pushing through.",
    ),
    "film": (
        "Both are around two hours, so good for a weeknight.",
        "Popcorn optional but strongly recommended.",
    ),
    "trivia": (
        "Fun fact to bring up at your next dinner party.",
        "It's one of those things everyone half-remembers from school.",
    ),
}


def opener(rng: random.Random, hour: int) -> Turns:
    greetings = OPEN_MORNING if hour < 12 else OPEN_DAY if hour < 17 else OPEN_EVENING
    return [("user", rng.choice(greetings)), ("assistant", rng.choice(OPEN_ASSISTANT))]


def _longer(rng: random.Random, text: str, more: tuple[str, ...] = ()) -> str:
    """An assistant reply, sometimes with one more sentence and a follow-up question."""
    if more and rng.random() < 0.6:
        text += " " + rng.choice(more)
    if rng.random() < 0.5:
        text += " " + rng.choice(FOLLOW_UPS)
    return text


def filler(rng: random.Random) -> Turns:
    """One small-talk exchange (two turns, sometimes four)."""
    kind = rng.randrange(15)
    if kind == 0:
        a, b, c = rng.sample(INGREDIENTS, 3)
        dish = rng.choice(DISHES)
        turns: Turns = [
            ("user", rng.choice((
                f"What can I make for dinner with {a}, {b} and {c}?",
                f"I've got {a} and {b} in the fridge. Quick dinner idea?",
                f"Lazy dinner idea using {a}? I also have {b}.",
            ))),
            ("assistant", _longer(rng, f"With {a} and {b} you could make a quick {dish}: "
             f"{rng.choice(METHODS)}.", MORE["cook"])),
        ]  # fmt: skip
        if rng.random() < 0.4:
            turns += [
                ("user", f"Can I skip the {b}?"),
                ("assistant", f"Sure, the {dish} works without {b}; use a bit more {a}."),
            ]
        return turns
    if kind == 1:
        who, issue = rng.choice(RECIPIENTS), rng.choice(ISSUES)
        body = rng.choice((
            f"I'm writing about {issue}. Could we find a time this week to sort it out?",
            f"I wanted to follow up on {issue}, which is still not resolved.",
            f"Just a quick note about {issue}: could you let me know the next steps?",
        ))  # fmt: skip
        return [
            ("user", rng.choice((f"Can you help me write a short email to {who} about {issue}?",
                                 f"Need to email {who} about {issue}, can you draft something?"))),
            ("assistant", f"Of course. Here's a draft:\n\nHi,\n\n{body} "
             f"Thanks for your help.\n\n{rng.choice(('Best wishes', 'Kind regards', 'Thanks'))}"),
        ]  # fmt: skip
    if kind == 2:
        device, problem = rng.choice(DEVICES), rng.choice(PROBLEMS)
        c1, c2 = rng.sample(CAUSES, 2)
        return [
            ("user", f"My {device} keeps {problem}. Any idea why?"),
            ("assistant", _longer(rng, f"When a {device} keeps {problem}, the usual suspects "
             f"are {c1} or {c2}. I'd start by {rng.choice(FIXES)}.", MORE["tech"])),
        ]  # fmt: skip
    if kind == 3:
        book, r1, r2 = rng.sample(BOOKS, 3)
        return [
            ("user", rng.choice((f"Just finished {book}. What should I read next?",
                                 f"Loved {book}! Anything similar?"))),
            ("assistant", _longer(rng, f"If you liked {book}, try {r1} or {r2}; both have a "
             "similar feel.", MORE["books"])),
        ]  # fmt: skip
    if kind == 4:
        return [
            ("user", f"{rng.choice(('Slept badly again', 'Barely slept'))}, {rng.choice(NIGHTS)}."),
            ("assistant", _longer(rng, f"{rng.choice(('Sorry to hear that.', 'Rough night.'))} "
             f"{rng.choice(SLEEP_TIPS)}", MORE["sleep"])),
        ]  # fmt: skip
    if kind == 5:
        question, answer = rng.choice(TRIVIA)
        return [("user", question), ("assistant", _longer(rng, answer, MORE["trivia"]))]
    if kind == 6:
        weather = rng.choice(WEATHER)
        return [
            ("user", f"It's {weather} here again and I'm {rng.choice(MOODS)}."),
            (
                "assistant",
                _longer(
                    rng, f"When it's {weather}, maybe try {rng.choice(IDEAS)}?", MORE["weather"]
                ),
            ),
        ]
    if kind == 7:
        k = rng.randint(2, 12)
        return rng.choice((
            [("user", f"How many grams are in {k} ounces?"),
             ("assistant", f"{k} ounces is about {k * 28.35:.0f} grams.")],
            [("user", f"How far is {k} miles in kilometres?"),
             ("assistant", f"{k} miles is about {k * 1.609:.1f} km.")],
            [("user", f"How many teaspoons in {k} tablespoons?"),
             ("assistant", f"{k} tablespoons is {3 * k} teaspoons.")],
        ))  # fmt: skip
    if kind == 8:
        thing, idea1, idea2 = rng.choice(GIFTS)
        budget = rng.choice((20, 30, 50))
        return [
            ("user", f"Gift idea for a friend who loves {thing}? Budget around {budget} euros."),
            ("assistant", _longer(rng, f"For someone who loves {thing}, with {budget} euros you "
             f"could get {idea1} or {idea2}.", MORE["gift"])),
        ]  # fmt: skip
    if kind == 9:
        day = rng.choice(("Saturday", "tomorrow", "my day off"))
        t1, t2, t3 = rng.sample(TASKS, 3)
        return [
            ("user", f"Can you help me plan {day}? I need to {t1}, {t2} and {t3}."),
            ("assistant", _longer(rng, f"Sure: {t1} first thing, then {t2}; you can {t3} in the "
             "afternoon.", MORE["plan"])),
        ]  # fmt: skip
    if kind == 10:
        minutes, rounds = rng.choice((10, 15, 20)), rng.randint(2, 4)
        moves = ", ".join(rng.sample(EXERCISES, 3))
        return [
            ("user", rng.choice((
                f"Can you give me a quick {minutes}-minute workout I can do at home?",
                f"No time for the gym today. {minutes} minutes of exercise at home?",
                f"Need to move a bit. Something I can do in {minutes} minutes, no equipment?",
            ))),
            ("assistant", _longer(rng, f"Here's a {minutes}-minute circuit: {moves}. Do each for "
             f"40 seconds, rest 20 seconds, and repeat it {rounds} times.", MORE["workout"])),
        ]  # fmt: skip
    if kind == 11:
        mood = rng.choice(sorted(FILMS))
        f1, f2 = rng.sample(FILMS[mood], 2)
        return [
            ("user", rng.choice((f"Film recommendation for a {mood} evening?",
                                 f"In the mood for something {mood} to watch tonight. Ideas?"))),
            ("assistant", _longer(rng, f"For a {mood} evening: {f1}, or {f2} if you want "
             "something a bit different.", MORE["film"])),
        ]  # fmt: skip
    if kind == 12:
        news, reaction = rng.choice(NEWS)
        return [("user", rng.choice((f"Guess what, {news}!", f"Random update: {news}."))),
                ("assistant", reaction)]  # fmt: skip
    if kind == 13:
        x, y, why = rng.choice(DIFFERENCES)
        return [
            ("user", f"What's the difference between {x} and {y}?"),
            ("assistant", _longer(rng, f"The short version: {why}.")),
        ]
    return list(zip(("user", "assistant"), rng.choice(SHORT), strict=True))


# The Chinese voice's small talk.
ZH_TIPS = ("先大火快炒，再转小火", "调料提前调好，下锅后动作要快", "少放点油，最后再调味")
ZH_CHEER = ("在家看本书也挺好", "煮一锅汤犒劳自己吧", "做点简单的拉伸会舒服些")
ZH_DISHES = ("番茄炒蛋", "青椒肉丝", "麻婆豆腐", "酸辣土豆丝", "红烧茄子", "蛋炒饭")
ZH_SHOWS = ("繁花", "漫长的季节", "狂飙", "人世间", "山海情", "去有风的地方")
ZH_TRIVIA = (
    ("天空为什么是蓝色的？", "阳光被空气分子散射，蓝光散射得最多，所以天空看起来是蓝的。"),
    ("人一共有多少块骨头？", "成年人有206块骨头。"),
    ("西红柿是水果还是蔬菜？", "从植物学上说是水果，但做菜时一般当蔬菜。"),
    ("鸡蛋煮几分钟是溏心的？", "水开后煮六分钟左右，然后马上放进冷水里。"),
    ("复利是什么意思？简单说说。", "利息也会生利息：每年的收益加进本金，下一年一起生息。"),
)
ZH_WEATHER = ("又下雨了", "热得要命", "冷死了", "一直阴天")
ZH_OPEN = (("在吗", "在的，有什么可以帮你？"), ("我回来了", "欢迎回来，想聊点什么？"))
ZH_OPEN_MORNING = ("早上好！", "早上好！今天过得怎么样？")
ZH_OPEN_EVENING = ("晚上好", "晚上好！有什么事吗？")
ZH_SHORT = (
    ("好的，谢谢！", "不客气！"),
    ("哈哈，有道理", "😄"),
    ("明白了", "好的！"),
)


def zh_opener(rng: random.Random, hour: int) -> Turns:
    timely = ZH_OPEN_MORNING if hour < 11 else ZH_OPEN_EVENING if hour >= 18 else ZH_OPEN[0]
    user, assistant = rng.choice((*ZH_OPEN, timely))
    return [("user", user), ("assistant", assistant)]


def zh_filler(rng: random.Random) -> Turns:
    kind = rng.randrange(7)
    if kind == 0:
        dish = rng.choice(ZH_DISHES)
        return [
            ("user", f"今晚想做{dish}，有什么窍门吗？"),
            (
                "assistant",
                f"做{dish}的关键是火候：{rng.choice(ZH_TIPS)}。",
            ),
        ]
    if kind == 1:
        show, other = rng.sample(ZH_SHOWS, 2)
        return [
            ("user", f"刚看完《{show}》，还有什么类似的推荐吗？"),
            ("assistant", f"喜欢《{show}》的话，可以试试《{other}》，风格挺像的。"),
        ]
    if kind == 2:
        question, answer = rng.choice(ZH_TRIVIA)
        return [("user", question), ("assistant", answer)]
    if kind == 3:
        weather = rng.choice(ZH_WEATHER)
        return [
            ("user", f"今天{weather}，什么都不想干。"),
            (
                "assistant",
                f"{weather}的日子，{rng.choice(ZH_CHEER)}。",
            ),
        ]
    if kind == 4:
        device = rng.choice(("手机", "电脑", "路由器", "打印机"))
        return [
            ("user", f"我的{device}老是卡，怎么办？"),
            ("assistant", f"{device}卡顿通常是后台程序太多或者存储快满了，先重启再清理一下试试。"),
        ]
    if kind == 5:
        k = rng.randint(2, 12)
        return [
            ("user", f"{k}英里是多少公里？"),
            ("assistant", f"{k}英里大约是{k * 1.609:.1f}公里。"),
        ]
    return list(zip(("user", "assistant"), rng.choice(ZH_SHORT), strict=True))
