"""bench/ingest_bench.py with one tiny run: a row per concurrency level, and grouping really
happens (fewer commits than exchanges from 8 chats on; none from one). No timing is
asserted."""

from __future__ import annotations

import pytest

from bench.ingest_bench import CHATS, main
from memory.archive import writer


def test_a_tiny_run_prints_a_row_per_level_and_groups_only_concurrent_writes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--messages", "400", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"up to {writer.GROUP_MAX} transactions a COMMIT" in lines[0]
    rows = {int(line.split()[0]): line.split() for line in lines[2:]}
    assert set(rows) == set(CHATS)
    for chats, row in rows.items():
        grouped, alone = int(row[2].replace(",", "")), int(row[4].replace(",", ""))
        assert alone > 0  # one commit per transaction: the exchanges and session starts
        assert grouped == alone if chats == 1 else grouped < alone
    assert writer.GROUP_MAX > 1  # put back after the run
