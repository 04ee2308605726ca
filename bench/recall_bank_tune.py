"""The *tune* bank: the data the search may be developed against.

Topics: home city (two moves), job (one change), pets (one dies, one is adopted), a sibling,
a hobby class and its teacher, an allergy, a sports injury and a race, three trips, a car and
a favourite restaurant. The CJK speaker writes Chinese (``recall_bank_tune_zh``). Pools and
phrasings are in ``recall_bank_tune_words``, small talk in ``recall_bank_tune_talk``. Nothing
here may be reused by ``recall_bank_heldout``.
"""

from __future__ import annotations

from bench import recall_bank_tune_talk as talk
from bench import recall_bank_tune_words as w
from bench import recall_bank_tune_zh as zh
from bench.recall_bank_base import Bank, Story, Voice, a

TEMPLATES = {
    # single: shares a content word with the evidence, often in another form
    "pet2_breed": "What breed is {pet}, the {species} {name} adopted?",
    "pet1_breed": "What breed is {name}'s old {species} {pet}?",
    "job2_where": "Where does {name} work as a {role}?",
    "sib_work": "What does {sib} do for work?",
    "sib_apartment": "In which city did {sib} find an apartment?",
    "teacher": "Who teaches {name}'s {hobby} class?",
    "allergy": "What did {name}'s allergy test show?",
    "sprain": "What did {name} sprain playing {sport}?",
    "race_time": "What was {name}'s finishing time in the {race}?",
    "hotel": "Where did {name} stay in {dest}?",
    "car_buy": "What car did {name} buy?",
    "restaurant": "Which restaurant does {name} recommend for {dish}?",
    # temporal: the answer depends on when, or on the order of events
    "before_city2": "Where did {name} live before moving to {city}?",
    "after_city2": "Which city did {name} move to after {city}?",
    "lease_month": "In which month did {name} sign the lease for the place in {city}?",
    "after_pet1": "What breed of {species} did {name} adopt after {pet} died?",
    "pet1_month": "In which month did {pet} die?",
    "job_before": "What was {name}'s job before joining {workplace}?",
    "job_in_month": "What was {name} working as in {month}?",
    "hobby_month": "When did {name} start going to {hobby} classes?",
    "injury_month": "When did {name} get hurt playing {sport}?",
    "trip_month": "Where was {name} travelling in {month}?",
    "trip_first": "Which trip came first for {name}: {a} or {b}?",
    "car_month": "When did {name} get the {car}?",
    # multi-hop: two or three messages from different sessions
    "breed_after_move": "What breed is the {species} {name} got after moving to {city}?",
    "city_when_pet": "Which city was {name} living in when {pet} joined the family?",
    "city_at_job": "Where was {name} living when starting the job at {workplace}?",
    "rel_work": "What does {name}'s {rel} do for work?",
    "companion_work": "What does the person who went to {dest} with {name} do for work?",
    "companion_city": "Which city does the person who travelled with {name} to {dest} live in?",
    "race_after_injury": "What time did {name} run in the race after the {sport} injury?",
    "lost_breed": "What breed was the pet {name} lost in {month}?",
    "city_hobby": "Which city was {name} living in when the {hobby} classes began?",
    "sibcity_job": "What is the job of {name}'s {rel} who lives in {city}?",
    "car_city": "In which city did {name} buy the {car}?",
    # paraphrase: few or no shared content words (synonyms, hypernyms)
    "living": "What does {name} do for a living these days?",
    "home_now": "Which town does {name} call home nowadays?",
    "animals": "What kind of animal is keeping {name} company these days?",
    "pet1_illness": "What illness did {pet} have at the end?",
    "sib_earn": "How does {sib} earn a living?",
    "hyper_teacher": "Who gives {name} lessons in that new {hyper}?",
    "avoid_foods": "Which foods does {name} need to stay away from?",
    "body_part": "Which part of {name}'s body got injured?",
    "race_fast": "How quickly did {name} complete the {race}?",
    "drive": "What does {name} drive nowadays?",
    "lodging": "What lodging did {name} book for the {dest} holiday?",
}


def story(st: Story) -> None:
    rng, n = st.rng, st.n
    st.used.add(st.name)
    # Home: city1 (stated some time before the first move), then city2, then city3.
    death, move2, adopt, move3 = st.chain(4, lo=2)
    c1, c2, c3 = st.pick(w.CITIES), st.pick(w.CITIES), st.pick(w.CITIES)
    s_c1 = rng.randint(0, move2 - 1)
    st.plant(
        "city1",
        s_c1,
        st.one(w.CITY1, c=c1),
        reply="Sounds like you've found a nice rhythm there.",
        recap=f"Noted: you currently live in {c1}.",
    )
    phrase, back = st.when(w.WHEN)
    st.plant(
        "move2",
        move2,
        st.one(w.MOVE2, c=c2, w=phrase),
        reply="Congratulations! Want a checklist for the weeks before moving day?",
        recap=f"Noted: you signed a lease in {c2} and you're moving there.",
    )
    st.plant(
        "move3",
        move3,
        st.one(w.MOVE3, c=c3),
        reply="That's wonderful. Unpacking the last box is such a good feeling.",
        recap=f"Noted: you've moved to {c3}.",
    )
    homes = [(s_c1, ("city1", c1)), (move2, ("move2", c2)), (move3, ("move3", c3))]
    st.ask("temporal", "before_city2", c1, "city1", city=c2)
    st.ask("temporal", "after_city2", c3, "move3", city=c2)
    st.ask("temporal", "lease_month", st.month(move2, back), "move2", city=c2)
    st.ask("paraphrase", "home_now", c3, "move3")
    st.scatter(0, n - 1, w.city_mentions(st.pick(w.CITIES), st.pick(w.CITIES)), 3)
    st.scatter(move2 + 1, n - 1, w.NEW_FLAT_MENTIONS, 2)

    # Pets: pet1 is there from the start and dies; pet2 is adopted after the first move.
    sp1, sp2 = rng.choice(("dog", "cat")), rng.choice(("dog", "cat"))
    b1, b2 = st.pick(w.BREEDS[sp1]), st.pick(w.BREEDS[sp2])
    p1, p2 = st.pick(w.PET_NAMES), st.pick(w.PET_NAMES)
    cause = st.pick(w.CAUSES)
    st.plant(
        "pet1",
        rng.randint(0, death - 1),
        st.one(w.PET1, p=p1, b=b1, ab=a(b1)),
        reply="Sounds like an excellent companion!",
        recap=f"Noted: {p1} is your {b1}.",
    )
    phrase, back = st.when(w.WHEN)
    st.plant(
        "death",
        death,
        st.one(w.DEATH, p=p1, c=cause, w=phrase),
        reply="I'm so sorry. Losing a companion like that hurts; be gentle with yourself.",
        recap=f"I'm so sorry. I'll remember that {p1} died of {cause}.",
    )
    st.ask("temporal", "pet1_month", st.month(death, back), "death", pet=p1)
    st.ask("paraphrase", "pet1_illness", cause, "death", pet=p1)
    st.ask("single", "pet1_breed", b1, "pet1", species=sp1, pet=p1)
    st.ask("multi-hop", "lost_breed", b1, "death", "pet1", month=st.month(death, back))
    phrase, back = st.when(w.WHEN)
    st.plant(
        "pet2",
        adopt,
        st.one(w.PET2, p=p2, b=b2, ab=a(b2), w=phrase),
        reply=f"Congratulations! The first weeks with a new {sp2} are a lot. Found a vet yet?",
        recap=f"Noted: you adopted {p2}, a {b2}.",
    )
    st.ask("single", "pet2_breed", b2, "pet2", pet=p2, species=sp2)
    st.ask("temporal", "after_pet1", b2, "pet2", species=sp2, pet=p1)
    st.ask("multi-hop", "breed_after_move", b2, "move2", "pet2", species=sp2, city=c2)
    st.ask("multi-hop", "city_when_pet", c2, "pet2", "move2", pet=p2)
    st.ask("paraphrase", "animals", b2, "pet2")
    st.scatter(0, death - 1, w.pet_mentions(p1, sp1), 4)
    st.scatter(adopt + 1, n - 1, w.pet_mentions(p2, sp2), 4)

    # Job: job1 until job2.
    (r1, _), (r2, w2) = st.pick(w.JOBS), st.pick(w.JOBS)
    j2 = st.at(0.4, 0.65)
    j1 = rng.randint(0, j2 - 1)
    st.plant(
        "job1",
        j1,
        st.one(w.JOB1, r=r1, ar=a(r1)),
        reply="That sounds tiring. Do you get a proper break this weekend?",
        recap=f"Noted: you work as {a(r1)}.",
    )
    st.plant(
        "job2",
        j2,
        st.one(w.JOB2, ar=a(r2), w=w2),
        reply="Congratulations on the new job! How are you finding the first days?",
        recap=f"Noted: you're now {a(r2)} at {w2}.",
    )
    st.ask("single", "job2_where", w2, "job2", role=r2)
    st.ask("paraphrase", "living", r2, "job2")
    st.ask("temporal", "job_before", r1, "job1", workplace=w2)
    if st.month(j1) != st.month(j2):
        st.ask("temporal", "job_in_month", r1, "job1", month=st.month(j1))
    key, city = st.current(homes, j2)[1]
    st.ask("multi-hop", "city_at_job", city, "job2", key, workplace=w2)
    st.scatter(0, n - 1, w.WORK_MENTIONS, 4)

    # Sibling: introduced by name, then their job and their city, each on its own.
    rel = rng.choice(("sister", "brother"))
    sib, sib_job, sib_city = st.pick(w.RELATIVES[rel]), st.pick(w.SIBLING_JOBS), st.pick(w.CITIES)
    intro, later1, later2 = st.chain(3)
    s_job, s_city = (later1, later2) if rng.random() < 0.5 else (later2, later1)
    st.plant(
        "sib",
        intro,
        st.one(w.SIBLING, rel=rel, s=sib),
        reply="That sounds lovely. Siblings can be the best company.",
    )
    st.plant(
        "sib_job",
        s_job,
        st.one(w.SIBLING_JOB, s=sib, aj=a(sib_job)),
        reply="That's a big milestone. Congratulations to the whole family!",
    )
    st.plant(
        "sib_city",
        s_city,
        st.one(w.SIBLING_CITY, s=sib, c=sib_city),
        reply="Finding a place after a long search is such a relief.",
    )
    st.ask("single", "sib_work", sib_job, "sib_job", sib=sib)
    st.ask("single", "sib_apartment", sib_city, "sib_city", sib=sib)
    st.ask("paraphrase", "sib_earn", sib_job, "sib_job", sib=sib)
    st.ask("multi-hop", "rel_work", sib_job, "sib", "sib_job", rel=rel)
    st.ask("multi-hop", "sibcity_job", sib_job, "sib_city", "sib_job", rel=rel, city=sib_city)
    st.scatter(0, n - 1, w.sibling_mentions(rel, sib), 3)

    # Hobby class, then its teacher a few sessions later.
    (hobby, hyper), teacher = st.pick(w.HOBBIES), st.pick(w.TEACHERS)
    s_h = st.at(0.05, 0.4)
    s_t = rng.randint(s_h + 1, min(n - 1, s_h + 6))
    phrase, back = st.when(w.WHEN)
    st.plant(
        "hobby",
        s_h,
        st.one(w.HOBBY, h=hobby, w=phrase),
        reply="How exciting! Being a beginner at something new is a great feeling.",
    )
    st.plant(
        "teacher",
        s_t,
        st.one(w.TEACHER, h=hobby, t=teacher),
        reply="A good teacher makes all the difference.",
        recap=f"Noted: {teacher} teaches your {hobby} class.",
    )
    st.ask("temporal", "hobby_month", st.month(s_h, back), "hobby", hobby=hobby)
    st.ask("single", "teacher", teacher, "teacher", hobby=hobby)
    st.ask("paraphrase", "hyper_teacher", teacher, "teacher", hyper=hyper)
    key, city = st.current(homes, s_h)[1]
    st.ask("multi-hop", "city_hobby", city, "hobby", key, hobby=hobby)
    st.scatter(s_h + 1, n - 1, w.hobby_mentions(hobby), 3)

    _health(st)
    _trips(st, (rel, sib_job, sib_city))
    _car_food(st, homes)


def _health(st: Story) -> None:
    rng, n = st.rng, st.n
    allergen, sport, part = st.pick(w.ALLERGENS), st.pick(w.SPORTS), st.pick(w.PARTS)
    st.plant(
        "allergy",
        rng.randint(0, n - 1),
        st.one(w.ALLERGY, a=allergen),
        reply="Good that you know now. Want help spotting it on ingredient lists?",
        recap=f"Noted: you're allergic to {allergen}.",
    )
    st.ask("single", "allergy", allergen, "allergy")
    st.ask("paraphrase", "avoid_foods", allergen, "allergy")
    s_inj, s_race = st.chain(2, lo=1)
    phrase, back = st.when(w.WHEN)
    st.plant(
        "injury",
        s_inj,
        st.one(w.INJURY, p=part, s=sport, w=phrase),
        reply="Ouch! Rest it, ice it, and don't rush back into playing.",
    )
    st.ask("single", "sprain", part, "injury", sport=sport)
    st.ask("paraphrase", "body_part", part, "injury")
    st.ask("temporal", "injury_month", st.month(s_inj, back), "injury", sport=sport)
    race, fastest, slowest = st.pick(w.RACES)
    minutes, seconds = rng.randint(fastest, slowest), rng.randint(0, 59)
    time = (
        f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}"
        if minutes >= 60
        else f"{minutes}:{seconds:02d}"
    )
    st.plant(
        "race",
        s_race,
        st.one(w.RACE, r=race, t=time),
        reply="Well done! How are the legs today?",
        recap=f"Noted: {race} in {time}.",
    )
    st.ask("single", "race_time", time, "race", race=race)
    st.ask("paraphrase", "race_fast", time, "race", race=race)
    st.ask("multi-hop", "race_after_injury", time, "injury", "race", sport=sport)
    st.scatter(s_inj + 1, n - 1, w.HEALTH_MENTIONS, 3)


def _trips(st: Story, sibling: tuple[str, str, str]) -> None:
    rng, n = st.rng, st.n
    rel, sib_job, sib_city = sibling
    trips = [(s, st.pick(w.DESTINATIONS), st.pick(w.HOTELS)) for s in st.chain(3)]
    months = [st.month(s) for s, _, _ in trips]
    companion = rng.randrange(3)
    for i, (s, dest, hotel) in enumerate(trips):
        text = st.one(w.TRIP_WITH if i == companion else w.TRIP, d=dest, h=hotel, rel=rel)
        st.plant(f"trip{i}", s, text, reply=rng.choice(w.TRIP_REPLIES))
        st.ask("single", "hotel", hotel, f"trip{i}", dest=dest)
        st.ask("paraphrase", "lodging", hotel, f"trip{i}", dest=dest)
        if months.count(months[i]) == 1:
            st.ask("temporal", "trip_month", dest, f"trip{i}", month=months[i])
    first, second = sorted(rng.sample(range(3), 2))
    a, b = trips[first][1], trips[second][1]
    a, b = (a, b) if rng.random() < 0.5 else (b, a)
    st.ask("temporal", "trip_first", trips[first][1], f"trip{first}", f"trip{second}", a=a, b=b)
    dest, keys = trips[companion][1], (f"trip{companion}", "sib")
    st.ask("multi-hop", "companion_work", sib_job, *keys, "sib_job", dest=dest)
    st.ask("multi-hop", "companion_city", sib_city, *keys, "sib_city", dest=dest)
    others = st.pick(w.DESTINATIONS), st.pick(w.DESTINATIONS)
    st.scatter(0, n - 1, w.travel_mentions(*others), 3)


def _car_food(st: Story, homes: list[tuple[int, tuple[str, str]]]) -> None:
    rng, n = st.rng, st.n
    car, colour = st.pick(w.CARS), rng.choice(w.COLOURS)
    s_car = rng.randint(0, n - 1)
    phrase, back = st.when(w.WHEN)
    st.plant(
        "car",
        s_car,
        st.one(w.CAR, w=phrase, col=colour, car=car),
        reply="Congratulations! Remember to sort out the insurance before the first trip.",
        recap=f"Noted: you bought a {colour} {car}.",
    )
    st.ask("single", "car_buy", car, "car")
    st.ask("paraphrase", "drive", car, "car")
    st.ask("temporal", "car_month", st.month(s_car, back), "car", car=car)
    key, city = st.current(homes, s_car)[1]
    st.ask("multi-hop", "car_city", city, "car", key, car=car)
    st.scatter(s_car + 1, n - 1, w.CAR_MENTIONS, 2)
    place, dish = st.pick(w.RESTAURANTS)
    st.plant(
        "restaurant",
        rng.randint(0, n - 1),
        st.one(w.RESTAURANT, d=dish, p=place, w=rng.choice(w.WHEN)),
        reply="Nothing beats finding a new favourite spot.",
    )
    st.ask("single", "restaurant", place, "restaurant", dish=dish)
    st.scatter(0, n - 1, w.food_mentions(dish), 2)


LATIN = Voice(
    lang="en",
    names=w.NAMES,
    templates=TEMPLATES,
    story=story,
    filler=talk.filler,
    opener=talk.opener,
    ack=talk.ACK,
    recap_asks=talk.RECAP_ASKS,
    follow_ups=talk.REPLY_FOLLOW_UPS,
)
BANK = Bank(name="tune", latin=LATIN, cjk=zh.VOICE)
