"""bench/archive_bench.py on a tiny data set: main() as `make bench` runs it, every phase
down to the printed tables, and the work directory left as it was found. No timing is
asserted; the sizes are the smallest the command line accepts (1,000 messages, 10 people),
with a 200-message prefix for the breakdown and the import."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.archive_bench import main

TINY = ["--messages", "1000", "--people", "10", "--queries", "5", "--facts", "5"]
PREFIXES = ["--breakdown-messages", "200", "--import-messages", "200"]
RUN_DIRS = ("ours", "baseline", "import", "breakdown")


@pytest.fixture
def unfreeze() -> Iterator[None]:
    """run() freezes the generated data set out of the cyclic GC, as it should in its own
    process; give those objects back to the collector once the test is done."""
    yield
    gc.unfreeze()


def rows_of(table: str) -> dict[str, list[str]]:
    """The cells of every table row, by the row's first cell."""
    rows: dict[str, list[str]] = {}
    for line in table.splitlines():
        if "|" in line:
            cells = [cell.strip() for cell in line.split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def row(rows: dict[str, list[str]], start: str) -> list[str]:
    """The row named ``start``, else the one row whose name starts with it (the counts in
    some names depend on the generated data)."""
    if start in rows:
        return rows[start]
    found = [cells for metric, cells in rows.items() if metric.startswith(start)]
    assert len(found) == 1, (start, sorted(rows))
    return found[0]


@pytest.mark.slow  # about 2 s: a real run, every phase, on 1,000 messages
@pytest.mark.usefixtures("unfreeze")
def test_a_tiny_run_prints_the_main_rows_and_cleans_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("not the benchmark's")

    assert main([*TINY, *PREFIXES, "--dir", str(work)]) == 0

    out = capsys.readouterr().out
    assert out.startswith("\nmnemo archive benchmark — N=1,0")
    rows = rows_of(out)
    assert rows["messages"][0] == rows["messages"][1]
    assert rows["messages"][0].replace(",", "").isdigit()
    for metric in (
        "ingest msg/s, append_exchange 1 txn/exchange",
        "ingest msg/s, import_records JSONL (",
        "database size MB (db + wal)",
        "discover global p50 ms (Searcher.find)",
        "discover scoped p50 ms (Searcher.find)",
        "discover scoped p95 ms",
        "scroll p50 ms, SearchTool.call",
        "CJK 2-char scoped p50 ms",
        "recall@3 planted facts, owner-scoped (",
    ):
        assert row(rows, metric)[0] != "—", metric  # measured, not missing
    recall = float(row(rows, "recall@3 planted facts, owner-scoped (")[0])
    assert 0.0 <= recall <= 1.0
    # The other tables: the breakdown, query kinds, sizes by object, recall by kind.
    assert "Ingest breakdown on the first 200 messages" in out
    assert "archive API: append_exchange, 1 txn/exchange" in rows
    assert "baseline: plain table + 1 FTS5, executemany" in rows
    assert {"common", "rare", "words", "question", "code"} <= set(rows)
    assert "messages table" in rows
    assert {"all", "direct", "paraphrase"} <= set(rows)
    assert out.rstrip().splitlines()[-1].startswith("Phases: generate ")

    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]


def test_a_dir_that_holds_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "baseline").mkdir()
    assert main([*TINY, "--dir", str(tmp_path)]) == 2
    assert "already holds a benchmark run" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline"]
