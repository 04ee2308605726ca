"""The facts the archive benchmark plants for its recall test: 16 templates of something a
person tells the bot once ("the spare key is hidden under the {object} by the back door"),
each with one direct question, two paraphrased ones and two decoys that share the obvious
keyword, and ``fill_slots``, which draws the made-up values (names, months, cities, codes)
that fill one instance of a template.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

MONTHS = "January February March April May June July August September October November December"
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday"
CITIES = "Lisbon Osaka Montreal Nairobi Tallinn Valparaiso Hanoi Reykjavik Bergen Tbilisi Cusco"
FOODS = "peanuts sesame shellfish kiwi mustard lupin buckwheat celery mango"
DISHES = "lasagna dumplings goulash pierogi meatloaf paella shortbread borscht"
INGREDIENTS = "ghee lard brown-butter olive-oil duck-fat coconut-oil tahini"
MEDS = "amoxicillin ibuprofen prednisone cetirizine doxycycline omeprazole"
OBJECTS = "flowerpot doormat garden-gnome loose-brick watering-can boot-scraper"
HOSTS = "the-hetzner-box the-raspberry-pi fly.io a-digitalocean-droplet the-home-nas lightsail"


@dataclass(frozen=True, slots=True)
class FactTemplate:
    """A fact a person tells the bot once, and how they later ask about it.

    ``direct`` questions share the main content word(s) with the fact; ``paraphrase``
    questions share at most a weak word or a stem, as people actually ask.
    """

    fact: str
    questions: tuple[tuple[str, str], ...]
    decoys: tuple[str, ...]


FACTS: tuple[FactTemplate, ...] = (
    FactTemplate(
        "my sister's wedding is at the {venue} Hall in {month}",
        (
            ("when is my sister's wedding?", "direct"),
            ("where is my sister getting married?", "paraphrase"),
            ("what did I say about the wedding venue?", "paraphrase"),
        ),
        ("my sister finally called me back about the weekend", "we watched a wedding movie"),
    ),
    FactTemplate(
        "I parked the car on level {level} of the {street} Street garage",
        (
            ("where did I park the car?", "direct"),
            ("which level is the car on?", "paraphrase"),
            ("where did I leave my car?", "paraphrase"),
        ),
        ("the car needs new tires before winter", "parking downtown is a nightmare lately"),
    ),
    FactTemplate(
        "my dentist appointment moved to {weekday} at {time}",
        (
            ("when is my dentist appointment?", "direct"),
            ("what time do I see the dentist?", "paraphrase"),
            ("did my appointment get rescheduled?", "paraphrase"),
        ),
        ("I need to find a new dentist closer to home", "the appointment at the bank went ok"),
    ),
    FactTemplate(
        "the wifi password at the cabin is {token}",
        (
            ("what is the cabin wifi password?", "direct"),
            ("how do I get online at the cabin?", "paraphrase"),
            ("what's the internet login up there?", "paraphrase"),
        ),
        ("we should book the cabin again for the summer", "I reset my email password again"),
    ),
    FactTemplate(
        "we decided to deploy {app} on {host} with docker compose",
        (
            ("where are we deploying {app}?", "direct"),
            ("which server did we pick for {app}?", "paraphrase"),
            ("how did we decide to host it?", "paraphrase"),
        ),
        ("{app} tests are flaky again on the build server", "docker keeps eating my disk space"),
    ),
    FactTemplate(
        "my daughter is allergic to {food}, keep it out of her lunch",
        (
            ("what is my daughter allergic to?", "direct"),
            ("which food should my kid avoid?", "paraphrase"),
            ("any allergies I mentioned for the kids?", "paraphrase"),
        ),
        ("my daughter started piano lessons this week", "lunch at the office was terrible"),
    ),
    FactTemplate(
        "I booked flights to {city} for the {month} conference, seat {seat}",
        (
            ("when am I flying to {city}?", "direct"),
            ("what trip did I book for the conference?", "paraphrase"),
            ("which seat did I get?", "paraphrase"),
        ),
        ("the conference talk submissions close soon", "flights are so expensive this year"),
    ),
    FactTemplate(
        "the landlord said rent goes up to {amount} from {month}",
        (
            ("is my rent going up?", "direct"),
            ("how much will I pay for the apartment?", "paraphrase"),
            ("what did the landlord say about the increase?", "paraphrase"),
        ),
        ("the landlord still has not fixed the heater", "paid the rent late again, oops"),
    ),
    FactTemplate(
        "my passport expires on {date}, I need to renew it",
        (
            ("when does my passport expire?", "direct"),
            ("which document do I need to renew?", "paraphrase"),
            ("is my travel id still valid?", "paraphrase"),
        ),
        ("found my old passport photos in a drawer", "I renewed the car insurance online"),
    ),
    FactTemplate(
        "grandma's {dish} recipe uses {ingredient} instead of butter",
        (
            ("what's the secret ingredient in grandma's {dish}?", "direct"),
            ("how does grandma make it?", "paraphrase"),
            ("what replaces the butter in that family recipe?", "paraphrase"),
        ),
        ("grandma is visiting next week", "I tried a new recipe for dinner and it flopped"),
    ),
    FactTemplate(
        "I signed up at {gym} gym, membership is {amount} a month",
        (
            ("which gym did I join?", "direct"),
            ("how much is my gym membership?", "direct"),
            ("what do I pay for working out?", "paraphrase"),
        ),
        ("skipped the gym again this morning", "my library membership card expired"),
    ),
    FactTemplate(
        "the crash in {file} was a missing await in the retry loop",
        (
            ("what was the bug in {file}?", "direct"),
            ("why did the retry code crash?", "paraphrase"),
            ("what did we find out about that async problem?", "paraphrase"),
        ),
        ("{file} needs a cleanup at some point", "the retry logic in the client looks fine"),
    ),
    FactTemplate(
        "Dr. {doctor} prescribed {med} twice a day for two weeks",
        (
            ("what did Dr. {doctor} prescribe?", "direct"),
            ("what medication did the doctor give me?", "paraphrase"),
            ("how often do I take the pills?", "paraphrase"),
        ),
        ("the doctor's office never picks up the phone", "need a prescription for the cat"),
    ),
    FactTemplate(
        "our anniversary dinner is booked at {restaurant} on the {day}th",
        (
            ("where are we going for our anniversary?", "direct"),
            ("which restaurant did I book?", "paraphrase"),
            ("when is the dinner reservation?", "paraphrase"),
        ),
        ("dinner tonight is leftovers again", "forgot my parents' anniversary last year"),
    ),
    FactTemplate(
        "the spare key is hidden under the {object} by the back door",
        (
            ("where is the spare key?", "direct"),
            ("where did we hide the key?", "paraphrase"),
            ("how do I get in if I'm locked out?", "paraphrase"),
        ),
        ("lost my office key card again", "the back door squeaks, it needs oil"),
    ),
    FactTemplate(
        "my bike lock combination is {code}",
        (
            ("what's the code for my bike lock?", "direct"),
            ("how do I unlock the bike?", "paraphrase"),
            ("what numbers open the lock?", "paraphrase"),
        ),
        ("the bike needs a new chain", "the lock on the shed is rusty"),
    ),
)


def fill_slots(rng: random.Random, names: Sequence[str]) -> dict[str, str]:
    def pick(words: str) -> str:
        return rng.choice(words.split()).replace("-", " ")

    return {
        "venue": rng.choice(names),
        "month": pick(MONTHS),
        "level": str(rng.randint(2, 9)),
        "street": rng.choice(names),
        "weekday": pick(WEEKDAYS),
        "time": f"{rng.randint(8, 17)}:{rng.choice(('00', '15', '30', '45'))}",
        "token": f"{rng.choice(names).lower()}{rng.randint(10, 99)}{rng.choice('!#$%')}",
        "app": f"{rng.choice(names).lower()}-{rng.choice(('notes', 'sync', 'bot', 'api'))}",
        "host": pick(HOSTS),
        "food": pick(FOODS),
        "city": pick(CITIES),
        "seat": f"{rng.randint(3, 40)}{rng.choice('ACDF')}",
        "amount": f"${rng.randint(20, 2400)}",
        "date": f"{pick(MONTHS)} {rng.randint(1, 28)}",
        "dish": pick(DISHES),
        "ingredient": pick(INGREDIENTS),
        "gym": rng.choice(names),
        "file": f"{rng.choice(names).lower()}_{rng.choice(('worker', 'client', 'sync'))}.py",
        "doctor": rng.choice(names),
        "med": pick(MEDS),
        "restaurant": f"{rng.choice(names)} {rng.choice(('Bistro', 'Grill', 'Kitchen'))}",
        "day": str(rng.randint(4, 20)),
        "object": pick(OBJECTS),
        "code": f"{rng.randint(0, 9999):04d}",
    }
