"""The *heldout* bank: never used to tune the search; only to report on it.

The same kind of task as ``recall_bank_tune`` with nothing in common: topics are a home that
changes city twice, studies then a first job, a stolen bike and its replacement, a band and
its first gig, an allotment prize, a partner and an engagement, a father's operation, a
language exam and its tutor, coaching a kids' team, and three trips (a conference, a hike, a
wedding). The CJK speaker writes Japanese (``recall_bank_heldout_ja``). Question templates,
phrasings, distractors and small talk are all its own.
"""

from __future__ import annotations

from bench import recall_bank_heldout_ja as ja
from bench import recall_bank_heldout_talk as talk
from bench import recall_bank_heldout_words as w
from bench.recall_bank_base import Bank, Story, Voice, a

TEMPLATES = {
    # single
    "h_supervisor": "Who supervises {name}'s thesis?",
    "h_field": "What subject is {name} studying at university?",
    "h_stolen_where": "Where was {name}'s bike stolen from?",
    "h_band_name": "What's the name of the band {name} plays {instrument} in?",
    "h_gig_venue": "Where did {name}'s band play its first gig?",
    "h_veg_prize": "Which vegetable won {name} a prize at {show}?",
    "h_met_where": "Where did {name} meet {partner}?",
    "h_hospital": "Which hospital did the {procedure} for {name}'s dad?",
    "h_tutor": "Who tutors {name} in {language}?",
    "h_level": "Which {language} exam level did {name} pass?",
    "h_team": "Which kids' team does {name} coach?",
    "h_bike2": "Which bike did {name} end up buying?",
    "h_conference": "Which city hosted the conference {name} attended?",
    "h_hike": "Where did {name} go hiking?",
    # temporal
    "h_prior_city": "Prior to {city}, which city was {name}'s home?",
    "h_relocated_after": "After {city}, where did {name} relocate?",
    "h_keys_month": "In what month did {name} get the keys in {city}?",
    "h_stolen_month": "In what month was {name}'s {bike} stolen?",
    "h_bike_before": "Which bike did {name} ride before the {bike}?",
    "h_engaged_month": "In what month did {name} get engaged?",
    "h_gig_month": "In what month did {name}'s band play its first gig?",
    "h_studied_before": "What was {name} studying before starting work at {org}?",
    "h_graduation_month": "In what month did {name} graduate?",
    "h_level_month": "In what month did {name} pass the {language} exam?",
    "h_trip_order": "Did {name} go to {a} or to {b} first?",
    "h_surgery_month": "In what month did {name}'s father have the {procedure}?",
    # multi-hop
    "h_city_engaged": "Which city was {name} living in when {partner} proposed?",
    "h_bike_after_theft": "What bike did {name} get after the one taken from {spot}?",
    "h_venue_after_move": "Where did the band {name} joined after moving to {city} first play?",
    "h_supervisor_before_job": "Who supervised the thesis {name} wrote before joining {org}?",
    "h_field_city": "In which city was {name} living when the {field} master's began?",
    "h_prize_city": "Where was {name} living when the {veg} won {prize}?",
    "h_hike_partner": "Where did {name} go hiking with the person {name} met at {met}?",
    "h_exam_tutor": "Who helped {name} prepare for the {level} exam?",
    "h_org_city": "Where was {name} living when the job at {org} started?",
    # paraphrase
    "h_occupation": "What line of work did {name} go into after university?",
    "h_settled": "In which place does {name} reside at present?",
    "h_thief": "What did {name} lose to a thief?",
    "h_music_group": "What ensemble is {name} part of?",
    "h_grew_award": "What did {name} grow that got an award?",
    "h_relationship_start": "Where did {name}'s relationship with {partner} begin?",
    "h_father_op": "What operation did {name}'s father undergo?",
    "h_language_teacher": "Who is helping {name} with a foreign tongue?",
    "h_kids_squad": "Which youngsters' squad does {name} look after at weekends?",
    "h_mentor": "Who is guiding {name}'s research?",
    "h_academic_subject": "What is {name}'s area of academic focus?",
    "h_event_city": "Where did {name} present at a professional gathering?",
    "h_trek": "Which mountains did {name} trek through?",
}


def story(st: Story) -> None:
    rng, n = st.rng, st.n
    st.used.add(st.name)
    # Home: city1, then city2 (keys), then city3. The band is joined after the move to city2.
    move2, join, gig = st.chain(3, lo=1)
    move3 = rng.randint(move2 + 1, n - 1)
    c1, c2, c3 = st.pick(w.CITIES), st.pick(w.CITIES), st.pick(w.CITIES)
    s_c1 = rng.randint(0, move2 - 1)
    st.plant("home1", s_c1, st.one(w.HOME1, c=c1), reply="What a lovely way to end the day.")
    phrase, back = st.when(w.WHEN)
    st.plant(
        "home2",
        move2,
        st.one(w.HOME2, c=c2, w=phrase),
        reply="How exciting! The first night in an empty place is always strange.",
        recap=f"Got it, I'll remember: you got the keys to a place in {c2}.",
    )
    st.plant(
        "home3",
        move3,
        st.one(w.HOME3, c=c3),
        reply="That sounds like a very good start in the new place.",
        recap=f"Got it, I'll remember: you've moved to {c3}.",
    )
    homes = [(s_c1, ("home1", c1)), (move2, ("home2", c2)), (move3, ("home3", c3))]
    st.ask("temporal", "h_prior_city", c1, "home1", city=c2)
    st.ask("temporal", "h_relocated_after", c3, "home3", city=c2)
    st.ask("temporal", "h_keys_month", st.month(move2, back), "home2", city=c2)
    st.ask("paraphrase", "h_settled", c3, "home3")
    st.scatter(0, n - 1, w.home_mentions(st.pick(w.CITIES), st.pick(w.CITIES)), 3)

    # Band: joined after the move to city2, first gig later.
    instrument, band, venue = st.pick(w.INSTRUMENTS), st.pick(w.BANDS), st.pick(w.VENUES)
    st.plant(
        "band",
        join,
        st.one(w.BAND, i=instrument, b=band),
        reply=f"A band! Playing {instrument} with other people is a whole new skill.",
        recap=f"Got it, I'll remember: you play {instrument} in {band}.",
    )
    phrase, back = st.when(w.WHEN)
    st.plant(
        "gig",
        gig,
        st.one(w.GIG, v=venue, w=phrase),
        reply="Your first gig! People dancing is the best review there is.",
    )
    st.ask("single", "h_band_name", band, "band", instrument=instrument)
    st.ask("paraphrase", "h_music_group", band, "band")
    st.ask("single", "h_gig_venue", venue, "gig")
    st.ask("temporal", "h_gig_month", st.month(gig, back), "gig")
    st.ask("multi-hop", "h_venue_after_move", venue, "home2", "band", "gig", city=c2)
    st.scatter(join + 1, n - 1, w.band_mentions(instrument), 3)

    # Studies, supervisor, graduation, then a first job.
    s_study, s_sup, s_grad, s_job = st.chain(4, hi=round(0.85 * (n - 1)))
    field, sup, (role, org) = st.pick(w.FIELDS), st.pick(w.SUPERVISORS), st.pick(w.ROLES)
    phrase, back = st.when(w.WHEN)
    st.plant(
        "study",
        s_study,
        st.one(w.STUDY, f=field, w=phrase),
        reply="Going back to studying takes courage. The reading gets easier!",
        recap=f"Got it, I'll remember: you're doing a master's in {field}.",
    )
    st.plant("supervisor", s_sup, st.one(w.SUPERVISOR, s=sup), reply="A good supervisor is gold.")
    phrase2, back2 = st.when(w.WHEN)
    st.plant("graduation", s_grad, st.one(w.GRADUATION, w=phrase2), reply="Congratulations!!")
    st.plant(
        "job",
        s_job,
        st.one(w.FIRST_JOB, ar=a(role), o=org),
        reply="A first real contract, how exciting! You earned it.",
        recap=f"Got it, I'll remember: you work as {a(role)} at {org}.",
    )
    st.ask("single", "h_field", field, "study")
    st.ask("paraphrase", "h_academic_subject", field, "study")
    st.ask("single", "h_supervisor", sup, "supervisor")
    st.ask("paraphrase", "h_mentor", sup, "supervisor")
    st.ask("temporal", "h_graduation_month", st.month(s_grad, back2), "graduation")
    st.ask("temporal", "h_studied_before", field, "study", org=org)
    st.ask("paraphrase", "h_occupation", role, "job")
    st.ask("multi-hop", "h_supervisor_before_job", sup, "job", "supervisor", org=org)
    key, city = st.current(homes, s_study)[1]
    st.ask("multi-hop", "h_field_city", city, "study", key, field=field)
    key, city = st.current(homes, s_job)[1]
    st.ask("multi-hop", "h_org_city", city, "job", key, org=org)
    st.scatter(s_study + 1, s_grad, w.study_mentions(), 2)

    partner, met = _bike_partner(st, homes)
    _family_garden(st, homes)
    _trips(st, partner, met)


def _bike_partner(st: Story, homes: list[tuple[int, tuple[str, str]]]) -> tuple[str, str]:
    """The bike stolen and replaced; the partner met and engaged to (returned, with where)."""
    rng, n = st.rng, st.n
    s_stolen, s_new = st.chain(2)
    bike1, bike2, spot = st.pick(w.BIKES), st.pick(w.BIKES), st.pick(w.THEFT_SPOTS)
    phrase, back = st.when(w.WHEN)
    st.plant(
        "stolen",
        s_stolen,
        st.one(w.STOLEN, b=bike1, p=spot, w=phrase),
        reply="That's awful. Report it to the police; stolen bikes do turn up sometimes.",
    )
    st.plant(
        "bike2",
        s_new,
        st.one(w.NEW_BIKE, b=bike2, w=rng.choice(w.WHEN)),
        reply="Back on two wheels! Maybe invest in a really good lock this time.",
        recap=f"Got it, I'll remember: your new bike is a {bike2}.",
    )
    st.ask("single", "h_stolen_where", spot, "stolen")
    st.ask("paraphrase", "h_thief", bike1, "stolen")
    st.ask("temporal", "h_stolen_month", st.month(s_stolen, back), "stolen", bike=bike1)
    st.ask("temporal", "h_bike_before", bike1, "stolen", bike=bike2)
    st.ask("single", "h_bike2", bike2, "bike2")
    st.ask("multi-hop", "h_bike_after_theft", bike2, "stolen", "bike2", spot=spot)
    st.scatter(0, n - 1, w.bike_mentions(), 2)

    s_met, s_engaged = st.chain(2)
    partner, met = st.pick(w.PARTNERS), st.pick(w.MET_AT)
    st.plant("met", s_met, st.one(w.MET, p=partner, m=met), reply="The best stories start oddly.")
    phrase, back = st.when(w.WHEN)
    st.plant(
        "engaged",
        s_engaged,
        st.one(w.ENGAGED, p=partner, w=phrase),
        reply="Congratulations to you both! Tell me everything.",
    )
    st.ask("single", "h_met_where", met, "met", partner=partner)
    st.ask("paraphrase", "h_relationship_start", met, "met", partner=partner)
    st.ask("temporal", "h_engaged_month", st.month(s_engaged, back), "engaged")
    key, city = st.current(homes, s_engaged)[1]
    st.ask("multi-hop", "h_city_engaged", city, "engaged", key, partner=partner)
    st.scatter(0, n - 1, w.partner_mentions(partner), 3)
    return partner, met


def _family_garden(st: Story, homes: list[tuple[int, tuple[str, str]]]) -> None:
    rng, n = st.rng, st.n
    procedure, hospital = st.pick(w.PROCEDURES), st.pick(w.HOSPITALS)
    s_op = rng.randint(0, n - 1)
    phrase, back = st.when(w.WHEN)
    st.plant(
        "operation",
        s_op,
        st.one(w.OPERATION, x=procedure, h=hospital, w=phrase),
        reply="I'm glad it went well. Recovery takes patience, for him and for you.",
    )
    st.ask("single", "h_hospital", hospital, "operation", procedure=procedure)
    st.ask("paraphrase", "h_father_op", procedure, "operation")
    st.ask("temporal", "h_surgery_month", st.month(s_op, back), "operation", procedure=procedure)

    language, tutor, level = st.pick(w.LANGUAGES), st.pick(w.TUTORS), st.pick(w.LEVELS)
    s_tutor, s_exam = st.chain(2)
    st.plant(
        "tutor",
        s_tutor,
        st.one(w.TUTOR, l=language, t=tutor),
        reply="A regular tutor is the fastest way to get speaking.",
        recap=f"Got it, I'll remember: {tutor} is your {language} tutor.",
    )
    phrase, back = st.when(w.WHEN)
    st.plant(
        "exam",
        s_exam,
        st.one(w.EXAM, l=language, lv=level, w=phrase),
        reply="Brilliant! All that practice paid off.",
    )
    st.ask("single", "h_tutor", tutor, "tutor", language=language)
    st.ask("paraphrase", "h_language_teacher", tutor, "tutor")
    st.ask("single", "h_level", level, "exam", language=language)
    st.ask("temporal", "h_level_month", st.month(s_exam, back), "exam", language=language)
    st.ask("multi-hop", "h_exam_tutor", tutor, "exam", "tutor", level=level)
    st.scatter(0, n - 1, w.family_mentions(language), 3)

    veg, prize, show = st.pick(w.VEGETABLES), st.pick(w.PRIZES), st.pick(w.SHOWS)
    s_prize = rng.randint(1, n - 1)
    st.plant(
        "prize",
        s_prize,
        st.one(w.PRIZE, v=veg, p=prize, s=show),
        reply="That's fantastic! All that weeding was worth it.",
        recap=f"Got it, I'll remember: your {veg} won {prize} at {show}.",
    )
    st.ask("single", "h_veg_prize", veg, "prize", show=show)
    st.ask("paraphrase", "h_grew_award", veg, "prize")
    key, city = st.current(homes, s_prize)[1]
    st.ask("multi-hop", "h_prize_city", city, "prize", key, veg=veg, prize=prize)
    st.scatter(0, n - 1, w.garden_mentions(veg), 2)

    team = st.pick(w.TEAMS)
    st.plant(
        "team",
        rng.randint(0, n - 1),
        st.one(w.TEAM, t=team),
        reply="Coaching kids is so rewarding, and exhausting.",
    )
    st.ask("single", "h_team", team, "team")
    st.ask("paraphrase", "h_kids_squad", team, "team")
    st.scatter(0, n - 1, w.coaching_mentions(), 2)


def _trips(st: Story, partner: str, met: str) -> None:
    rng, n = st.rng, st.n
    conf, region, place = (
        st.pick(w.CONFERENCE_CITIES),
        st.pick(w.REGIONS),
        st.pick(w.WEDDING_PLACES),
    )
    friend = st.pick(w.FRIENDS)
    texts = {
        "conference": st.one(w.CONFERENCE, c=conf),
        "hike": st.one(w.HIKE, r=region, p=partner),
        "wedding": st.one(w.WEDDING, pl=place, f=friend),
    }
    order = list(texts)
    rng.shuffle(order)
    for key, session in zip(order, st.chain(3), strict=True):
        st.plant(key, session, texts[key], reply=rng.choice(talk.TRIP_REPLIES))
    st.ask("single", "h_conference", conf, "conference")
    st.ask("paraphrase", "h_event_city", conf, "conference")
    st.ask("single", "h_hike", region, "hike")
    st.ask("paraphrase", "h_trek", region, "hike")
    st.ask("multi-hop", "h_hike_partner", region, "hike", "met", met=met)
    names = {"conference": conf, "hike": region, "wedding": place}
    x, y = rng.sample(order, 2)
    first = x if order.index(x) < order.index(y) else y
    st.ask("temporal", "h_trip_order", names[first], x, y, a=names[x], b=names[y])
    st.scatter(0, n - 1, w.travel_mentions(st.pick(w.CONFERENCE_CITIES)), 2)


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
BANK = Bank(name="heldout", latin=LATIN, cjk=ja.VOICE)
