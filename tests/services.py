"""The scale-out services for tests: PostgreSQL and Redis, real ones, on loopback.

Each test that asks for ``postgres_dsn`` gets a schema of its own in the database that
``MNEMO_TEST_POSTGRES_DSN`` names (default: the ``test`` database on 127.0.0.1:5432 as
``postgres``, trust auth), dropped afterwards; the DSN it gets sets ``search_path`` to that
schema, then ``public`` where ``pg_trgm`` lives (in ``options``, which asyncpg and libpq both
read), and ``application_name`` to its name, so code under test needs no knowledge of it.
``redis_target`` gives the URL (``MNEMO_TEST_REDIS_URL``, default 127.0.0.1:6379 db 0) and a
key prefix of the test's own; every key under it is deleted afterwards.

Where a service does not answer, these tests skip with one line that says how to run them;
``.ci/run`` checks that both answer first, so CI never skips them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

__all__ = [
    "RedisTarget",
    "fresh_postgres_dsn",
    "postgres_dsn",
    "postgres_schema",
    "read_only",
    "redis_target",
    "schema_tables",
]

POSTGRES_DSN = os.environ.get(
    "MNEMO_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("MNEMO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
HOW = (
    "start PostgreSQL 15 and Redis 7 on loopback "
    "or set MNEMO_TEST_POSTGRES_DSN / MNEMO_TEST_REDIS_URL"
)


_answers: dict[str, str | None] = {}


async def _postgres_answers() -> str | None:
    """None when PostgreSQL answers (and has pg_trgm), else why not. Asked once a process."""
    if "postgres" not in _answers:
        _answers["postgres"] = await _probe_postgres()
    return _answers["postgres"]


async def _probe_postgres() -> str | None:
    try:
        import asyncpg

        connection = await asyncpg.connect(POSTGRES_DSN, timeout=3)
        try:
            await connection.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        finally:
            await connection.close()
    except ImportError:
        return "asyncpg is not installed (pip install -e '.[postgres]')"
    except Exception as error:
        return f"PostgreSQL at {POSTGRES_DSN} did not answer ({type(error).__name__})"
    return None


async def _redis_answers() -> str | None:
    if "redis" not in _answers:
        _answers["redis"] = await _probe_redis()
    return _answers["redis"]


async def _probe_redis() -> str | None:
    try:
        from redis.asyncio import Redis

        client = Redis.from_url(REDIS_URL, socket_connect_timeout=3)
        try:
            await client.ping()
        finally:
            await client.aclose()
    except ImportError:
        return "redis is not installed (pip install -e '.[redis]')"
    except Exception as error:
        return f"Redis at {REDIS_URL} did not answer ({type(error).__name__})"
    return None


def _dsn(schema: str) -> str:
    separator = "&" if "?" in POSTGRES_DSN else "?"
    return (
        f"{POSTGRES_DSN}{separator}options={quote(f'-c search_path={schema},public')}"
        f"&application_name={schema}"
    )


#: This process's reused schema (``postgres_schema()``), made on first use, dropped at exit.
_reused: list[str] = []


def _drop_at_exit(schema: str) -> None:
    import psycopg

    with contextlib.suppress(Exception), psycopg.connect(POSTGRES_DSN, autocommit=True) as db:
        db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE pid <> pg_backend_pid() AND application_name = %s",
            (schema,),
        )
        db.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@contextlib.asynccontextmanager
async def postgres_schema(*, fresh: bool = False) -> AsyncIterator[str]:
    """A DSN whose ``search_path`` is a schema of this test's alone; skips the test where
    PostgreSQL does not answer. For fixtures that choose a backend by parameter (an async
    fixture cannot ask for another by name); tests ask for ``postgres_dsn``.

    By default the schema is this worker process's, reused: after each test its connections
    are ended and every table is emptied (``TRUNCATE``), but the tables and the records of
    the migrations stay, so the next test's stores open without migrating again (that cost
    a tenth of a second a test). ``fresh=True``: a new schema, dropped afterwards, for the
    tests of migrations themselves and of a database's first start."""
    why = await _postgres_answers()
    if why is not None:
        pytest.skip(f"scale-out test skipped: {why}; {HOW}")
    import asyncpg

    admin = await asyncpg.connect(POSTGRES_DSN)
    try:
        if fresh or not _reused:
            schema = f"t_{secrets.token_hex(6)}"
            await admin.execute(f'CREATE SCHEMA "{schema}"')
            if not fresh:
                _reused.append(schema)
                atexit.register(_drop_at_exit, schema)
        else:
            schema = _reused[0]
        yield _dsn(schema)
    finally:
        # Connections the test left open would hold locks on the schema: end them first.
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND application_name = $1",
            schema,
        )
        if fresh:
            await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        else:
            tables = await admin.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1"
                " AND tablename NOT LIKE '%migrations'",
                schema,
            )
            if tables:
                names = ", ".join(f'"{schema}"."{row["tablename"]}"' for row in tables)
                await admin.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        await admin.close()


@pytest.fixture
async def postgres_dsn() -> AsyncIterator[str]:
    """A DSN whose ``search_path`` is a schema of the test's own, empty (see
    ``postgres_schema``)."""
    async with postgres_schema() as dsn:
        yield dsn


@pytest.fixture
async def fresh_postgres_dsn() -> AsyncIterator[str]:
    """A DSN whose ``search_path`` is a new schema, never migrated, dropped after the test."""
    async with postgres_schema(fresh=True) as dsn:
        yield dsn


def read_only(dsn: str) -> str:
    """``dsn`` (one of ``postgres_schema``'s) whose every transaction is read-only: the
    server refuses any write, DDL included (for checks that must write nothing)."""
    assert "options=" in dsn, "a DSN of postgres_schema's, which sets options"
    return dsn.replace("options=", "options=" + quote("-c default_transaction_read_only=on "))


async def schema_tables(dsn: str) -> set[str]:
    """The tables in the test's schema (the first on the DSN's ``search_path``)."""
    import asyncpg

    db = await asyncpg.connect(dsn)
    try:
        rows = await db.fetch("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    finally:
        await db.close()
    return {str(row[0]) for row in rows}


@dataclass(frozen=True, slots=True)
class RedisTarget:
    url: str
    prefix: str
    """Every key the test writes starts with this (the code under test takes it as its
    namespace), so tests running at once never see each other's keys."""


@pytest.fixture
async def redis_target() -> AsyncIterator[RedisTarget]:
    why = await _redis_answers()
    if why is not None:
        pytest.skip(f"scale-out test skipped: {why}; {HOW}")
    from redis.asyncio import Redis

    target = RedisTarget(REDIS_URL, f"mnemo-test-{secrets.token_hex(6)}:")
    try:
        yield target
    finally:
        client = Redis.from_url(REDIS_URL)
        try:
            keys = [key async for key in client.scan_iter(match=target.prefix + "*")]
            if keys:
                await client.delete(*keys)
        finally:
            await client.aclose()


async def _both() -> list[str]:
    return [why for why in (await _postgres_answers(), await _redis_answers()) if why]


if __name__ == "__main__":  # .ci/run: the scale-out tests must run there, not skip
    import asyncio
    import sys

    problems = asyncio.run(_both())
    for problem in problems:
        print(f"tests/services: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


SKIPPED = "scale-out test skipped"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Every scale-out skip reported at one place (this module), so ``-ra`` folds them into
    one line: "SKIPPED [N] tests/services.py: scale-out test skipped: …; start …"."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(report.longrepr, tuple):
        _path, _line, reason = report.longrepr
        if SKIPPED in reason:
            report.longrepr = (__file__, 1, reason.removeprefix("Skipped: "))
