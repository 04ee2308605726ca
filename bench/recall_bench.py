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
* with ``--local``, after every message was embedded (``bench/recall_systems.py``):
  **ours + local**, the same tool with the local memory provider's ranking by meaning
  fused into discover, as the agent wires it; and **local**, the provider's own fused
  search (vectors and words).

The tools and the provider are told what each person is called (their display name,
``memory.people.names_of``), as the gateway tells them; ``--no-names`` leaves it out.

recall@k of a question is the fraction of its evidence ids among the first k message ids;
the table averages it per kind and overall. It also prints each tool's latency (per
discover call, this run) and the size of the JSON it returns, at ``limit`` 10 and with the
default arguments (the question alone, as the model usually calls it). Local,
deterministic and bounded: no network, everything under a temporary directory that is
removed at the end (``--embed-cache DIR`` keeps the embeddings of the messages there).

    .venv/bin/python bench/recall_bench.py [--bank tune|heldout] [--people N] [--json FILE]
    make bench-recall BENCH_ARGS="--bank tune --misses 3"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from agent_core.tools.search import SearchTool
from bench.recall_bank_base import KINDS
from bench.recall_data import BANKS, Dataset, Message, Question, Session, generate
from bench.recall_report import figures, header, misses, recall_at, render
from bench.recall_systems import (
    LIMIT,
    Calls,
    ask_tool,
    fused_tools,
    local_search,
    start_provider,
    tools_for,
)
from memory.archive import Archive, NewMessage, SessionSpec
from memory.people import names_of

SYSTEMS = ("ours", "ours + local", "ours + context", "fts5", "porter", "local")
TOOLS = ("ours", "ours + local")  # the systems that are the session_search tool
LOCAL = ("ours + local", "local")  # the systems that need --local
BASELINES = {  # table name -> tokenizer; only the stemmer differs
    "fts5": "unicode61 remove_diacritics 2",
    "porter": "porter unicode61 remove_diacritics 2",
}
DEFAULT_PEOPLE = 64  # about a minute on 2 cores, ingest included
PLATFORM = "telegram"
# The baselines' query: a small fixed list, independent of the archive's own STOP_WORDS.
_BASELINE_STOP_TEXT = """a an the and or of in on at to for from with by about as into after before
    during is are was were be been being do does did has have had it its this that these those
    he she his her hers him they them their theirs i me my you your we our s
    what which who whom whose where when why how there than then"""
BASELINE_STOP = frozenset(_BASELINE_STOP_TEXT.split())
WORD = re.compile(r"\w+")


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
    agent writes for the model (``agent_core.conversation.user_message``; no speaker in a
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


# -- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    bank: str = "heldout"
    people: int = DEFAULT_PEOPLE
    sessions: int = 25
    seed: int = 7
    headers: bool = True  # user messages as the agent archives them, with the time header
    local: bool = False  # also the local memory provider's search (needs mnemo[local])
    embed_cache: Path | None = None  # keep the messages' embeddings here (bench only)
    names: bool = True  # the tool and the provider are told what each person is called


@dataclass
class Result:
    config: Config
    messages: int
    sessions: int
    questions: tuple[Question, ...]
    rankings: dict[str, dict[str, list[str]]]  # system -> question id -> message ids
    calls: dict[str, Calls] = field(default_factory=dict)  # a tool system -> its calls
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
    rankings["ours + local + context"] = {}  # not a column: the line under the table
    if not config.local:
        for system in (*LOCAL, "ours + local + context"):
            del rankings[system]
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
        asked = dict.fromkeys(q.person for q in data.questions)
        called = dict(data.names) if config.names else {}
        people = {person: names_of(called.get(person, "")) for person in asked}
        mark = time.perf_counter()
        result.calls["ours"] = Calls()
        tools = tools_for(SearchTool(archive), people)
        pair = (rankings["ours"], rankings["ours + context"])
        await ask_tool(tools, data.questions, to_gid, pair, result.calls["ours"])
        seconds["ask ours"] = time.perf_counter() - mark
        if config.local:
            await ask_local(archive, data.questions, people, to_gid, result)
    finally:
        await archive.close()
    seconds["total"] = time.perf_counter() - started
    return result


async def ask_local(
    archive: Archive,
    questions: Sequence[Question],
    people: Mapping[str, Sequence[str]],
    to_gid: dict[int, str],
    result: Result,
) -> None:
    """Embed every message (timed), then ask ``ours + local`` and ``local``."""
    provider, result.seconds["embed local"] = await start_provider(
        archive, result.config.embed_cache
    )
    try:
        mark = time.perf_counter()
        calls = result.calls["ours + local"] = Calls()
        tools = fused_tools(archive, provider, people, calls)
        pair = (result.rankings["ours + local"], result.rankings["ours + local + context"])
        await ask_tool(tools, questions, to_gid, pair, calls)
        result.seconds["ask ours + local"] = time.perf_counter() - mark
        mark = time.perf_counter()
        result.rankings["local"] = await local_search(provider, questions, to_gid, people)
        result.seconds["ask local"] = time.perf_counter() - mark
    finally:
        await provider.aclose()


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
        "--embed-cache",
        type=Path,
        metavar="DIR",
        help="with --local: keep the messages' embeddings in DIR for the next run",
    )
    parser.add_argument(
        "--no-names",
        action="store_true",
        help="do not tell the tool and the provider what each person is called",
    )
    parser.add_argument(
        "--misses",
        type=int,
        default=0,
        metavar="N",
        help="print N questions of each kind that a tool missed (tune only)",
    )
    parser.add_argument(
        "--misses-of", choices=TOOLS, default="ours", help="the tool --misses shows"
    )
    args = parser.parse_args(argv)
    if args.misses and args.bank == "heldout":
        parser.error(
            "--misses reads the questions: only with --bank tune (heldout is not tuned on)"
        )
    if args.misses_of not in ("ours",) and not args.local:
        parser.error(f"--misses-of {args.misses_of} needs --local")
    config = Config(
        args.bank,
        args.people,
        args.sessions,
        args.seed,
        not args.no_headers,
        args.local,
        args.embed_cache,
        not args.no_names,
    )
    with tempfile.TemporaryDirectory(prefix="mnemo-recall-") as workdir:
        result = asyncio.run(run(config, Path(workdir)))
    print(header(result))
    print(render(result))
    if args.misses:
        print("\n" + misses(result, args.misses, args.misses_of))
    if args.json:
        args.json.write_text(json.dumps(figures(result), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
