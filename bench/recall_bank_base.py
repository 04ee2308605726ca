"""What a recall bank is made of, and the notebook its stories write into.

A *bank* (``recall_bank_tune``, ``recall_bank_heldout``) is two *voices*: one for people who
chat in a language with spaces, one for a CJK speaker. A voice has its people's names, its
question templates, a *story* function and small-talk generators. The story function gets a
``Story`` for one person (their name, a random source, the dates of their sessions) and
writes into it:

- *plants*: the messages that state a fact ("we adopted a beagle named Biscuit"), each under
  a key, in a given session, with an optional assistant reply (which must not repeat the
  answer) and an optional assistant *recap* that does (it becomes evidence too);
- *mentions*: distractors about the same people, animals and places that state no answer;
- *asks*: candidate questions, each naming the plant keys that hold its answer.

``bench/recall_data.py`` turns that into sessions and labelled questions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

KINDS = ("single", "multi-hop", "temporal", "paraphrase")

# Relative expressions a plant may use for when something happened, in days before the
# message. The tests resolve month answers with the same table.
RELATIVE_DAYS: Mapping[str, int] = {
    "today": 0,
    "this morning": 0,
    "yesterday": 1,
    "the day before yesterday": 2,
    "last week": 7,
    "a week ago": 7,
    "two weeks ago": 14,
    "今天": 0,
    "昨天": 1,
    "前天": 2,
    "上周": 7,
    "上个星期": 7,
    "今日": 0,
    "昨日": 1,
    "おととい": 2,
    "先週": 7,
}

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

T = TypeVar("T")


def a(word: str) -> str:
    """The word with its indefinite article: "a lawyer", "an ICU nurse"."""
    return f"{'an' if word[:1] in 'aeiouAEIO' else 'a'} {word}"


def month_label(when: datetime, lang: str) -> str:
    """How a month answer is written: "March 2025", or "2025年3月" in CJK voices."""
    if lang == "en":
        return f"{MONTHS[when.month - 1]} {when.year}"
    return f"{when.year}年{when.month}月"


@dataclass
class Plant:
    key: str
    session: int
    text: str
    reply: str | None = None
    recap: str | None = None


@dataclass(frozen=True)
class Mention:
    session: int
    text: str
    reply: str | None = None


@dataclass(frozen=True)
class Ask:
    kind: str
    template: str
    text: str
    keys: tuple[str, ...]
    answer: str


@dataclass
class Story:
    """One person's facts, distractors and candidate questions, before layout."""

    rng: random.Random
    name: str
    lang: str
    dates: tuple[datetime, ...]
    templates: Mapping[str, str]
    plants: dict[str, Plant] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    @property
    def n(self) -> int:
        return len(self.dates)

    def pick(self, pool: Sequence[T]) -> T:
        """A random item of pool whose text this person has not used yet (names, places)."""
        fresh = [x for x in pool if str(x) not in self.used]
        if not fresh:
            raise ValueError(f"pool exhausted for {self.name}: {pool!r}")
        choice = self.rng.choice(fresh)
        self.used.add(str(choice))
        return choice

    def one(self, options: Sequence[str], **slots: str) -> str:
        """One phrasing of several, filled in."""
        return self.rng.choice(options).format(**slots)

    def chain(self, k: int, lo: int = 0, hi: int | None = None) -> list[int]:
        """k distinct sessions in lo..hi (inclusive), in order: events that follow each other."""
        top = self.n - 1 if hi is None else min(hi, self.n - 1)
        return sorted(self.rng.sample(range(lo, top + 1), k))

    def at(self, lo: float, hi: float) -> int:
        """A session between the fractions lo and hi of this person's timeline."""
        return self.rng.randint(round(lo * (self.n - 1)), round(hi * (self.n - 1)))

    def plant(
        self, key: str, session: int, text: str, reply: str | None = None, recap: str | None = None
    ) -> None:
        if key in self.plants:
            raise ValueError(f"plant {key!r} twice")
        self.plants[key] = Plant(key, session, text, reply, recap)

    def mention(self, session: int, text: str, reply: str | None = None) -> None:
        self.mentions.append(Mention(session, text, reply))

    def scatter(self, lo: int, hi: int, items: Sequence[tuple[str, str]], count: int) -> None:
        """Up to count (text, reply) distractors drawn from items, in random sessions lo..hi."""
        if hi < lo:
            return
        for text, reply in self.rng.sample(list(items), min(count, len(items))):
            self.mention(self.rng.randint(lo, hi), text, reply)

    def ask(self, kind: str, template: str, answer: str, *keys: str, **slots: str) -> None:
        assert kind in KINDS, kind
        text = self.templates[template].format(name=self.name, **slots)
        self.asks.append(Ask(kind, template, text, keys, answer))

    def month(self, session: int, days_back: int = 0) -> str:
        return month_label(self.dates[session] - timedelta(days=days_back), self.lang)

    def when(self, options: Sequence[str]) -> tuple[str, int]:
        """A relative expression of RELATIVE_DAYS and its days back."""
        phrase = self.rng.choice(options)
        return phrase, RELATIVE_DAYS[phrase]

    def current(self, chain: Sequence[tuple[int, T]], session: int) -> tuple[int, T]:
        """The entry of a (session, value) chain that held at session (the first before any)."""
        found = chain[0]
        for entry in chain:
            if entry[0] <= session:
                found = entry
        return found


Turns = list[tuple[str, str]]  # (role, text), role "user" or "assistant"


@dataclass(frozen=True)
class Voice:
    lang: str  # "en", "zh", "ja"
    names: tuple[tuple[str, str], ...]  # (display name, id slug)
    templates: Mapping[str, str]
    story: Callable[[Story], None]
    filler: Callable[[random.Random], Turns]  # one small-talk exchange
    opener: Callable[[random.Random, int], Turns]  # how a session starts, at this hour
    ack: tuple[str, ...]  # the assistant's reply to a plant without its own
    recap_asks: tuple[str, ...]  # the user asking for a recap of what was just said
    follow_ups: tuple[str, ...]  # what the assistant may add to a reply ("Want to talk?")


@dataclass(frozen=True)
class Bank:
    name: str
    latin: Voice
    cjk: Voice
