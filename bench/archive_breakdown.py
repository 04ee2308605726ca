"""The archive benchmark's ingest breakdown: where the per-exchange time goes. The same
prefix of the data set goes, each time into a fresh file, through the archive API (with and
without the CJK gram index), through the archive's own write transactions called directly
(with and without the trigram index), through ``executemany`` (with and without it) and
into the baseline; the exchanges of the CJK sessions alone go through the API with and
without the gram index; one aiosqlite round trip is timed for reference. The result is the
rows of the breakdown table and a note.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path

from bench.archive_common import BATCH_MESSAGES, log
from bench.archive_data import Dataset, Exchange
from bench.archive_load import (
    LoadState,
    connect_sync,
    load_baseline,
    load_bulk,
    session_spec,
)
from memory.archive import writer
from memory.archive.database import Archive
from memory.archive.writer import ensure_session, insert_exchange

CJK_ONLY_MESSAGES = 20_000  # at most this many messages of CJK sessions for their own rows


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


@contextlib.contextmanager
def without_cjk_index() -> Iterator[None]:
    """The writer as before m007: it adds no CJK gram rows (the triggers that remove and
    re-scope them stay, and find none)."""
    saved = getattr(writer, "has_cjk")  # noqa: B009 - the name the writer calls
    setattr(writer, "has_cjk", _never)  # noqa: B010 - a plain function, no mock's overhead
    try:
        yield
    finally:
        setattr(writer, "has_cjk", saved)  # noqa: B010


def _never(_text: str) -> bool:
    return False


async def api_rate(path: Path, data: Dataset, exchanges: Sequence[Exchange]) -> float:
    """Messages/s of ``exchanges`` through start_session / append_exchange, in a new file."""
    count = sum(len(e.messages) for e in exchanges)
    async with await Archive.open(path) as archive:
        start = time.perf_counter()
        for exchange in exchanges:
            plan = data.sessions[exchange.session]
            if exchange.first:
                await archive.start_session(session_spec(plan))
            await archive.append_exchange(plan.id, exchange.messages, people=(exchange.speaker,))
        return count / (time.perf_counter() - start)


async def with_and_without(
    stem: Path, data: Dataset, exchanges: Sequence[Exchange]
) -> tuple[float, float]:
    """Messages/s through the API with the CJK gram index and without it: each twice,
    alternating (without first), in fresh files; the better of the two runs of each, so a
    burst of load from elsewhere on the machine hits one run, not one side."""
    rates: dict[bool, list[float]] = {True: [], False: []}
    for attempt in range(2):
        for index in (False, True):
            path = stem.with_name(f"{stem.name}-{attempt}-{'with' if index else 'without'}.db")
            if index:
                rates[index].append(await api_rate(path, data, exchanges))
            else:
                with without_cjk_index():
                    rates[index].append(await api_rate(path, data, exchanges))
    return max(rates[True]), max(rates[False])


def cjk_exchanges(data: Dataset, messages: int) -> list[Exchange]:
    """The exchanges of the CJK sessions, in stream order, up to ``messages`` messages."""
    chosen: list[Exchange] = []
    total = 0
    for exchange in data.exchanges:
        if data.sessions[exchange.session].cjk and total < messages:
            chosen.append(exchange)
            total += len(exchange.messages)
    return chosen


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
    log(f"breakdown: archive API on {count:,} messages, without and with the CJK index")
    per_exchange = count / stop
    with_index, before = await with_and_without(root / "api", data, data.exchanges[:stop])
    variants = [
        ("archive API: append_exchange, 1 txn/exchange", with_index, per_exchange),
        ("the same, without the CJK gram index (before m007)", before, per_exchange),
    ]
    cjk_only = cjk_exchanges(data, min(count, CJK_ONLY_MESSAGES))
    if cjk_only:
        cjk_count = sum(len(e.messages) for e in cjk_only)
        log(f"breakdown: archive API on {cjk_count:,} messages of CJK sessions, without and with")
        cjk_after, cjk_before = await with_and_without(root / "cjk", data, cjk_only)
        name = f"archive API, CJK sessions only ({cjk_count:,} messages)"
        variants += [
            (name, cjk_after, cjk_count / len(cjk_only)),
            (f"{name}, without the CJK gram index", cjk_before, cjk_count / len(cjk_only)),
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
        variants.append((name, count / seconds, per_exchange))
    variants.append(
        (
            "baseline: plain table + 1 FTS5, executemany",
            count / load_baseline(root / "baseline.db", data, stop),
            per_exchange,
        )
    )
    micros = await roundtrip_micros(root / "rt.db")
    shutil.rmtree(root, ignore_errors=True)
    api = variants[0][1]
    direct_rate = next(rate for name, rate, _ in variants if name.startswith("memory.archive"))
    rows = [
        [name, f"{rate:,.0f}", f"{1e6 / rate * each:,.0f}", f"{rate / api:.2f}x"]
        for name, rate, each in variants
    ]
    note = (
        f"The API spends {100 * (1 - api / direct_rate):.0f}% of its time outside"
        f" SQLite's write work (thread hop, asyncio; API {api:,.0f} vs direct"
        f" {direct_rate:,.0f} messages/s). For reference, one aiosqlite reader call"
        f" costs {micros:.0f} µs here (SELECT 1)."
    )
    return rows, note
