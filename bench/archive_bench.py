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

``run`` goes through the phases (generate, breakdown, baseline, ingest, queries, quality),
each returning its part of ``archive_report.Figures``, and hands them to
``archive_report.report``, which prints. The data set, loaders, queries and tables live in
the ``bench/archive_*.py`` modules beside this one.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from agent_core.tools.search import SearchTool
from bench.archive_breakdown import ingest_breakdown
from bench.archive_common import SEARCH_LIMIT, Progress, log
from bench.archive_data import Dataset, generate
from bench.archive_load import (
    LoadState,
    connect_sync,
    db_bytes,
    import_lines,
    load_api,
    load_baseline,
    load_bulk,
    object_sizes,
    wal_bytes,
)
from bench.archive_queries import (
    Deadline,
    baseline_find,
    cjk_queries,
    english_queries,
    time_assembly,
    time_baseline,
    time_cjk,
    time_ours,
    time_scroll,
)
from bench.archive_report import (
    BaselineFigures,
    BreakdownFigures,
    DataFigures,
    Figures,
    ImportFigures,
    IngestFigures,
    LatencyFigures,
    QualityFigures,
    SizeFigures,
    report,
)
from memory.archive.database import Archive
from memory.archive.search import Searcher

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
    """Every phase in turn, then the report; the databases go under ``work``."""
    began = time.perf_counter()
    deadline = Deadline(args.max_seconds)
    data, generated = generate_phase(args)
    breakdown = await breakdown_phase(args, work, data)
    base_path = work / "baseline" / "baseline.db"
    baseline = baseline_phase(base_path, data)
    ours_path = work / "ours" / "state.db"
    state = LoadState()
    archive = await Archive.open(ours_path)
    try:
        ingest = await ingest_phase(
            args, data, work=work, archive=archive, path=ours_path, state=state
        )
        searcher = Searcher(archive)
        base_db = sqlite3.connect(f"file:{base_path}?mode=ro", uri=True)
        base_db.execute("PRAGMA cache_size = -32000")
        latency = await query_phase(
            args,
            data,
            state=state,
            searcher=searcher,
            tool=SearchTool(archive),
            base_db=base_db,
            deadline=deadline,
        )
        quality = await quality_phase(data, searcher, base_db)
        base_db.close()
    finally:
        await archive.close()
    sizes = SizeFigures(object_sizes(ours_path), object_sizes(base_path), wal_bytes(base_path))
    report(
        Figures(
            people=args.people,
            queries=args.queries,
            seed=args.seed,
            work=work,
            data=generated,
            breakdown=breakdown,
            baseline=baseline,
            ingest=ingest,
            latency=latency,
            quality=quality,
            sizes=sizes,
            deadline_hit=deadline.hit,
            seconds=time.perf_counter() - began,
        )
    )


def generate_phase(args: argparse.Namespace) -> tuple[Dataset, DataFigures]:
    """The data set, then the cyclic GC told to leave it alone."""
    log(f"generating {args.messages:,} messages for {args.people:,} people (seed {args.seed})")
    start = time.perf_counter()
    data = generate(args.seed, args.messages, args.people, args.facts)
    seconds = time.perf_counter() - start
    # The generated data set is millions of long-lived objects; keep the cyclic GC from
    # re-traversing them during the timed phases (a gateway holds none of this).
    gc.collect()
    gc.freeze()
    figures = DataFigures(
        messages=data.messages,
        tool_messages=sum(1 for e in data.exchanges for m in e.messages if m.role == "tool"),
        cjk_messages=sum(len(e.messages) for e in data.exchanges if data.sessions[e.session].cjk),
        sessions=len(data.sessions),
        facts=len(data.facts),
        seconds=seconds,
    )
    log(
        f"generated {data.messages:,} messages, {len(data.exchanges):,} exchanges,"
        f" {len(data.sessions):,} sessions in {seconds:.1f}s"
    )
    return data, figures


async def breakdown_phase(args: argparse.Namespace, work: Path, data: Dataset) -> BreakdownFigures:
    """The ingest breakdown on a prefix, before any large file is written (or nothing)."""
    prefix = min(args.breakdown_messages, data.messages)
    if not prefix:
        return BreakdownFigures(prefix, [], "")
    rows, note = await ingest_breakdown(work, data, prefix)
    return BreakdownFigures(prefix, rows, note)


def baseline_phase(path: Path, data: Dataset) -> BaselineFigures:
    """All N messages into the plain FTS5 baseline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    seconds = load_baseline(path, data)
    return BaselineFigures(seconds, db_bytes(path))


async def ingest_phase(
    args: argparse.Namespace,
    data: Dataset,
    *,
    work: Path,
    archive: Archive,
    path: Path,
    state: LoadState,
) -> IngestFigures:
    """Ours: the API for the first M messages, bulk for the rest (``path`` is the archive's
    file), then ``import_records`` into a separate database."""
    n = data.messages
    api_messages = n if args.api_messages is None else min(args.api_messages, n)
    cut = data.exchange_cut(api_messages)
    api_seconds = await load_api(archive, data, cut, state)
    bulk_seconds = 0.0
    if cut < len(data.exchanges):
        bulk_db = connect_sync(path)
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
    size, wal = db_bytes(path), wal_bytes(path)  # measured before the import runs
    imported = await import_phase(work, data, args.import_messages)
    return IngestFigures(data.message_count(cut), api_seconds, bulk_seconds, size, wal, imported)


async def import_phase(work: Path, data: Dataset, messages: int | None) -> ImportFigures | None:
    """``import_records`` on the first ``messages`` (None: all N; 0 or less: skipped)."""
    target = data.messages if messages is None else messages
    if target <= 0:
        return None
    stop = data.exchange_cut(min(target, data.messages))
    lines = import_lines(data, stop)
    gc.freeze()
    progress = Progress("ingest ours (import_records)", len(lines))
    async with await Archive.open(work / "import" / "state.db") as importer:
        start = time.perf_counter()
        result = await importer.import_records(
            lines, progress=lambda done, _total: progress.update(done)
        )
        seconds = time.perf_counter() - start
    del lines
    baseline_rate = None
    if stop < len(data.exchanges):  # the baseline rate over the same prefix
        prefix_seconds = load_baseline(work / "baseline" / "import-prefix.db", data, stop)
        baseline_rate = data.message_count(stop) / prefix_seconds
    return ImportFigures(result.imported, result.imported / seconds, baseline_rate, seconds)


async def query_phase(
    args: argparse.Namespace,
    data: Dataset,
    *,
    state: LoadState,
    searcher: Searcher,
    tool: SearchTool,
    base_db: sqlite3.Connection,
    deadline: Deadline,
) -> LatencyFigures:
    """Q queries of each set, ours and the baseline's, after a warm-up."""
    qrng = random.Random(args.seed + 1)  # noqa: S311
    english = english_queries(qrng, data, args.queries)
    cjk_short = cjk_queries(qrng, data, args.queries, short=True)
    cjk_long = cjk_queries(qrng, data, args.queries, short=False)
    warm = english[:20]
    await time_ours(searcher, warm, scoped=False, deadline=Deadline(600))
    time_baseline(base_db, warm, scoped=False, deadline=Deadline(600))
    log(f"timing {len(english)} English queries, global and scoped, ours and baseline")
    ours_global = await time_ours(searcher, english, scoped=False, deadline=deadline)
    ours_scoped = await time_ours(searcher, english, scoped=True, deadline=deadline)
    base_global = time_baseline(base_db, english, scoped=False, deadline=deadline)
    base_scoped = time_baseline(base_db, english, scoped=True, deadline=deadline)
    log("timing SearchTool.call discover (result assembly) and scroll")
    assembled = await time_assembly(tool, english, deadline=deadline)
    srng = random.Random(args.seed + 2)  # noqa: S311
    scroll = await time_scroll(
        tool, data, state.first_ids, count=args.queries, rng=srng, deadline=deadline
    )
    log("timing CJK queries")
    scan = Searcher(searcher.archive, cjk_index=False)  # short CJK terms as before m007
    cjk = await time_cjk(searcher, base_db, cjk_short, cjk_long, deadline=deadline, scan=scan)
    return LatencyFigures(
        ours_global, ours_scoped, base_global, base_scoped, assembled, scroll, cjk
    )


async def quality_phase(
    data: Dataset, searcher: Searcher, base_db: sqlite3.Connection
) -> QualityFigures:
    """Each planted fact asked every way by its owner: is its session in the top 3?"""
    log(f"asking {sum(len(f.questions) for f in data.facts)} questions about planted facts")
    counts: dict[str, list[int]] = {}  # kind -> [asked, ours, naive AND, OR]
    examples: list[str] = []
    for fact in data.facts:
        sid = data.sessions[fact.session].id
        for question, kind in fact.questions:
            hits, _ = await searcher.find(question, viewer=fact.owner, limit=SEARCH_LIMIT)
            ours_ok = any(h.session_id == sid for h in hits)
            naive_ok = sid in baseline_find(base_db, question, fact.owner)[:SEARCH_LIMIT]
            any_ok = (
                sid in baseline_find(base_db, question, fact.owner, any_word=True)[:SEARCH_LIMIT]
            )
            for key in (kind, "all"):
                tally = counts.setdefault(key, [0, 0, 0, 0])
                tally[0] += 1
                tally[1] += ours_ok
                tally[2] += naive_ok
                tally[3] += any_ok
            if len(examples) < 6 and kind == "paraphrase":
                examples.append(f'  fact: "{fact.text}"  asked: "{question}"  found: {ours_ok}')
    return QualityFigures(counts, examples)


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
