"""The archive benchmark's queries and their timing: English query sets of five kinds
(common word, rare word, words of a real message, a question, a file name or URL) and CJK
words taken from real messages, each asked by a plausible person; the baseline's naive
MATCH query; ``Timings`` (latencies and hit counts, percentiles), the run's ``Deadline``,
and the loops that time ``Searcher.find`` and the baseline by query kind, ``SearchTool``'s
discover and scroll, and the CJK query sets.
"""

from __future__ import annotations

import math
import random
import re
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.tools.search import SearchTool
from bench.archive_common import BASELINE_LIMIT, SEARCH_LIMIT, log
from bench.archive_data import Dataset
from memory.archive.query import STOP_WORDS
from memory.archive.search import Searcher

# -- queries --------------------------------------------------------------------------------


QUESTION_FORMS = (
    "what did I say about {a}?",
    "when did we talk about {a} and {b}?",
    "how did we fix the {a} {b} thing",
    "do you remember the {a} from last month?",
    "where did I put the {a} {b}?",
    "what was the {a} issue with {b}?",
)
QUERY_KINDS = ("common", "rare", "words", "question", "code")


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


async def time_assembly(
    tool: SearchTool, queries: Sequence[Query], *, deadline: Deadline
) -> Timings:
    """``SearchTool.call`` discover, person-scoped: search plus result assembly."""
    assembled = Timings()
    for query in queries:
        if deadline.passed():
            break
        start = time.perf_counter()
        result = await tool.call({"query": query.text}, viewer=query.viewer)
        assembled.add(time.perf_counter() - start, len(result.get("results", [])))
    return assembled


async def time_scroll(
    tool: SearchTool,
    data: Dataset,
    first_ids: Sequence[int],
    *,
    count: int,
    rng: random.Random,
    deadline: Deadline,
) -> Timings:
    """``SearchTool.call`` scroll around a random message, asked by the session's owner;
    ``first_ids`` holds the first message id of each exchange, as loaded."""
    scroll = Timings()
    for _ in range(count):
        if deadline.passed():
            break
        e = rng.randrange(len(data.exchanges))
        exchange = data.exchanges[e]
        plan = data.sessions[exchange.session]
        anchor = first_ids[e] + rng.randrange(len(exchange.messages))
        start = time.perf_counter()
        result = await tool.call(
            {"session_id": plan.id, "around_message_id": anchor}, viewer=plan.owner
        )
        scroll.add(time.perf_counter() - start, len(result.get("messages", [])))
        if not result["success"]:
            raise RuntimeError(f"scroll failed: {result}")
    return scroll


async def time_cjk(
    searcher: Searcher,
    db: sqlite3.Connection,
    short: Sequence[Query],
    long: Sequence[Query],
    *,
    deadline: Deadline,
    scan: Searcher | None = None,
) -> dict[str, Timings]:
    """Both CJK query sets, scoped then global, ours then the baseline's; keyed
    ``"ours 2-char scoped"``, ``"base 3+-char global"`` and so on. ``scan``: a searcher
    without the CJK gram index, timed on the 2-character set right after ours
    (``"scan 2-char scoped"``, ``"scan 2-char global"``)."""
    cjk: dict[str, Timings] = {}
    for label, queries in (("2-char", short), ("3+-char", long)):
        for scoped in (True, False):
            scope_name = "scoped" if scoped else "global"
            key = f"{label} {scope_name}"
            cjk["ours " + key] = merged(
                await time_ours(searcher, queries, scoped=scoped, deadline=deadline)
            )
            if scan is not None and label == "2-char":
                cjk["scan " + key] = merged(
                    await time_ours(scan, queries, scoped=scoped, deadline=deadline)
                )
            cjk["base " + key] = merged(
                time_baseline(db, queries, scoped=scoped, deadline=deadline)
            )
    return cjk
