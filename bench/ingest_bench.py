#!/usr/bin/env python3
"""Group commit at work: the archive ingesting as the gateway writes (one exchange per
``append_exchange`` call), from 1, 8 and 32 chats at once, with group commit (``GROUP_MAX``
transactions a COMMIT) and without (1 a COMMIT, what every version before had), side by
side in one run, alternating, each cell the best of ``--rounds``.

The exchanges are the archive benchmark's generated ones (``bench/archive_data.py``: private
and group chats, some CJK, tool calls with long outputs); each concurrency level splits them
over its chats round-robin by session, so each chat writes its own sessions in order. Every
cell writes the same exchanges into a fresh archive in a temporary directory (removed at the
end). Prints messages/s, commits made, and the database size per message.

    .venv/bin/python bench/ingest_bench.py [--messages 20000] [--rounds 2]
    make bench-ingest
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from bench.archive_data import Dataset, generate
from bench.archive_load import session_spec
from memory.archive import Archive
from memory.archive import writer as writer_module

CHATS = (1, 8, 32)


async def ingest(path: Path, data: Dataset, chats: int) -> tuple[float, int]:
    """(seconds, commits) for every exchange written by ``chats`` writers."""
    lanes: list[list[int]] = [[] for _ in range(chats)]
    for index, exchange in enumerate(data.exchanges):
        lanes[exchange.session % chats].append(index)
    async with await Archive.open(path) as archive:
        writer = archive._writer  # the benchmark reads its commit count
        before = writer.groups

        async def lane(indexes: Sequence[int]) -> None:
            for index in indexes:
                exchange = data.exchanges[index]
                plan = data.sessions[exchange.session]
                if exchange.first:
                    await archive.start_session(session_spec(plan))
                await archive.append_exchange(
                    plan.id, exchange.messages, people=(exchange.speaker,)
                )

        started = time.perf_counter()
        await asyncio.gather(*(lane(indexes) for indexes in lanes))
        seconds = time.perf_counter() - started
        commits = writer.groups - before
    return seconds, commits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    data = generate(seed=11, n_messages=args.messages, n_people=200, n_facts=20)
    best: dict[tuple[int, int], tuple[float, int, int]] = {}
    grouped = writer_module.GROUP_MAX
    with tempfile.TemporaryDirectory(prefix="mnemo-ingest-bench-") as tmp:
        for round_ in range(args.rounds):
            for chats in CHATS:
                for group_max in (grouped, 1):  # alternating: the machine's drift hits both
                    writer_module.GROUP_MAX = group_max
                    path = Path(tmp) / f"r{round_}-c{chats}-g{group_max}.db"
                    seconds, commits = asyncio.run(ingest(path, data, chats))
                    result = (seconds, commits, path.stat().st_size)
                    key = (chats, group_max)
                    if key not in best or result[0] < best[key][0]:
                        best[key] = result
        writer_module.GROUP_MAX = grouped
    messages = data.messages
    print(f"ingest, {messages:,} messages ({len(data.exchanges):,} exchanges), best of"
          f" {args.rounds}; group commit: up to {grouped} transactions a COMMIT")  # fmt: skip
    print(f"{'chats':>5}  {'grouped msg/s':>13} {'commits':>8}  {'one-by-one msg/s':>16}"
          f" {'commits':>8}  {'ratio':>5}  {'bytes/msg':>9}")  # fmt: skip
    for chats in CHATS:
        g_s, g_commits, g_bytes = best[(chats, grouped)]
        o_s, o_commits, _ = best[(chats, 1)]
        print(f"{chats:>5}  {messages / g_s:>13,.0f} {g_commits:>8,}  {messages / o_s:>16,.0f}"
              f" {o_commits:>8,}  {o_s / g_s:>5.2f}  {g_bytes / messages:>9,.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
