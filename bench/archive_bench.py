#!/usr/bin/env python3
"""Benchmark of the archive (``memory.archive``: the database and its search) on generated
chat data.

    .venv/bin/python bench/archive_bench.py [--messages N] [--people P] [--queries Q]
                                             [--dir DIR] [--keep]

It generates N messages (deterministic, seeded), writes them through the real archive API
(``Archive.open`` / ``start_session`` / ``append_exchange``, one transaction per exchange),
also times the bulk path (``import_records``), loads the same messages into a plain
single-table FTS5 baseline, then measures search latency and the recall of planted facts
for both. Everything happens in local files under a temporary directory; nothing touches
the network. Progress goes to stderr, the result tables to stdout. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import math
import os
import platform
import random
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from memory.archive.database import Archive, NewMessage, SessionSpec, scope_token
from memory.archive.records import title_of
from memory.archive.search import STOP_WORDS, Searcher, SearchTool
from memory.archive.writer import PRAGMAS, ensure_session, insert_exchange

# -- knobs ----------------------------------------------------------------------------------


def words_of(text: str) -> list[str]:
    """A whitespace-separated word list written as one string (long lists stay readable)."""
    return text.split()


YEAR_START = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
YEAR_SECONDS = 365 * 86_400
VOCAB_SIZE = 8_000  # English-like words; Zipf-distributed
CJK_SESSION_SHARE = 0.055  # sessions held in Japanese / Chinese (≈5% of all messages)
GROUP_SESSION_SHARE = 0.06  # group chats: 2-4 people, later ones join mid-session
ACTIVE_SESSIONS = 64  # sessions interleaved in the ingest stream at any moment
SAMPLES = 4_000  # user messages remembered to derive realistic queries from
BATCH_MESSAGES = 10_000  # rows per transaction for the executemany loaders
SEARCH_LIMIT = 3  # what the model asks for by default
BASELINE_LIMIT = 24  # = the archive's own over-fetch (max(limit * 8, 24))
PROGRESS_EVERY = 5.0  # seconds between progress lines

TARGET_INGEST = 20_000.0
TARGET_SCOPED_P50 = 10.0
TARGET_SCOPED_P95 = 40.0

# Frequent chat words, roughly most-frequent first: they take the top Zipf ranks.
COMMON_WORDS = words_of("""
the i to and you a it is that of in for my this on with be have do not but can what so just
me we was are if at like get about how your there all one know no or up out will would from
they think now an make go some when want time then need did could use back see more he thing
which really good new work way well also try set should file look still right help here why
because first day other much change run yeah ok thanks sure maybe got going let been has had
them their very even after where than only any over those these our us into two last next fix
error test build app server data code page user list check start stop open close add remove
update issue problem version line name text message chat send call week today tomorrow
yesterday morning night home house money price plan idea question answer number image link
email phone note book game music movie food coffee lunch dinner trip bus train road city
friend family kid kids mom dad wife husband brother team boss meeting office job project
deadline report docs config script function class method value key table query index field
type string loop bug crash log logs output input path folder repo branch merge commit push
pull deploy release install package library api endpoint request response token password
account login setup settings option feature support service client database cache memory disk
cpu network port host docker container cloud cost pay buy sell order store shop ship box room
door window light water weather rain cold hot summer winter spring year month hour minute
early late soon again always never often sometimes everything nothing something anything
someone people person life world place things stuff kind sort bit lot little big small long
short old young great nice bad better best worse easy hard fast slow quick simple clean happy
tired busy free ready done sorry please hello hey bye said says went made found gave took
came left put kept told asked tried used wanted needed working looking trying getting
""")

# Used by the planted facts, their questions and decoys (below) without slot values. They are
# spread over mid Zipf ranks so the background chatter contains them as distractors too.
TOPIC_WORDS = words_of("""
sister wedding married venue hall june car parked park parking garage level leave left
dentist appointment moved rescheduled wifi password cabin online internet decided deploying
deploy host server pick picked compose daughter allergic allergies avoid lunch kid kids
booked book flights flight flying conference seat trip landlord rent increase going pay
passport expires expire renew valid document grandma recipe secret ingredient butter family
signed gym membership month join joined working out crash await retry loop bug async found
doctor prescribed medication pills twice weeks give take anniversary dinner booked restaurant
spare key hidden door back house locked hide bike lock combination code unlock numbers chain
shed rusty photos drawer insurance visiting tried flopped piano lessons heater late card
library expired office phone cleanup client logic tests flaky build disk space movie weekend
called finally tires winter downtown nightmare bank closer email reset summer expensive
submissions talk close prescription cat oil squeaks picks
""")

ONSETS = words_of("b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r")
ONSETS += words_of("s sh sk sl sp st t th tr v w z")
VOWELS = words_of("a e i o u ai ea ee io oa ou y")
CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "st", "x", "th", "ck", "ng", "rt"]

KANJI = (
    "日本語東京大阪京都会議資料予定明日今日昨日時間電話確認連絡仕事問題解決方法設定変更更新削除"
    "追加開発環境本番試験画面表示機能管理報告書類検索結果情報記録保存送信受信返事家族友達旅行天気"
    "料理食事買物映画音楽写真病院医者学校先生勉強宿題部屋銀行支払契約期限準備完了失敗成功最近週末"
    "来週先週毎朝昼夜駅電車会社社長担当部長这个那我们你他们什么怎为没有可以需要已经还是但因所"
)
KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロワンガギグゲゴパピプペポ"  # noqa: E501
JA_GLUE = ("の", "は", "を", "に", "で", "が", "と", "も", "から", "です", "ます", "した", "、")
ZH_GLUE = ("的", "了", "，", "在", "是", "和")

EXTENSIONS = words_of("config.ts py yaml json md rs go tsx toml sh sql lock env ts")
TOOLS = ("shell", "read_file", "web_search", "search_files", "http_get", "python")
ENDINGS = (".", ".", ".", ".", "?", "!", "…", ":")
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")

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

QUESTION_FORMS = (
    "what did I say about {a}?",
    "when did we talk about {a} and {b}?",
    "how did we fix the {a} {b} thing",
    "do you remember the {a} from last month?",
    "where did I put the {a} {b}?",
    "what was the {a} issue with {b}?",
)
QUERY_KINDS = ("common", "rare", "words", "question", "code")


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


class Progress:
    """Rate-limited progress lines on stderr."""

    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = max(1, total)
        self.start = time.perf_counter()
        self.last = self.start

    def update(self, done: int) -> None:
        done = min(done, self.total)
        now = time.perf_counter()
        if now - self.last < PROGRESS_EVERY and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else 0.0
        log(
            f"{self.label}: {done:,}/{self.total:,} ({100 * done / self.total:.0f}%),"
            f" {rate:,.0f}/s, eta {eta:,.0f}s"
        )


# -- vocabulary -----------------------------------------------------------------------------


def zipf_cum(n: int, exponent: float = 1.0, shift: float = 2.7) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights for ranks 1..n (for ``random.choices``)."""
    return list(itertools.accumulate(1.0 / (r + shift) ** exponent for r in range(1, n + 1)))


def syllable_word(rng: random.Random) -> str:
    return "".join(
        rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
        for _ in range(rng.choice((1, 2, 2, 2, 3)))
    )


@dataclass(slots=True)
class Vocabulary:
    words: list[str]
    cum: list[float]
    content: list[str]  # non-stop words in rank order
    names: list[str]  # capitalised made-up names that are *not* in the vocabulary
    cjk: list[str]
    cjk_cum: list[float]
    code: list[str]
    code_cum: list[float]

    @classmethod
    def build(cls, rng: random.Random) -> Vocabulary:
        ranked = list(dict.fromkeys(COMMON_WORDS))
        taken = set(ranked)
        made: list[str] = []
        while len(made) < VOCAB_SIZE + 3_000:
            word = syllable_word(rng)
            if word not in taken and word not in STOP_WORDS and len(word) >= 3:
                taken.add(word)
                made.append(word)
        filler, names = made[:VOCAB_SIZE], made[VOCAB_SIZE:]
        ranked += filler[: VOCAB_SIZE - len(ranked)]
        for word in dict.fromkeys(TOPIC_WORDS):
            if word not in set(COMMON_WORDS):
                ranked.insert(rng.randrange(150, 2_500), word)
        ranked = list(dict.fromkeys(ranked))[:VOCAB_SIZE]
        content = [w for w in ranked if w not in STOP_WORDS and "'" not in w]
        cjk: list[str] = []
        seen: set[str] = set()
        while len(cjk) < 1_500:
            if rng.random() < 0.15:
                word = "".join(rng.choices(KATAKANA, k=rng.randint(3, 5)))
            else:
                word = "".join(rng.choices(KANJI, k=rng.choice((2, 2, 2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                cjk.append(word)
        code_words = ranked[300:3_000]
        code: list[str] = []
        for _ in range(800):
            a, b, c = rng.sample(code_words, 3)
            roll = rng.random()
            if roll < 0.4:
                code.append(f"{a}-{b}.{rng.choice(EXTENSIONS)}")
            elif roll < 0.6:
                code.append(f"src/{a}/{b}_{c}.{rng.choice(EXTENSIONS)}")
            elif roll < 0.8:
                code.append(f"https://{a}.example.com/{b}/{c}?id={rng.randint(1, 9999)}")
            else:
                code.append(f"{a}_{b}()" if rng.random() < 0.5 else f"{a.title()}{b.title()}Error")
        return cls(
            ranked,
            zipf_cum(len(ranked)),
            content,
            [n.title() for n in names],
            cjk,
            zipf_cum(len(cjk), 0.9),
            list(dict.fromkeys(code)),
            zipf_cum(len(dict.fromkeys(code)), 0.8),
        )

    def english(self, rng: random.Random, n: int, code_share: float) -> tuple[str, list[str]]:
        words = rng.choices(self.words, cum_weights=self.cum, k=n)
        if rng.random() < code_share:
            words[rng.randrange(n)] = rng.choices(self.code, cum_weights=self.code_cum)[0]
        parts: list[str] = []
        start = 0
        while start < n:
            end = min(n, start + rng.randint(4, 14))
            sentence = " ".join(words[start:end])
            parts.append(sentence[:1].upper() + sentence[1:] + rng.choice(ENDINGS))
            start = end
        return " ".join(parts), words

    def cjk_text(self, rng: random.Random, n: int, chinese: bool) -> tuple[str, list[str]]:
        words = rng.choices(self.cjk, cum_weights=self.cjk_cum, k=n)
        glue = ZH_GLUE if chinese else JA_GLUE
        out: list[str] = []
        for word in words:
            out.append(word)
            if rng.random() < 0.55:
                out.append(rng.choice(glue))
            if rng.random() < 0.03:  # a Latin word or a file name in the middle
                out.append(" " + rng.choice(self.content[:2_000]) + " ")
        out.append("。")
        return "".join(out), words

    def tool_output(self, rng: random.Random, tool: str) -> str:
        target = int(min(20_000, max(200, rng.lognormvariate(7.0, 0.8))))
        lines: list[str] = []
        size = 0
        while size < target:
            words = " ".join(rng.choices(self.words, cum_weights=self.cum, k=rng.randint(3, 12)))
            code = rng.choices(self.code, cum_weights=self.code_cum)[0]
            if tool in ("shell", "python"):
                stamp = YEAR_START + rng.random() * YEAR_SECONDS
                iso = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                line = f"{iso} {rng.choice(LEVELS)} {code} {words} ({rng.randint(1, 900)}ms)"
            elif tool in ("web_search", "http_get"):
                line = f"{len(lines) + 1}. {words.title()} — {code} {words}"
            else:
                line = f"{code}:{rng.randint(1, 2000)}: {words}"
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)


# -- the data set ---------------------------------------------------------------------------


@dataclass(slots=True)
class SessionPlan:
    id: str
    owner: str
    platform: str
    chat_id: str
    group: bool
    members: tuple[str, ...]  # owner first
    cjk: bool
    started_at: float
    shapes: list[int]  # tool calls per exchange (0, 1 or 2)


@dataclass(slots=True)
class Exchange:
    session: int
    speaker: str
    first: bool
    messages: list[NewMessage]


@dataclass(slots=True)
class Fact:
    session: int
    owner: str
    text: str
    questions: list[tuple[str, str]]


@dataclass(slots=True)
class Sample:
    owner: str
    words: list[str]


@dataclass(slots=True)
class Dataset:
    vocab: Vocabulary
    people: list[str]
    people_cum: list[float]
    sessions: list[SessionPlan]
    exchanges: list[Exchange]
    facts: list[Fact]
    samples: list[Sample]
    cjk_samples: list[Sample]
    messages: int

    def exchange_cut(self, messages: int) -> int:
        """Index of the first exchange after the first ``messages`` messages."""
        total = 0
        for index, exchange in enumerate(self.exchanges):
            if total >= messages:
                return index
            total += len(exchange.messages)
        return len(self.exchanges)

    def message_count(self, exchanges: int) -> int:
        return sum(len(e.messages) for e in self.exchanges[:exchanges])


def messages_in(shape: int) -> int:
    return 2 if shape == 0 else 3 + shape


def make_people(rng: random.Random, n: int) -> tuple[list[str], list[float]]:
    people: dict[str, None] = {}
    while len(people) < n:
        platform_name = "telegram" if rng.random() < 0.7 else "discord"
        people[f"{platform_name}-{rng.randrange(10**8, 10**10)}"] = None
    return list(people), zipf_cum(n, 0.8, 10.0)


def plan_sessions(
    rng: random.Random, n_messages: int, people: list[str], cum: list[float]
) -> list[SessionPlan]:
    sessions: list[SessionPlan] = []
    total = 0
    while total < n_messages:
        owner = rng.choices(people, cum_weights=cum)[0]
        group = rng.random() < GROUP_SESSION_SHARE
        members: tuple[str, ...] = (owner,)
        if group:
            others = [p for p in rng.sample(people, rng.randint(1, 3)) if p != owner]
            members = (owner, *others)
        count = min(60, 1 + int(rng.expovariate(1 / 7)))
        shapes = [
            0 if r < 0.85 else 1 if r < 0.97 else 2 for r in (rng.random() for _ in range(count))
        ]
        platform_name = owner.split("-", 1)[0]
        sessions.append(
            SessionPlan(
                id=f"s{rng.getrandbits(80):020x}",
                owner=owner,
                platform=platform_name,
                chat_id=f"-100{rng.randrange(10**9)}" if group else owner.split("-", 1)[1],
                group=group,
                members=members,
                cjk=rng.random() < CJK_SESSION_SHARE,
                started_at=YEAR_START + rng.random() * YEAR_SECONDS,
                shapes=shapes,
            )
        )
        total += sum(messages_in(s) for s in shapes)
    return sessions


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


def plant_facts(
    rng: random.Random, sessions: list[SessionPlan], k: int, names: Sequence[str]
) -> tuple[list[Fact], dict[tuple[int, int], str]]:
    """K facts in random private English sessions, decoys in the owner's other sessions."""
    eligible = [i for i, s in enumerate(sessions) if not s.group and not s.cjk]
    by_owner: dict[str, list[int]] = {}
    for i in eligible:
        by_owner.setdefault(sessions[i].owner, []).append(i)
    facts: list[Fact] = []
    overrides: dict[tuple[int, int], str] = {}
    for n, index in enumerate(rng.sample(eligible, min(k, len(eligible)))):
        template = FACTS[n % len(FACTS)]
        slots = fill_slots(rng, names)
        plan = sessions[index]
        lead = rng.choice(("", "btw ", "oh and ", "note to self: ", "fyi "))
        text = lead + template.fact.format(**slots)
        overrides[(index, rng.randrange(len(plan.shapes)))] = text
        questions = [(q.format(**slots), kind) for q, kind in template.questions]
        facts.append(Fact(index, plan.owner, text, questions))
        for decoy in template.decoys:
            mine = [i for i in by_owner[plan.owner] if i != index]
            other = rng.choice(mine) if mine and rng.random() < 0.7 else rng.choice(eligible)
            key = (other, rng.randrange(len(sessions[other].shapes)))
            if key not in overrides:
                overrides[key] = decoy.format(**slots)
    return facts, overrides


def generate(seed: int, n_messages: int, n_people: int, n_facts: int) -> Dataset:
    rng = random.Random(seed)  # noqa: S311 - a benchmark, not cryptography
    vocab = Vocabulary.build(rng)
    people, people_cum = make_people(rng, n_people)
    sessions = plan_sessions(rng, n_messages, people, people_cum)
    facts, overrides = plant_facts(rng, sessions, n_facts, vocab.names)
    sample_p = min(1.0, SAMPLES / max(1, n_messages // 2))
    samples: list[Sample] = []
    cjk_samples: list[Sample] = []
    exchanges: list[Exchange] = []
    pool: list[list[Any]] = []  # [session index, next exchange, clock, members seen]
    next_session = 0
    progress = Progress("generate", len(sessions))
    while pool or next_session < len(sessions):
        while len(pool) < ACTIVE_SESSIONS and next_session < len(sessions):
            plan = sessions[next_session]
            pool.append([next_session, 0, plan.started_at])
            next_session += 1
            progress.update(next_session)
        slot = rng.randrange(len(pool))
        index, step, clock = pool[slot]
        plan = sessions[index]
        speaker = plan.owner if not plan.group or step == 0 else rng.choice(plan.members)
        messages: list[NewMessage] = []
        override = overrides.get((index, step))
        words: list[str] = []
        if override is not None:
            text = override
        elif plan.cjk:
            text, words = vocab.cjk_text(rng, rng.randint(4, 14), rng.random() < 0.3)
        else:
            n_words = int(min(80, max(2, rng.lognormvariate(2.3, 0.6))))
            text, words = vocab.english(rng, n_words, 0.15)
        if override is None and rng.random() < sample_p:
            (cjk_samples if plan.cjk else samples).append(Sample(speaker, words))
        messages.append(NewMessage("user", text, speaker=speaker, created_at=clock))
        tools = plan.shapes[step]
        if tools:
            calls: list[dict[str, Any]] = []
            for t in range(tools):
                tool = rng.choice(TOOLS)
                argument = rng.choices(vocab.code, cum_weights=vocab.code_cum)[0]
                calls.append(
                    {
                        "id": f"call_{step}_{t}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps({"arg": argument})},
                    }
                )
            clock += rng.uniform(1, 8)
            messages.append(
                NewMessage(
                    "assistant",
                    vocab.english(rng, rng.randint(3, 12), 0.0)[0],
                    tool_calls=calls,
                    created_at=clock,
                )
            )
            for call in calls:
                clock += rng.uniform(1, 20)
                name = call["function"]["name"]
                messages.append(
                    NewMessage(
                        "tool",
                        vocab.tool_output(rng, name),
                        tool_call_id=call["id"],
                        tool_name=name,
                        created_at=clock,
                    )
                )
        clock += rng.uniform(2, 30)
        if plan.cjk:
            reply = vocab.cjk_text(rng, rng.randint(10, 40), rng.random() < 0.3)[0]
        else:
            n_words = int(min(400, max(5, rng.lognormvariate(3.6, 0.6))))
            reply = vocab.english(rng, n_words, 0.2)[0]
        messages.append(
            NewMessage("assistant", reply, created_at=clock, prompt_tokens=rng.randint(800, 9000))
        )
        exchanges.append(Exchange(index, speaker, step == 0, messages))
        step += 1
        if step >= len(plan.shapes):
            pool[slot] = pool[-1]
            pool.pop()
        else:
            pool[slot][1] = step
            pool[slot][2] = clock + rng.expovariate(1 / 240) + 5
    total = sum(len(e.messages) for e in exchanges)
    return Dataset(
        vocab, people, people_cum, sessions, exchanges, facts, samples, cjk_samples, total
    )


# -- loading: the archive API, bulk executemany into the same schema, the baseline ------------


def session_spec(plan: SessionPlan) -> SessionSpec:
    return SessionSpec(
        id=plan.id,
        platform=plan.platform,
        chat_id=plan.chat_id,
        chat_type="group" if plan.group else "private",
        people=(plan.owner,),
        session_key=f"{plan.platform}:{plan.chat_id}",
        started_at=plan.started_at,
    )


def scope_of(members: set[str]) -> str:
    return " ".join(scope_token(p) for p in sorted(members))


@dataclass(slots=True)
class LoadState:
    """Which sessions exist and who is in them, shared by the API and the bulk loaders."""

    members: dict[str, set[str]] = field(default_factory=dict)
    first_ids: list[int] = field(default_factory=list)  # first message id of each exchange

    def note(self, plan: SessionPlan, speaker: str) -> None:
        self.members.setdefault(plan.id, {plan.owner}).add(speaker)


async def load_api(archive: Archive, data: Dataset, stop: int, state: LoadState) -> float:
    """Exchanges [0, stop) through start_session / append_exchange; returns seconds."""
    total = data.message_count(stop)
    progress = Progress("ingest ours (append_exchange)", total)
    done = 0
    start = time.perf_counter()
    for exchange in data.exchanges[:stop]:
        plan = data.sessions[exchange.session]
        if exchange.first:
            await archive.start_session(session_spec(plan))
        ids = await archive.append_exchange(plan.id, exchange.messages, people=(exchange.speaker,))
        state.first_ids.append(ids[0])
        state.note(plan, exchange.speaker)
        done += len(ids)
        progress.update(done)
    return time.perf_counter() - start


def connect_sync(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in PRAGMAS:
        db.execute(pragma)
    return db


MESSAGE_INSERT = (
    "INSERT INTO messages (session_id, role, speaker, content, tool_calls, tool_call_id,"
    " tool_name, created_at, prompt_tokens, completion_tokens, cached_tokens, external_id,"
    " scope) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def message_row(session_id: str, m: NewMessage, scope: str) -> tuple[Any, ...]:
    calls = json.dumps(list(m.tool_calls), ensure_ascii=False) if m.tool_calls else None
    return (
        session_id,
        m.role,
        m.speaker,
        m.content,
        calls,
        m.tool_call_id,
        m.tool_name,
        m.created_at,
        m.prompt_tokens,
        m.completion_tokens,
        m.cached_tokens,
        m.external_id,
        scope,
    )


def load_bulk(
    db: sqlite3.Connection,
    data: Dataset,
    *,
    begin: int,
    stop: int,
    state: LoadState,
    label: str,
) -> float:
    """Exchanges [begin, stop) with executemany, BATCH_MESSAGES rows per transaction.

    Ends in the same state the API would leave: session rows with counts, titles and
    scopes, ``session_people``, and earlier messages re-scoped when someone joins.
    """
    total = data.message_count(stop) - data.message_count(begin)
    progress = Progress(label, total)
    next_id = (db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]) + 1
    done = 0
    start = time.perf_counter()
    index = begin
    while index < stop:
        db.execute("BEGIN IMMEDIATE")
        rows: list[tuple[Any, ...]] = []
        touched: dict[str, list[Any]] = {}  # id -> [count, last, title]
        batch = 0
        while index < stop and batch < BATCH_MESSAGES:
            exchange = data.exchanges[index]
            plan = data.sessions[exchange.session]
            if exchange.first:
                db.execute(
                    "INSERT OR IGNORE INTO sessions (id, root_id, session_key, platform, chat_id,"
                    " chat_type, started_at, last_active_at) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        plan.id,
                        plan.id,
                        f"{plan.platform}:{plan.chat_id}",
                        plan.platform,
                        plan.chat_id,
                        "group" if plan.group else "private",
                        plan.started_at,
                        plan.started_at,
                    ),
                )
                db.execute(
                    "INSERT OR IGNORE INTO session_people VALUES (?, ?)", (plan.id, plan.owner)
                )
            members = state.members.setdefault(plan.id, {plan.owner})
            if exchange.speaker not in members:
                members.add(exchange.speaker)
                db.executemany(MESSAGE_INSERT, rows)
                rows.clear()
                db.execute(
                    "INSERT OR IGNORE INTO session_people VALUES (?, ?)",
                    (plan.id, exchange.speaker),
                )
                scope = scope_of(members)
                db.execute(
                    "UPDATE messages SET scope = ? WHERE session_id = ? AND scope != ?",
                    (scope, plan.id, scope),
                )
            scope = scope_of(members)
            state.first_ids.append(next_id)
            for message in exchange.messages:
                rows.append(message_row(plan.id, message, scope))
            next_id += len(exchange.messages)
            entry = touched.setdefault(plan.id, [0, 0.0, None, scope])
            entry[0] += len(exchange.messages)
            entry[1] = max(entry[1], *(m.created_at or 0.0 for m in exchange.messages))
            entry[2] = entry[2] or title_of(exchange.messages[0].content)
            entry[3] = scope
            batch += len(exchange.messages)
            index += 1
        db.executemany(MESSAGE_INSERT, rows)
        db.executemany(
            "UPDATE sessions SET message_count = message_count + ?, last_active_at ="
            " max(last_active_at, ?), title = COALESCE(title, ?), scope = ? WHERE id = ?",
            [(c, last, title, scope, sid) for sid, (c, last, title, scope) in touched.items()],
        )
        db.execute("COMMIT")
        done += batch
        progress.update(done)
    elapsed = time.perf_counter() - start
    got = db.execute("SELECT max(id) FROM messages").fetchone()[0]
    if got != next_id - 1:
        raise RuntimeError(f"bulk load: expected last id {next_id - 1}, got {got}")
    return elapsed


def in_transaction(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], object]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        work(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def load_direct(db: sqlite3.Connection, data: Dataset, stop: int) -> float:
    """The archive's own write transactions (``memory.archive.writer``), called on this thread.

    Same functions, same one transaction per exchange and the same "join only people not
    seen yet" rule as ``Archive.append_exchange``, minus the hop to the writer thread and
    asyncio; returns seconds.
    """
    joined: set[tuple[str, str]] = set()
    start = time.perf_counter()
    for exchange in data.exchanges[:stop]:
        plan = data.sessions[exchange.session]
        if exchange.first:
            spec = session_spec(plan)
            in_transaction(db, partial(ensure_session, spec=spec))
            joined.update((plan.id, person) for person in spec.people)
        new = [] if (plan.id, exchange.speaker) in joined else [exchange.speaker]
        in_transaction(
            db,
            partial(insert_exchange, session_id=plan.id, messages=exchange.messages, people=new),
        )
        joined.update((plan.id, person) for person in new)
    return time.perf_counter() - start


def word_index_only(db: sqlite3.Connection) -> None:
    """Replace every trigger on ``messages`` by word-index-only copies (no trigram writes)."""
    triggers = db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'"
    ).fetchall()
    for (name,) in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    for statement in WORD_INDEX_ONLY_TRIGGERS:
        db.execute(statement)


_WORD_INSERT = (
    "INSERT INTO messages_fts(rowid, search_text, scope)"
    " VALUES (new.id, new.search_text, new.scope);"
)
_WORD_DELETE = (
    "INSERT INTO messages_fts(messages_fts, rowid, search_text, scope)"
    " VALUES ('delete', old.id, old.search_text, old.scope);"
)
# The word-index half of the archive's triggers (all of them go: a 'delete' sent to an index
# that never saw the row corrupts it).
WORD_INDEX_ONLY_TRIGGERS = (
    f"CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN {_WORD_INSERT} END",
    f"CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN {_WORD_DELETE} END",
    "CREATE TRIGGER messages_au AFTER UPDATE OF content, role, scope ON messages BEGIN"
    f" {_WORD_DELETE} {_WORD_INSERT} END",
)

BASELINE_SCHEMA = (
    "CREATE TABLE msgs(id INTEGER PRIMARY KEY, person TEXT, session TEXT, content TEXT)",
    "CREATE VIRTUAL TABLE msgs_fts USING fts5(content, content='msgs', content_rowid='id',"
    " tokenize='unicode61')",
    "CREATE TRIGGER msgs_ai AFTER INSERT ON msgs BEGIN"
    " INSERT INTO msgs_fts(rowid, content) VALUES (new.id, new.content); END",
)


def load_baseline(path: Path, data: Dataset, stop: int | None = None) -> float:
    """The plain single table + one unicode61 FTS5 index, executemany in big transactions."""
    rows = [
        (data.sessions[e.session].owner, data.sessions[e.session].id, m.content)
        for e in data.exchanges[:stop]
        for m in e.messages
    ]
    db = connect_sync(path)
    for statement in BASELINE_SCHEMA:
        db.execute(statement)
    progress = Progress("ingest baseline", len(rows))
    start = time.perf_counter()
    for offset in range(0, len(rows), BATCH_MESSAGES):
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO msgs(person, session, content) VALUES (?,?,?)",
            rows[offset : offset + BATCH_MESSAGES],
        )
        db.execute("COMMIT")
        progress.update(offset + BATCH_MESSAGES)
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def import_lines(data: Dataset, stop: int) -> list[str]:
    """User and assistant messages of exchanges [0, stop) as JSONL import records."""
    lines: list[str] = []
    for exchange in data.exchanges[:stop]:
        plan = data.sessions[exchange.session]
        for message in exchange.messages:
            if message.role not in ("user", "assistant"):
                continue
            stamp = datetime.fromtimestamp(message.created_at or 0.0, UTC).isoformat()
            person = exchange.speaker if message.role == "user" else plan.owner
            record = {
                "session": plan.id,
                "person": person,
                "platform": plan.platform,
                "chat": plan.chat_id,
                "role": message.role,
                "content": message.content,
                "created_at": stamp,
                "external_id": f"x{len(lines)}",
            }
            lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def wal_bytes(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def db_bytes(path: Path) -> int:
    return path.stat().st_size + wal_bytes(path)


def object_sizes(path: Path) -> dict[str, int]:
    """Bytes per group of SQLite objects (dbstat), main file only."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    groups: dict[str, int] = {}
    for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        if name.startswith("messages_fts"):
            key = "word index (messages_fts*)"
        elif name.startswith("messages_trigram"):
            key = "trigram index (messages_trigram*)"
        elif name == "messages":
            key = "messages table"
        elif name.startswith("messages"):
            key = "messages b-tree indexes"
        elif name.startswith("msgs_fts"):
            key = "baseline FTS5 (msgs_fts*)"
        elif name == "msgs":
            key = "baseline table (msgs)"
        elif name.startswith("session"):
            key = "sessions + session_people"
        else:
            key = "other (schema, freelist)"
        groups[key] = groups.get(key, 0) + int(size)
    db.close()
    return groups


async def roundtrip_micros(path: Path, n: int = 3_000) -> float:
    """Cost of one aiosqlite call (``SELECT 1``) on a connection like the archive's."""
    archive = await Archive.open(path)
    try:
        async with archive.reader() as db:
            for _ in range(200):
                await db.execute_fetchall("SELECT 1")
            start = time.perf_counter()
            for _ in range(n):
                await db.execute_fetchall("SELECT 1")
            return (time.perf_counter() - start) / n * 1e6
    finally:
        await archive.close()


async def ingest_breakdown(work: Path, data: Dataset, prefix: int) -> tuple[list[list[str]], str]:
    """Where does the per-exchange time go? Every variant on the same prefix, in a fresh
    file, one after the other before any large file is written (so all see the same disk)."""
    stop = data.exchange_cut(prefix)
    count = data.message_count(stop)
    root = work / "breakdown"
    root.mkdir(parents=True, exist_ok=True)
    log(f"breakdown: archive API on {count:,} messages")
    async with await Archive.open(root / "api.db") as archive:
        variants = [
            (
                "archive API: append_exchange, 1 txn/exchange",
                count / await load_api(archive, data, stop, LoadState()),
            )
        ]
    for name, word_only, bulk in (
        ("memory.archive.writer functions called directly, 1 txn/exchange", False, False),
        ("the same, word index only (no trigram)", True, False),
        (f"executemany, {BATCH_MESSAGES:,} rows/txn", False, True),
        (f"executemany, {BATCH_MESSAGES:,} rows/txn, word index only", True, True),
    ):
        path = root / f"{len(variants)}.db"
        await (await Archive.open(path)).close()
        db = connect_sync(path)
        if word_only:
            word_index_only(db)
        log(f"breakdown: {name} on {count:,} messages")
        if bulk:
            seconds = load_bulk(
                db, data, begin=0, stop=stop, state=LoadState(), label=f"breakdown {name}"
            )
        else:
            seconds = load_direct(db, data, stop)
        db.close()
        variants.append((name, count / seconds))
    variants.append(
        (
            "baseline: plain table + 1 FTS5, executemany",
            count / load_baseline(root / "baseline.db", data, stop),
        )
    )
    micros = await roundtrip_micros(root / "rt.db")
    shutil.rmtree(root, ignore_errors=True)
    api_rate = variants[0][1]
    direct_rate = variants[1][1]
    rows = [
        [name, f"{rate:,.0f}", f"{1e6 / rate * count / stop:,.0f}", f"{rate / api_rate:.1f}x"]
        for name, rate in variants
    ]
    note = (
        f"The API spends {100 * (1 - api_rate / direct_rate):.0f}% of its time outside"
        f" SQLite's write work (thread hop, asyncio; API {api_rate:,.0f} vs direct"
        f" {direct_rate:,.0f} messages/s). For reference, one aiosqlite reader call"
        f" costs {micros:.0f} µs here (SELECT 1)."
    )
    return rows, note


# -- queries --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    kind: str
    text: str
    viewer: str


def weighted_person(rng: random.Random, data: Dataset) -> str:
    return rng.choices(data.people, cum_weights=data.people_cum)[0]


def english_queries(rng: random.Random, data: Dataset, count: int) -> list[Query]:
    content = data.vocab.content
    queries: list[Query] = []
    for i in range(count):
        kind = QUERY_KINDS[i % len(QUERY_KINDS)]
        viewer = weighted_person(rng, data)
        if kind == "common":
            text = rng.choice(content[10:300])
        elif kind == "rare":
            text = rng.choice(content[3_000:])
        elif kind == "code":
            text = rng.choices(data.vocab.code, cum_weights=data.vocab.code_cum)[0]
        else:
            words: list[str] = []
            sample = data.samples[0]
            while len(words) < 2:  # a remembered message of the asker, content words only
                sample = rng.choice(data.samples)
                words = [w for w in dict.fromkeys(sample.words) if w.isalpha()]
                words = [w for w in words if w.lower() not in STOP_WORDS]
            viewer = sample.owner
            if kind == "words":
                text = " ".join(rng.sample(words, min(len(words), rng.randint(2, 4))))
            else:
                a, b = rng.sample(words, 2)
                text = rng.choice(QUESTION_FORMS).format(a=a, b=b)
        queries.append(Query(kind, text, viewer))
    return queries


def cjk_queries(rng: random.Random, data: Dataset, count: int, short: bool) -> list[Query]:
    """CJK words taken from real messages, asked by their author (a match always exists)."""
    queries: list[Query] = []
    if not data.cjk_samples:
        return queries
    while len(queries) < count:
        sample = rng.choice(data.cjk_samples)
        words = [w for w in sample.words if (len(w) == 2) == short]
        if words:
            queries.append(Query("cjk2" if short else "cjk3", rng.choice(words), sample.owner))
    return queries


def naive_match(text: str, *, any_word: bool = False) -> str | None:
    """The baseline's query: the raw words, quoted, AND-ed (or content words OR-ed)."""
    words = re.findall(r"\w+", text.lower())
    if any_word:
        words = [w for w in words if w not in STOP_WORDS and len(w) > 1]
    if not words:
        return None
    return (" OR " if any_word else " ").join(f'"{w}"' for w in dict.fromkeys(words))


def baseline_find(
    db: sqlite3.Connection, text: str, person: str | None, *, any_word: bool = False
) -> list[str]:
    """Session ids of the baseline's top BASELINE_LIMIT rows, deduplicated, in rank order."""
    match = naive_match(text, any_word=any_word)
    if match is None:
        return []
    sql = (  # noqa: S608 - constant fragments; every value is a bound parameter
        "SELECT m.session FROM msgs_fts JOIN msgs m ON m.id = msgs_fts.rowid"
        " WHERE msgs_fts MATCH ?" + (" AND m.person = ?" if person is not None else "")
    ) + " ORDER BY bm25(msgs_fts) LIMIT ?"
    params: tuple[Any, ...] = (
        (match, person, BASELINE_LIMIT) if person is not None else (match, BASELINE_LIMIT)
    )
    return list(dict.fromkeys(row[0] for row in db.execute(sql, params)))


@dataclass(slots=True)
class Timings:
    ms: list[float] = field(default_factory=list)
    found: int = 0  # queries that returned at least one result

    def add(self, seconds: float, results: int) -> None:
        self.ms.append(seconds * 1000)
        self.found += results > 0

    def pct(self, p: float) -> float | None:
        if not self.ms:
            return None
        ordered = sorted(self.ms)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]

    @property
    def hit_rate(self) -> float | None:
        return self.found / len(self.ms) if self.ms else None


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.perf_counter() + seconds
        self.hit = False

    def passed(self) -> bool:
        if time.perf_counter() > self.end:
            if not self.hit:
                log("time budget exhausted: remaining query phases are cut short")
            self.hit = True
        return self.hit


async def time_ours(
    searcher: Searcher, queries: Sequence[Query], *, scoped: bool, deadline: Deadline
) -> dict[str, Timings]:
    by_kind: dict[str, Timings] = {}
    for query in queries:
        if deadline.passed():
            break
        start = time.perf_counter()
        hits, _ = await searcher.find(
            query.text, viewer=query.viewer if scoped else None, limit=SEARCH_LIMIT
        )
        by_kind.setdefault(query.kind, Timings()).add(time.perf_counter() - start, len(hits))
    return by_kind


def time_baseline(
    db: sqlite3.Connection, queries: Sequence[Query], *, scoped: bool, deadline: Deadline
) -> dict[str, Timings]:
    by_kind: dict[str, Timings] = {}
    for query in queries:
        if deadline.passed():
            break
        start = time.perf_counter()
        found = baseline_find(db, query.text, query.viewer if scoped else None)[:SEARCH_LIMIT]
        by_kind.setdefault(query.kind, Timings()).add(time.perf_counter() - start, len(found))
    return by_kind


def merged(by_kind: dict[str, Timings]) -> Timings:
    out = Timings()
    for timings in by_kind.values():
        out.ms += timings.ms
        out.found += timings.found
    return out


# -- the report -----------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    metric: str
    ours: float | None
    base: float | None = None
    target: str = ""
    ok: bool | None = None
    digits: int = 2
    ratio: bool = True


def fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main_table(rows: Sequence[Row]) -> str:
    out = []
    for row in rows:
        ratio = (
            f"{row.ours / row.base:.2f}" if row.ratio and row.ours is not None and row.base else "—"
        )
        ok = "" if row.ok is None else ("yes" if row.ok else "NO")
        out.append(
            [
                row.metric,
                fmt(row.ours, row.digits),
                fmt(row.base, row.digits),
                ratio,
                row.target or "—",
                ok,
            ]
        )
    return table(("metric", "ours", "baseline", "ratio", "target", "ok?"), out)


# -- the run --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark the mnemo archive against a plain FTS5 baseline."
    )
    parser.add_argument("--messages", type=int, default=1_000_000, help="N (default 1,000,000)")
    parser.add_argument("--people", type=int, default=2_000, help="P (default 2,000)")
    parser.add_argument("--queries", type=int, default=300, help="Q per query set (300)")
    parser.add_argument("--facts", type=int, default=200, help="planted facts K (200)")
    parser.add_argument("--dir", type=Path, help="work here instead of a temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--api-messages",
        type=int,
        help="write only the first M messages through append_exchange and bulk-load the"
        " rest into the same schema (default: all N through the API)",
    )
    parser.add_argument(
        "--import-messages",
        type=int,
        help="time import_records on the first M messages (default: all N; 0 skips it)",
    )
    parser.add_argument(
        "--breakdown-messages",
        type=int,
        default=100_000,
        help="prefix used for the ingest breakdown runs (default 100,000; 0 skips them)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=3_600,
        help="time budget; query phases are cut short once it is spent (default 3600)",
    )
    args = parser.parse_args(argv)
    if args.messages < 1_000 or args.people < 10 or args.queries < 1:
        parser.error("need --messages >= 1000, --people >= 10, --queries >= 1")
    return args


async def run(args: argparse.Namespace, work: Path) -> None:
    began = time.perf_counter()
    deadline = Deadline(args.max_seconds)
    n = args.messages
    log(f"generating {n:,} messages for {args.people:,} people (seed {args.seed})")
    start = time.perf_counter()
    data = generate(args.seed, n, args.people, args.facts)
    gen_seconds = time.perf_counter() - start
    # The generated data set is millions of long-lived objects; keep the cyclic GC from
    # re-traversing them during the timed phases (a gateway holds none of this).
    gc.collect()
    gc.freeze()
    n_real = data.messages
    tool_msgs = sum(1 for e in data.exchanges for m in e.messages if m.role == "tool")
    cjk_msgs = sum(len(e.messages) for e in data.exchanges if data.sessions[e.session].cjk)
    log(
        f"generated {n_real:,} messages, {len(data.exchanges):,} exchanges,"
        f" {len(data.sessions):,} sessions in {gen_seconds:.1f}s"
    )

    breakdown = min(args.breakdown_messages, n_real)
    breakdown_rows: list[list[str]] = []
    breakdown_note = ""
    if breakdown:
        breakdown_rows, breakdown_note = await ingest_breakdown(work, data, breakdown)

    # baseline
    base_path = work / "baseline" / "baseline.db"
    base_path.parent.mkdir(parents=True, exist_ok=True)
    base_seconds = load_baseline(base_path, data)
    base_bytes = db_bytes(base_path)

    # ours: the API for the first M messages, bulk for the rest
    api_messages = n_real if args.api_messages is None else min(args.api_messages, n_real)
    cut = data.exchange_cut(api_messages)
    api_count = data.message_count(cut)
    ours_path = work / "ours" / "state.db"
    state = LoadState()
    archive = await Archive.open(ours_path)
    try:
        api_seconds = await load_api(archive, data, cut, state)
        bulk_seconds = 0.0
        if cut < len(data.exchanges):
            bulk_db = connect_sync(ours_path)
            bulk_seconds = load_bulk(
                bulk_db,
                data,
                begin=cut,
                stop=len(data.exchanges),
                state=state,
                label="bulk-load ours (rest)",
            )
            # 10,000-row transactions leave a WAL high-water mark the gateway never would.
            bulk_db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            bulk_db.close()
        ours_bytes = db_bytes(ours_path)
        ours_wal = wal_bytes(ours_path)

        # import_records
        import_target = n_real if args.import_messages is None else args.import_messages
        import_rate: float | None = None
        import_count: int | None = None
        base_import_rate: float | None = None
        import_seconds = 0.0
        if import_target > 0:
            stop = data.exchange_cut(min(import_target, n_real))
            lines = import_lines(data, stop)
            gc.freeze()
            import_path = work / "import" / "state.db"
            progress = Progress("ingest ours (import_records)", len(lines))
            async with await Archive.open(import_path) as importer:
                start = time.perf_counter()
                report = await importer.import_records(
                    lines, progress=lambda done, _total: progress.update(done)
                )
                import_seconds = time.perf_counter() - start
            import_count = report.imported
            import_rate = report.imported / import_seconds
            del lines
            base_import_path = work / "baseline" / "import-prefix.db"
            if stop < len(data.exchanges):  # the baseline rate over the same prefix
                prefix_messages = data.message_count(stop)
                base_import_rate = prefix_messages / load_baseline(base_import_path, data, stop)

        # queries
        qrng = random.Random(args.seed + 1)  # noqa: S311
        english = english_queries(qrng, data, args.queries)
        cjk_short = cjk_queries(qrng, data, args.queries, short=True)
        cjk_long = cjk_queries(qrng, data, args.queries, short=False)
        searcher = Searcher(archive)
        tool = SearchTool(archive)
        base_db = sqlite3.connect(f"file:{base_path}?mode=ro", uri=True)
        base_db.execute("PRAGMA cache_size = -32000")
        warm = english[:20]
        await time_ours(searcher, warm, scoped=False, deadline=Deadline(600))
        time_baseline(base_db, warm, scoped=False, deadline=Deadline(600))
        log(f"timing {len(english)} English queries, global and scoped, ours and baseline")
        ours_global = await time_ours(searcher, english, scoped=False, deadline=deadline)
        ours_scoped = await time_ours(searcher, english, scoped=True, deadline=deadline)
        base_global = time_baseline(base_db, english, scoped=False, deadline=deadline)
        base_scoped = time_baseline(base_db, english, scoped=True, deadline=deadline)
        log("timing SearchTool.call discover (result assembly) and scroll")
        assembled = Timings()
        for query in english:
            if deadline.passed():
                break
            start = time.perf_counter()
            result = await tool.call({"query": query.text}, viewer=query.viewer)
            assembled.add(time.perf_counter() - start, len(result.get("results", [])))
        scroll = Timings()
        srng = random.Random(args.seed + 2)  # noqa: S311
        for _ in range(args.queries):
            if deadline.passed():
                break
            e = srng.randrange(len(data.exchanges))
            exchange = data.exchanges[e]
            plan = data.sessions[exchange.session]
            anchor = state.first_ids[e] + srng.randrange(len(exchange.messages))
            start = time.perf_counter()
            result = await tool.call(
                {"session_id": plan.id, "around_message_id": anchor}, viewer=plan.owner
            )
            scroll.add(time.perf_counter() - start, len(result.get("messages", [])))
            if not result["success"]:
                raise RuntimeError(f"scroll failed: {result}")
        log("timing CJK queries")
        cjk: dict[str, Timings] = {}
        for label, queries in (("2-char", cjk_short), ("3+-char", cjk_long)):
            for scoped in (True, False):
                scope_name = "scoped" if scoped else "global"
                key = f"{label} {scope_name}"
                cjk["ours " + key] = merged(
                    await time_ours(searcher, queries, scoped=scoped, deadline=deadline)
                )
                cjk["base " + key] = merged(
                    time_baseline(base_db, queries, scoped=scoped, deadline=deadline)
                )

        # quality
        log(f"asking {sum(len(f.questions) for f in data.facts)} questions about planted facts")
        quality: dict[str, list[int]] = {}  # kind -> [asked, ours, naive AND, OR]
        examples: list[str] = []
        for fact in data.facts:
            sid = data.sessions[fact.session].id
            for question, kind in fact.questions:
                hits, _ = await searcher.find(question, viewer=fact.owner, limit=SEARCH_LIMIT)
                ours_ok = any(h.session_id == sid for h in hits)
                naive_ok = sid in baseline_find(base_db, question, fact.owner)[:SEARCH_LIMIT]
                any_ok = (
                    sid
                    in baseline_find(base_db, question, fact.owner, any_word=True)[:SEARCH_LIMIT]
                )
                for key in (kind, "all"):
                    counts = quality.setdefault(key, [0, 0, 0, 0])
                    counts[0] += 1
                    counts[1] += ours_ok
                    counts[2] += naive_ok
                    counts[3] += any_ok
                if len(examples) < 6 and kind == "paraphrase":
                    examples.append(f'  fact: "{fact.text}"  asked: "{question}"  found: {ours_ok}')
        base_db.close()
    finally:
        await archive.close()
    sizes = object_sizes(ours_path)
    base_sizes = object_sizes(base_path)

    # -- print ---------------------------------------------------------------------------
    def q(t: dict[str, Timings], p: float) -> float | None:
        return merged(t).pct(p)

    mb = 1024 * 1024
    sessions_n = len(data.sessions)
    api_rate = api_count / api_seconds
    base_rate = n_real / base_seconds
    api_note = "" if api_count == n_real else f" (first {api_count:,})"
    rows = [
        Row("messages", n_real, n_real, digits=0, ratio=False),
        Row(
            f"ingest msg/s, append_exchange 1 txn/exchange{api_note}",
            api_rate,
            base_rate,
            f">= {TARGET_INGEST:,.0f}",
            api_rate >= TARGET_INGEST,
            0,
        ),
    ]
    if import_rate is not None and import_count is not None:
        base_for_import = base_rate if base_import_rate is None else base_import_rate
        rows.append(
            Row(
                f"ingest msg/s, import_records JSONL ({import_count:,} user+assistant)",
                import_rate,
                base_for_import,
                f">= {TARGET_INGEST:,.0f}",
                import_rate >= TARGET_INGEST,
                0,
            )
        )
    rows += [
        Row(f"ingest time s, append_exchange{api_note}", api_seconds, None, digits=1),
        Row(
            "ingest time s, all N (ours: API part + bulk rest)",
            api_seconds + bulk_seconds,
            base_seconds,
            digits=1,
        ),
        Row("database size MB (db + wal)", ours_bytes / mb, base_bytes / mb, digits=1),
        Row("  of which WAL MB", ours_wal / mb, wal_bytes(base_path) / mb, digits=1, ratio=False),
        Row("bytes per message", ours_bytes / n_real, base_bytes / n_real, digits=0),
        Row("discover global p50 ms (Searcher.find)", q(ours_global, 0.5), q(base_global, 0.5)),
        Row("discover global p95 ms", q(ours_global, 0.95), q(base_global, 0.95)),
    ]
    scoped50, scoped95 = q(ours_scoped, 0.5), q(ours_scoped, 0.95)
    rows += [
        Row(
            "discover scoped p50 ms (Searcher.find)",
            scoped50,
            q(base_scoped, 0.5),
            f"<= {TARGET_SCOPED_P50:.0f}",
            None if scoped50 is None else scoped50 <= TARGET_SCOPED_P50,
        ),
        Row(
            "discover scoped p95 ms",
            scoped95,
            q(base_scoped, 0.95),
            f"<= {TARGET_SCOPED_P95:.0f}",
            None if scoped95 is None else scoped95 <= TARGET_SCOPED_P95,
        ),
        Row("discover scoped p50 ms, SearchTool.call (assembly)", assembled.pct(0.5)),
        Row("discover scoped p95 ms, SearchTool.call (assembly)", assembled.pct(0.95)),
        Row("scroll p50 ms, SearchTool.call", scroll.pct(0.5)),
        Row("scroll p95 ms, SearchTool.call", scroll.pct(0.95)),
    ]
    for label in ("2-char", "3+-char"):
        for scope_name in ("scoped", "global"):
            key = f"{label} {scope_name}"
            rows.append(
                Row(f"CJK {key} p50 ms", cjk["ours " + key].pct(0.5), cjk["base " + key].pct(0.5))
            )
    for label in ("2-char", "3+-char"):
        for scope_name in ("scoped", "global"):
            key = f"{label} {scope_name}"
            rows.append(
                Row(
                    f"CJK {key}: share of queries with a result",
                    cjk["ours " + key].hit_rate,
                    cjk["base " + key].hit_rate,
                    "1.00",
                    None
                    if cjk["ours " + key].hit_rate is None
                    else cjk["ours " + key].hit_rate == 1.0,
                    digits=3,
                    ratio=False,
                )
            )
    everything = quality.get("all", [0, 0, 0, 0])
    asked = max(1, everything[0])
    rows += [
        Row(
            f"recall@3 planted facts, owner-scoped ({everything[0]} questions)",
            everything[1] / asked,
            everything[2] / asked,
            digits=3,
            ratio=False,
        ),
        Row(
            "recall@3, vs baseline OR of content words (info)",
            everything[1] / asked,
            everything[3] / asked,
            digits=3,
        ),
    ]

    print()
    print(
        f"mnemo archive benchmark — N={n_real:,} messages ({tool_msgs:,} tool, {cjk_msgs:,} in"
        f" CJK sessions), {sessions_n:,} sessions, {args.people:,} people, Q={args.queries},"
        f" K={len(data.facts)} facts, seed {args.seed}"
    )
    print(
        f"SQLite {sqlite3.sqlite_version}, Python {platform.python_version()},"
        f" {os.cpu_count()} CPUs, {platform.machine()}; work dir {work}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"load average (1, 5, 15 min) at the end: {load} — this benchmark alone keeps it near"
        " 1; more means something else shared the CPUs and the timings are pessimistic"
    )
    if api_count != n_real:
        print(
            f"NOTE: only the first {api_count:,} messages went through append_exchange; the"
            f" other {n_real - api_count:,} were bulk-loaded into the same schema"
            f" ({bulk_seconds:.0f}s) to measure search at full size."
        )
    if deadline.hit:
        print("NOTE: the time budget ran out; some query sets are incomplete.")
    print()
    print(main_table(rows))
    print()
    print("ratio = ours / baseline (ingest and recall: higher is better; ms and MB: lower).")
    print(
        "Targets are the issue's, stated for 1M messages on 2 cores; baseline CJK = naive"
        " MATCH of the raw term on the unicode61 index (no substring search)."
    )
    if breakdown_rows:
        print()
        print(f"Ingest breakdown on the first {breakdown:,} messages (same data, fresh files):")
        print(table(("path", "msg/s", "µs/exchange", "vs API"), breakdown_rows))
        print(breakdown_note)
    print()
    print("Latency by query kind (ms; hits = share of queries with a result):")
    kind_rows = []
    for kind in QUERY_KINDS:
        cells = [kind]
        for timings in (ours_global, ours_scoped, base_global, base_scoped):
            t = timings.get(kind, Timings())
            cells.append(f"{fmt(t.pct(0.5), 1)} / {fmt(t.pct(0.95), 1)} / {fmt(t.hit_rate, 2)}")
        kind_rows.append(cells)
    print(
        table(
            ("kind", "ours global p50/p95/hits", "ours scoped", "base global", "base scoped"),
            kind_rows,
        )
    )
    print()
    print("Database size by object (main file, dbstat):")
    size_rows = [
        [k, f"{v / mb:,.1f}", f"{100 * v / sum(sizes.values()):.0f}%"]
        for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])
    ]
    size_rows += [
        [k, f"{v / mb:,.1f}", "—"] for k, v in sorted(base_sizes.items(), key=lambda kv: -kv[1])
    ]
    print(table(("object", "MB", "share"), size_rows))
    print()
    print("Recall@3 of planted facts by question kind (asked by the fact's owner):")
    quality_rows = [
        [kind, str(c[0]), f"{c[1] / c[0]:.3f}", f"{c[2] / c[0]:.3f}", f"{c[3] / c[0]:.3f}"]
        for kind, c in sorted(quality.items())
    ]
    print(table(("questions", "n", "ours", "baseline AND", "baseline OR"), quality_rows))
    print("Examples (paraphrased questions):")
    print("\n".join(examples))
    print()
    print(
        f"Phases: generate {gen_seconds:.0f}s, baseline {base_seconds:.0f}s, API"
        f" {api_seconds:.0f}s, bulk {bulk_seconds:.0f}s, import {import_seconds:.0f}s;"
        f" total {time.perf_counter() - began:.0f}s."
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    made = args.dir is None
    work = Path(tempfile.mkdtemp(prefix="mnemo-bench-")) if made else args.dir
    work.mkdir(parents=True, exist_ok=True)
    ours = ("ours", "baseline", "import", "breakdown")
    if not made and any((work / d).exists() for d in ours):
        print(f"{work} already holds a benchmark run; remove it or pick another --dir")
        return 2
    try:
        asyncio.run(run(args, work))
    finally:
        if args.keep:
            log(f"kept the databases under {work}")
        elif made:
            shutil.rmtree(work, ignore_errors=True)
        else:
            for name in ours:
                shutil.rmtree(work / name, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
