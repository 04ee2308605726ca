"""bench/archive_backends.py on a tiny data set, both backends: every phase down to the
printed table, and the PostgreSQL schema it made dropped again. No timing is asserted."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from bench.archive_backends import main
from tests.services import POSTGRES_DSN

asyncpg = pytest.importorskip("asyncpg", reason="the postgres extra is not installed")


@pytest.fixture
def unfreeze() -> Iterator[None]:
    yield
    gc.unfreeze()


async def _bench_schemas() -> list[str]:
    db = await asyncpg.connect(POSTGRES_DSN)
    try:
        rows = await db.fetch(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'mnemo_bench_%' ORDER BY 1"
        )
    finally:
        await db.close()
    return [row[0] for row in rows]


def test_both_backends_side_by_side(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str], unfreeze: None
) -> None:
    """``postgres_dsn`` only makes the test skip where PostgreSQL is missing: the benchmark
    makes (and drops) a schema of its own in the same database."""
    before = asyncio.run(_bench_schemas())
    argv = ["--messages", "1000", "--people", "10", "--queries", "5", "--dsn", POSTGRES_DSN]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if "|" in line}
    assert rows[""].count("sqlite") == 1 and rows[""].count("postgres") == 1
    assert "ingest, messages/s" in rows and "bytes per message" in rows
    for kind in ("common", "rare", "words", "question", "code", "all"):
        assert rows[f"discover, scoped: {kind} p50 / p95"].count(" ms (") == 2, kind
    assert asyncio.run(_bench_schemas()) == before
