#!/usr/bin/env python3
"""The archive on SQLite beside the archive on PostgreSQL: the same generated chat data
(``bench.archive_data``) written through the same API and searched with the same queries.

    .venv/bin/python bench/archive_backends.py [--messages N] [--people P] [--queries Q]
                                                [--dsn DSN] [--backends sqlite,postgres]

For each backend: ingest (``start_session`` / ``append_exchange``, one transaction per
exchange, one after another, as one chat's turns arrive), then person-scoped ``discover``
(what ``session_search`` runs) for English queries of five kinds and for 2-character CJK
words, p50 / p95 in milliseconds, and the bytes stored per message (SQLite: the file and
its WAL; PostgreSQL: the schema's tables with their indexes and TOAST). SQLite works in a
temporary directory; PostgreSQL in a schema of its own in ``--dsn``'s database (default
``$MNEMO_BENCH_POSTGRES_DSN`` or the local ``test`` database), dropped afterwards.

``bench/archive_bench.py`` stays the SQLite benchmark proper (the FTS5 baseline, the ingest
breakdown and bulk loads are SQLite's own); this one answers "what does the other backend
cost". See bench/README.md, *SQLite beside PostgreSQL*.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from bench.archive_common import SEARCH_LIMIT, Progress, log
from bench.archive_data import Dataset, generate
from bench.archive_load import db_bytes, session_spec
from bench.archive_queries import Query, Timings, cjk_queries, english_queries
from memory.archive.database import Archive
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore

DSN = os.environ.get("MNEMO_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass(slots=True)
class Result:
    backend: str
    messages: int = 0
    ingest_s: float = 0.0
    bytes: int = 0
    timings: dict[str, Timings] = field(default_factory=dict)


async def ingest(archive: ArchiveStore, data: Dataset, label: str) -> float:
    """Every exchange through the API, one transaction each; returns seconds."""
    progress = Progress(f"{label}: ingest", data.messages)
    done = 0
    start = time.perf_counter()
    for exchange in data.exchanges:
        plan = data.sessions[exchange.session]
        if exchange.first:
            await archive.start_session(session_spec(plan))
        await archive.append_exchange(plan.id, exchange.messages, people=(exchange.speaker,))
        done += len(exchange.messages)
        progress.update(done)
    return time.perf_counter() - start


async def search(searcher: Searcher, queries: Sequence[Query]) -> dict[str, Timings]:
    by_kind: dict[str, Timings] = {}
    for query in queries:
        start = time.perf_counter()
        found = await searcher.discover(query.text, viewer=query.viewer, limit=SEARCH_LIMIT)
        by_kind.setdefault(query.kind, Timings()).add(
            time.perf_counter() - start, len(found.results)
        )
    return by_kind


async def on_sqlite(data: Dataset, queries: Sequence[Query], work: Path) -> Result:
    result = Result("sqlite", data.messages)
    path = work / "state.db"
    async with await Archive.open(path) as archive:
        log("sqlite: ingest")
        result.ingest_s = await ingest(archive, data, "sqlite")
        log("sqlite: discover")
        result.timings = await search(Searcher(archive), queries)
    result.bytes = db_bytes(path)
    return result


async def on_postgres(data: Dataset, queries: Sequence[Query], dsn: str) -> Result:
    import asyncpg  # noqa: PLC0415 - the SQLite-only run needs no PostgreSQL client

    from memory.archive.postgres import PgArchive  # noqa: PLC0415

    result = Result("postgres", data.messages)
    schema = f"mnemo_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(dsn)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        separator = "&" if "?" in dsn else "?"
        async with await PgArchive.open(
            f"{dsn}{separator}search_path={quote(schema + ',public')}"
        ) as archive:
            log("postgres: ingest")
            result.ingest_s = await ingest(archive, data, "postgres")
            await admin.execute(f'ANALYZE "{schema}".messages')
            log("postgres: discover")
            result.timings = await search(Searcher(archive), queries)
        result.bytes = await admin.fetchval(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = $1 AND c.relkind = 'r'",
            schema,
        )
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()
    return result


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(results: Sequence[Result]) -> str:
    """The figures, one column per backend (markdown)."""
    lines = ["| | " + " | ".join(r.backend for r in results) + " |"]
    lines.append("| --- |" + " --- |" * len(results))

    def row(name: str, cells: Sequence[str]) -> None:
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("messages", [f"{r.messages:,}" for r in results])
    row("ingest, messages/s", [f"{r.messages / r.ingest_s:,.0f}" for r in results])
    row("bytes per message", [f"{r.bytes / r.messages:,.0f}" for r in results])
    kinds = sorted({kind for r in results for kind in r.timings})
    for kind in [*kinds, "all"]:
        cells = []
        for r in results:
            if kind == "all":
                ms = [m for t in r.timings.values() for m in t.ms]
                t = Timings(ms, sum(t.found for t in r.timings.values()))
            else:
                t = r.timings.get(kind, Timings())
            found = "-" if t.hit_rate is None else f"{t.hit_rate:.0%}"
            cells.append(f"{_ms(t.pct(0.5))} / {_ms(t.pct(0.95))} ms ({found} found)")
        row(f"discover, scoped: {kind} p50 / p95", cells)
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The archive on SQLite beside PostgreSQL.")
    parser.add_argument("--messages", type=int, default=50_000, help="N (default 50,000)")
    parser.add_argument("--people", type=int, default=500, help="P (default 500)")
    parser.add_argument("--queries", type=int, default=200, help="Q per query set (200)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dsn", default=DSN, help="PostgreSQL database (a schema is made)")
    parser.add_argument("--backends", default="sqlite,postgres", help="which, in order")
    args = parser.parse_args(argv)
    args.backends = args.backends.split(",")
    if not set(args.backends) <= {"sqlite", "postgres"}:
        parser.error("--backends: sqlite and/or postgres")
    return args


async def run(args: argparse.Namespace, work: Path) -> list[Result]:
    log(f"generating {args.messages:,} messages for {args.people:,} people")
    data = generate(args.seed, args.messages, args.people, 0)
    rng = random.Random(args.seed)  # noqa: S311
    queries = english_queries(rng, data, args.queries)
    queries += cjk_queries(rng, data, args.queries // 2, short=True)
    results = []
    for backend in args.backends:
        if backend == "sqlite":
            results.append(await on_sqlite(data, queries, work))
        else:
            results.append(await on_postgres(data, queries, args.dsn))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mnemo-backends-"))
    try:
        results = asyncio.run(run(args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
