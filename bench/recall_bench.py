#!/usr/bin/env python3
"""Retrieval quality of ``session_search``: message-level recall@3/5/10 on the recall data
set (``bench/recall_data.py``), beside two plain FTS5 baselines.

For one bank (``heldout`` unless told) it generates the chats and questions, writes every
message into a fresh archive through the archive's own write path (``Archive.open``,
``start_session``, ``append_exchange`` once per exchange, as ``agent_core.agent`` writes a
turn) and into two FTS5 tables of a separate plain sqlite3 database (``unicode61`` and
``porter unicode61``). Then, for each question and as the person who owns it:

* **ours**: the real ``session_search`` tool (``agent_core.tools.search``), discover mode,
  default settings except ``limit`` 10; the ranking is the order in which the JSON the
  model reads shows the matches (each result's matching messages, best first, results in
  order);
* **ours + context**: every message id that JSON shows, in order of appearance (the
  matches' neighbours included);
* **fts5** / **porter**: the question's content words (lower-cased, stop and question words
  removed, each double-quoted) OR-ed, bm25-ranked, top 10 of that person's messages;
* **local** (``--local``): the local memory provider's fused search (vectors and words),
  after every message was embedded.

recall@k of a question is the fraction of its evidence ids among the first k message ids;
the table averages it per kind and overall. It also prints the tool's latency (per discover
call, this run) and the size of the JSON it returns, at ``limit`` 10 and with the default
arguments (the question alone, as the model usually calls it). Local, deterministic and bounded: no
network, everything under a temporary directory that is removed at the end.

    .venv/bin/python bench/recall_bench.py [--bank tune|heldout] [--people N] [--json FILE]
    make bench-recall BENCH_ARGS="--bank tune --misses 3"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from agent_core.tools.search import SearchTool, session_search_tool
from bench.recall_bank_base import KINDS
from bench.recall_data import BANKS, Dataset, Message, Question, Session, generate
from memory.archive import Archive, NewMessage, SessionSpec

SYSTEMS = ("ours", "ours + context", "fts5", "porter", "local")
BASELINES = {  # table name -> tokenizer; only the stemmer differs
    "fts5": "unicode61 remove_diacritics 2",
    "porter": "porter unicode61 remove_diacritics 2",
}
KS = (3, 5, 10)
LIMIT = 10  # results asked of the tool (its maximum), messages taken from a baseline
DEFAULT_PEOPLE = 64  # about a minute on 2 cores, ingest included
PLATFORM = "telegram"
# The baselines' query: a small fixed list, independent of the archive's own STOP_WORDS.
_BASELINE_STOP_TEXT = """a an the and or of in on at to for from with by about as into after before
    during is are was were be been being do does did has have had it its this that these those
    he she his her hers him they them their theirs i me my you your we our s
    what which who whom whose where when why how there than then"""
BASELINE_STOP = frozenset(_BASELINE_STOP_TEXT.split())
WORD = re.compile(r"\w+")


# -- recall ---------------------------------------------------------------------------------


def recall_at(ranking: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The fraction of ``evidence`` among the first ``k`` ids of ``ranking``."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    return len(wanted.intersection(ranking[:k])) / len(wanted)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


# -- the baselines --------------------------------------------------------------------------


def baseline_query(text: str) -> str | None:
    """The question's content words, each quoted, OR-ed (None: nothing left to search)."""
    words = [w for w in WORD.findall(text.lower()) if w not in BASELINE_STOP]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words)) or None


def build_baselines(path: Path, data: Dataset, content: dict[str, str]) -> sqlite3.Connection:
    """``msgs`` and one external-content FTS5 table per baseline, filled with the same text
    the archive stores (``content``: generator id -> text)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE msgs (id INTEGER PRIMARY KEY, gid TEXT, person TEXT, content TEXT)")
    for table, tokenizer in BASELINES.items():
        db.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(content, content='msgs',"
            f" content_rowid='id', tokenize='{tokenizer}')"
        )
    rows = [
        (m.id, session.person, content[m.id]) for session in data.sessions for m in session.messages
    ]
    db.execute("BEGIN")
    db.executemany("INSERT INTO msgs (gid, person, content) VALUES (?, ?, ?)", rows)
    for table in BASELINES:
        db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")  # noqa: S608 - ours
    db.execute("COMMIT")
    return db


def baseline_rank(db: sqlite3.Connection, table: str, person: str, text: str) -> list[str]:
    """The top ``LIMIT`` of ``person``'s messages for ``text``, by bm25."""
    if table not in BASELINES:
        raise ValueError(f"unknown baseline {table!r}")
    match = baseline_query(text)
    if match is None:
        return []
    sql = (  # the table name is one of BASELINES (checked above); values are bound
        f"SELECT m.gid FROM {table} JOIN msgs m ON m.id = {table}.rowid"  # noqa: S608
        f" WHERE {table} MATCH ? AND m.person = ? ORDER BY bm25({table}) LIMIT ?"
    )
    rows = db.execute(sql, (match, person, LIMIT)).fetchall()
    return [row[0] for row in rows]


# -- ours -----------------------------------------------------------------------------------


def stored_text(message: Message, *, headers: bool = True) -> str:
    """What the archive holds for a message: a user message carries the header line the
    agent writes for the model (``agent_core.agent.Agent.user_message``; no speaker in a
    private chat), unless ``headers`` is off."""
    if headers and message.role == "user":
        return f"[{message.at.strftime('%Y-%m-%d %H:%M UTC')}]\n{message.text}"
    return message.text


def exchanges(session: Session) -> Iterator[list[Message]]:
    """A session's turns: each user message with the replies that follow it."""
    turn: list[Message] = []
    for message in session.messages:
        if message.role == "user" and turn:
            yield turn
            turn = []
        turn.append(message)
    if turn:
        yield turn


async def ingest(archive: Archive, data: Dataset, content: dict[str, str]) -> dict[int, str]:
    """Every session and message through the archive's write path, each message's text
    from ``content`` (generator id -> text); returns archive id -> generator id."""
    ids: dict[int, str] = {}
    for session in data.sessions:
        person = session.person
        await archive.start_session(
            SessionSpec(
                id=f"bench-{session.id.replace('/', '-')}",
                platform=PLATFORM,
                chat_id=person,
                chat_type="private",
                people=(person,),
                session_key=f"{PLATFORM}:{person}",
                started_at=session.started.timestamp(),
            )
        )
        for turn in exchanges(session):
            rows = [
                NewMessage(
                    "user" if m.role == "user" else "assistant",
                    content[m.id],
                    speaker=person if m.role == "user" else None,
                    created_at=m.at.timestamp(),
                )
                for m in turn
            ]
            new = await archive.append_exchange(
                f"bench-{session.id.replace('/', '-')}", rows, people=[person]
            )
            ids.update(zip(new, (m.id for m in turn), strict=True))
    return ids


def hit_ids(payload: dict[str, Any]) -> list[int]:
    """The matches of each result (best first), results in order."""
    return [m["id"] for result in payload.get("results", []) for m in result["matches"]]


def shown_ids(payload: Any) -> list[int]:
    """Every message id the JSON shows, in order of appearance (first time only)."""
    seen: dict[int, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "id" in node and "role" in node and isinstance(node["id"], int):
                seen.setdefault(node["id"], None)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(payload)
    return list(seen)


# -- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    bank: str = "heldout"
    people: int = DEFAULT_PEOPLE
    sessions: int = 25
    seed: int = 7
    headers: bool = True  # user messages as the agent archives them, with the time header
    local: bool = False  # also the local memory provider's search (needs mnemo[local])


@dataclass
class Result:
    config: Config
    messages: int
    sessions: int
    questions: tuple[Question, ...]
    rankings: dict[str, dict[str, list[str]]]  # system -> question id -> message ids
    latencies_ms: list[float] = field(default_factory=list)
    output_chars: list[int] = field(default_factory=list)
    default_chars: list[int] = field(default_factory=list)  # the call with no limit given
    seconds: dict[str, float] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # message id -> text (for --misses)

    def recall(self, system: str, kind: str | None, k: int) -> float:
        """Mean recall@k of ``system`` over the questions of ``kind`` (None: all)."""
        chosen = [q for q in self.questions if kind is None or q.kind == kind]
        if not chosen:
            return 0.0
        ranked = self.rankings[system]
        return sum(recall_at(ranked[q.id], q.evidence, k) for q in chosen) / len(chosen)

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(system for system in SYSTEMS if self.rankings.get(system))

    def counts(self) -> dict[str, int]:
        return {kind: sum(q.kind == kind for q in self.questions) for kind in KINDS}


async def run(config: Config, workdir: Path) -> Result:
    """Generate, ingest, ask every question of every system; files go under ``workdir``."""
    started = time.perf_counter()
    data = generate(
        bank=config.bank,
        people=config.people,
        sessions_per_person=config.sessions,
        seed=config.seed,
    )
    messages = [m for s in data.sessions for m in s.messages]
    content = {m.id: stored_text(m, headers=config.headers) for m in messages}
    rankings: dict[str, dict[str, list[str]]] = {system: {} for system in SYSTEMS}
    if not config.local:
        del rankings["local"]
    result = Result(config, len(messages), len(data.sessions), data.questions, rankings)
    result.texts = {m.id: f"{m.role}: {m.text}" for m in messages}
    seconds = result.seconds
    seconds["generate"] = time.perf_counter() - started

    mark = time.perf_counter()
    baseline = build_baselines(workdir / "baseline.db", data, content)
    seconds["ingest baselines"] = time.perf_counter() - mark
    try:
        for question in data.questions:
            for table in BASELINES:
                rankings[table][question.id] = baseline_rank(
                    baseline, table, question.person, question.text
                )
    finally:
        baseline.close()

    mark = time.perf_counter()
    archive = await Archive.open(workdir / "state.db")
    try:
        to_gid = await ingest(archive, data, content)
        seconds["ingest archive"] = time.perf_counter() - mark
        search = SearchTool(archive)
        tools = {
            person: session_search_tool(search, person=person, current_session=lambda: None)
            for person in dict.fromkeys(q.person for q in data.questions)
        }
        mark = time.perf_counter()
        for question in data.questions:
            arguments = json.dumps({"query": question.text, "limit": LIMIT})
            call = time.perf_counter()
            text = await tools[question.person].invoke(arguments)
            result.latencies_ms.append((time.perf_counter() - call) * 1000)
            result.output_chars.append(len(text))
            payload = json.loads(text)
            if payload.get("success") is not True or payload.get("mode") != "discover":
                raise RuntimeError(f"{question.id}: session_search failed: {text[:300]}")
            rankings["ours"][question.id] = [to_gid[i] for i in hit_ids(payload)]
            rankings["ours + context"][question.id] = [to_gid[i] for i in shown_ids(payload)]
            plain = await tools[question.person].invoke(json.dumps({"query": question.text}))
            result.default_chars.append(len(plain))
        seconds["ask ours"] = time.perf_counter() - mark
        if config.local:
            await ask_local(archive, data.questions, to_gid, result)
    finally:
        await archive.close()
    seconds["total"] = time.perf_counter() - started
    return result


async def ask_local(
    archive: Archive, questions: Sequence[Question], to_gid: dict[int, str], result: Result
) -> None:
    """The local provider: embed every message (timed), then its fused search per question,
    as the person who owns it (``min_similarity`` 0: a ranking, not a prefetch's cut)."""
    from memory.providers import Subject  # noqa: PLC0415 - only with --local
    from memory.providers.local import LocalProvider  # noqa: PLC0415

    provider = LocalProvider(archive)
    await provider.start(index=False)
    mark = time.perf_counter()
    await provider.reindex()
    result.seconds["embed local"] = time.perf_counter() - mark
    mark = time.perf_counter()
    for question in questions:
        found = await provider.search(
            Subject(question.person), question.text, limit=LIMIT, min_similarity=0.0
        )
        result.rankings["local"][question.id] = [to_gid[item.message_id] for item in found]
    result.seconds["ask local"] = time.perf_counter() - mark
    await provider.aclose()


# -- the report -----------------------------------------------------------------------------


def header(result: Result) -> str:
    config = result.config
    return (
        f"recall benchmark: bank {config.bank}, {config.people} people, {result.sessions}"
        f" sessions, {result.messages:,} messages, {len(result.questions)} questions"
        f" (seed {config.seed}{'' if config.headers else ', no time headers'});"
        f" Python {platform.python_version()},"
        f" SQLite {sqlite3.sqlite_version}"
    )


def render(result: Result) -> str:
    """The recall table (kinds x systems), then the tool's latency and output size."""
    counts = result.counts()
    cell = 18
    rows = [
        f"{'':12}{'':>5}" + "".join(f" | {system:<{cell - 3}}" for system in result.systems),
        f"{'kind':12}{'n':>5}"
        + "".join(" | " + "".join(f"{'@' + str(k):>5}" for k in KS) for _ in result.systems),
    ]
    for kind in (*KINDS, None):
        n = counts[kind] if kind is not None else len(result.questions)
        line = f"{kind or 'all':12}{n:>5}"
        for system in result.systems:
            line += " | " + "".join(f"{result.recall(system, kind, k):5.2f}" for k in KS)
        rows.append(line)
    rows.insert(2, "-" * len(rows[1]))
    rows.insert(len(rows) - 1, "-" * len(rows[1]))
    shown = [len(ids) for ids in result.rankings["ours + context"].values()]
    every = {kind or "all": result.recall("ours + context", kind, 10**6) for kind in (*KINDS, None)}
    latency = result.latencies_ms
    rows += [
        "",
        f"ours + context, every id the JSON shows (mean {sum(shown) / max(1, len(shown)):.1f}"
        " ids a call): " + ", ".join(f"{kind} {value:.2f}" for kind, value in every.items()),
        f"session_search discover, limit {LIMIT}: latency p50 {percentile(latency, 50):.1f}"
        f" ms, p95 {percentile(latency, 95):.1f} ms;"
        f" output mean {sum(result.output_chars) / max(1, len(result.output_chars)):,.0f}"
        f" chars, p95 {percentile(result.output_chars, 95):,.0f}, max"
        f" {max(result.output_chars, default=0):,} ({len(result.latencies_ms)} calls)",
        f"session_search discover, default arguments (limit 3): output mean"
        f" {sum(result.default_chars) / max(1, len(result.default_chars)):,.0f} chars, p95"
        f" {percentile(result.default_chars, 95):,.0f},"
        f" max {max(result.default_chars, default=0):,}",
        "seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in result.seconds.items()),
    ]
    return "\n".join(rows)


def misses(result: Result, per_kind: int) -> str:
    """Up to ``per_kind`` questions of each kind that ours missed at @10, with their evidence
    and what ours showed instead (for developing on ``tune``; never used on ``heldout``)."""
    if result.config.bank == "heldout":
        raise ValueError("the held-out bank is not inspected: use --bank tune")
    lines = []
    for kind in KINDS:
        shown = 0
        for question in result.questions:
            ours = result.rankings["ours"][question.id]
            if question.kind != kind or recall_at(ours, question.evidence, 10) == 1.0:
                continue
            if shown == per_kind:
                break
            shown += 1
            lines.append(f"[{kind}] {question.id}: {question.text}  ->  {question.answer}")
            for mid in question.evidence:
                session = mid.rsplit("/", 1)[0]
                same = [hit for hit in ours if hit.rsplit("/", 1)[0] == session]
                where = (
                    f"found at {ours.index(mid) + 1}"
                    if mid in ours
                    else f"its session at {ours.index(same[0]) + 1} as {same[0]}"
                    if same
                    else "its session not in the results"
                )
                lines.append(f"    evidence {mid} ({where}): {result.texts[mid]}")
            for rank, mid in enumerate(ours[:3], 1):
                lines.append(f"    ours {rank}. {mid}: {result.texts[mid]}")
    return "\n".join(lines)


def figures(result: Result) -> dict[str, Any]:
    """What ``--json`` writes."""
    config = result.config
    return {
        "bank": config.bank,
        "people": config.people,
        "sessions_per_person": config.sessions,
        "seed": config.seed,
        "headers": config.headers,
        "sessions": result.sessions,
        "messages": result.messages,
        "questions": result.counts() | {"all": len(result.questions)},
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "recall": {
            system: {
                kind or "all": {str(k): round(result.recall(system, kind, k), 4) for k in KS}
                for kind in (*KINDS, None)
            }
            for system in result.systems
        },
        "latency_ms": {
            "p50": round(percentile(result.latencies_ms, 50), 2),
            "p95": round(percentile(result.latencies_ms, 95), 2),
        },
        "default_chars": {
            "mean": round(sum(result.default_chars) / max(1, len(result.default_chars)), 1),
            "p95": percentile(result.default_chars, 95),
            "max": max(result.default_chars, default=0),
        },
        "output_chars": {
            "mean": round(sum(result.output_chars) / max(1, len(result.output_chars)), 1),
            "p95": percentile(result.output_chars, 95),
            "max": max(result.output_chars, default=0),
        },
        "seconds": {name: round(value, 2) for name, value in result.seconds.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--bank",
        choices=sorted(BANKS),
        default="heldout",
        help="heldout (default) reports; tune is the one to develop against",
    )
    parser.add_argument("--people", type=int, default=DEFAULT_PEOPLE)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per person")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-headers",
        action="store_true",
        help="store user messages without the agent's [time] header line",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures")
    parser.add_argument(
        "--local", action="store_true", help="also the local memory provider (mnemo[local])"
    )
    parser.add_argument(
        "--misses",
        type=int,
        default=0,
        metavar="N",
        help="print N questions of each kind that ours missed (tune only)",
    )
    args = parser.parse_args(argv)
    if args.misses and args.bank == "heldout":
        parser.error(
            "--misses reads the questions: only with --bank tune (heldout is not tuned on)"
        )
    config = Config(
        args.bank, args.people, args.sessions, args.seed, not args.no_headers, args.local
    )
    with tempfile.TemporaryDirectory(prefix="mnemo-recall-") as workdir:
        result = asyncio.run(run(config, Path(workdir)))
    print(header(result))
    print(render(result))
    if args.misses:
        print("\n" + misses(result, args.misses))
    if args.json:
        args.json.write_text(json.dumps(figures(result), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
