#!/usr/bin/env python3
"""The local memory provider at size: backfill throughput, prefetch latency, and what the
indexer costs a turn, with one person's history of N messages (``--messages``, 100,000 by
default, the issue's size), beside the FTS-only search on the same data in the same run.

Steps, all in a temporary directory removed at the end (loopback only, bounded):

1. the archive benchmark's generator (``bench/archive_data.py``) writes N messages through
   the bulk loader, and one person is made a participant of every session (their visible
   history is then all N);
2. **backfill**: ``LocalProvider.reindex`` embeds every user and assistant message (what
   ``mnemo provider reindex`` runs), timed, messages/s;
3. **prefetch** (the model on one core, as in the gateway): for ``--queries`` of the
   generator's sampled user messages, the provider's ``prefetch`` (embedding of the message,
   exact search over the person's vectors, the archive's word search within its budget,
   fusion, scoped read back) beside the archive's word search alone
   (``Searcher.find_grouped``, what the fusion adds it to), p50/p95 in milliseconds;
4. **turn cost of the indexer**: the word search timed again while the background indexer
   embeds a fresh batch of messages (``--during`` of them), as a ratio to (3).

    .venv/bin/python bench/local_bench.py [--messages 100000] [--queries 200]
    make bench-local BENCH_ARGS="--messages 20000"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from bench.archive_data import generate
from bench.archive_load import LoadState, connect_sync, load_bulk
from memory.archive import Archive, Searcher
from memory.providers import Subject
from memory.providers.local import Embedder, LocalProvider, LocalSettings


async def embed_rates(archive: Archive, cores: int, sample: int = 1000) -> dict[str, float]:
    """Messages/s of the model alone on the first ``sample`` messages, one core (the
    gateway's background indexer) and every core (``provider reindex``), side by side."""
    probe = LocalProvider(archive)
    await probe.start(index=False)
    texts = sorted((text for _, text in (await probe.vectors.pending(sample)).items), key=len)
    rates = {}
    for threads in dict.fromkeys((1, cores)):
        model = Embedder(threads=threads)
        model.load()
        started = time.perf_counter()
        for at in range(0, len(texts), 32):
            await asyncio.to_thread(model.embed, texts[at : at + 32])
        rates[f"{threads} thread{'s' if threads > 1 else ''}"] = len(texts) / (
            time.perf_counter() - started
        )
    await probe.aclose()
    return rates


def progress(done: int, total: int) -> None:
    print(f"\rbackfill {done:,}/{total:,}", end="", file=sys.stderr, flush=True)


def everything_is_theirs(db: Any, person: str) -> None:
    """The generator spreads sessions over people (groups need several): make ``person`` a
    participant of every session, so their history is all N messages."""
    with db:
        db.execute("INSERT OR IGNORE INTO session_people SELECT id, ? FROM sessions", (person,))


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def timed(queries: Sequence[str], work: Callable[[str], Awaitable[Any]]) -> list[float]:
    """Milliseconds of ``work`` per query."""
    times = []
    for query in queries:
        started = time.perf_counter()
        await work(query)
        times.append((time.perf_counter() - started) * 1000)
    return times


def row(name: str, times: Sequence[float]) -> tuple[str, str, str]:
    return name, f"{statistics.median(times):.1f}", f"{percentile(times, 95):.1f}"


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    data = generate(seed=7, n_messages=args.messages + args.during, n_people=4, n_facts=20)
    person = data.people[0]
    cut = data.exchange_cut(args.messages)
    async with await Archive.open(workdir / "state.db"):
        pass  # the schema
    db = connect_sync(workdir / "state.db")
    load_bulk(db, data, begin=0, stop=cut, state=LoadState(), label="load")
    everything_is_theirs(db, person)
    db.close()
    subject = Subject(person)
    queries = [" ".join(s.words) for s in data.samples if s.words][: args.queries]
    async with await Archive.open(workdir / "state.db") as archive:
        cores = os.cpu_count() or 1
        rates = await embed_rates(archive, cores)
        # the backfill as `mnemo provider reindex` runs it: every core
        provider = LocalProvider(
            archive, embedder=Embedder(threads=cores), settings=LocalSettings()
        )
        await provider.start(index=False)
        started = time.perf_counter()
        embedded = await provider.reindex(progress=progress)
        backfill_s = time.perf_counter() - started
        print(file=sys.stderr)
        # what follows as in the gateway: the model on one core beside the turns
        provider.embedder = Embedder(threads=1)
        provider.embedder.load()
        searcher = Searcher(archive)

        async def words(query: str) -> Any:
            return await searcher.find_grouped(
                query, viewer=person, limit=13, per_session=3, conversation_only=True
            )

        await provider.prefetch(subject, "warm up")  # the person's matrix, read once
        fts = await timed(queries, words)
        prefetch = await timed(queries, lambda q: provider.prefetch(subject, q))
        fts_again = await timed(queries, words)
        # the indexer at work on messages that arrive: the rest of the generated data
        db = connect_sync(workdir / "state.db")
        load_bulk(db, data, begin=cut, stop=len(data.exchanges), state=LoadState(), label="more")
        everything_is_theirs(db, person)
        db.close()
        indexer = asyncio.create_task(provider.reindex())
        await asyncio.sleep(0.5)  # well into it
        during = await timed(queries, words)
        busy = not indexer.done()
        await indexer
        await provider.aclose()
    return {
        "messages": args.messages,
        "cores": cores,
        "embed_per_s": rates,
        "embedded": embedded,
        "backfill_s": backfill_s,
        "backfill_per_s": embedded / backfill_s if backfill_s else 0.0,
        "fts_ms": fts + fts_again,
        "prefetch_ms": prefetch,
        "fts_during_indexing_ms": during,
        "indexer_busy_throughout": busy,
    }


def render(result: dict[str, Any]) -> str:
    rows = [
        ("word search only (FTS)", *row("", result["fts_ms"])[1:]),
        ("local prefetch (fused)", *row("", result["prefetch_ms"])[1:]),
        ("word search, indexer running", *row("", result["fts_during_indexing_ms"])[1:]),
    ]
    base = statistics.median(result["fts_ms"])
    lines = [
        f"local provider, one person with {result['messages']:,} messages"
        f" ({platform.python_implementation()} {platform.python_version()},"
        f" {platform.machine()})",
        "the model alone, messages/s: "
        + ", ".join(f"{name} {rate:.0f}" for name, rate in result["embed_per_s"].items()),
        f"backfill on {result['cores']} cores: {result['embedded']:,} messages embedded in"
        f" {result['backfill_s']:.0f} s"
        f" = {result['backfill_per_s']:.0f} messages/s"
        f" (100,000 would take {100_000 / max(result['backfill_per_s'], 1e-9) / 60:.1f} min)",
        "",
        f"{'path':<30} {'p50 ms':>8} {'p95 ms':>8}",
        *(f"{name:<30} {p50:>8} {p95:>8}" for name, p50, p95 in rows),
        "",
        "word search while the indexer runs, p50 ratio to idle:"
        f" {statistics.median(result['fts_during_indexing_ms']) / base:.2f}"
        f" (indexer busy throughout: {result['indexer_busy_throughout']})",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--during", type=int, default=3_000, help="messages indexed while timing")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    missing = Embedder.installed()
    if missing:
        print(f"local_bench: {missing}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mnemo-local-bench-") as tmp:
        result = asyncio.run(run(args, Path(tmp)))
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
