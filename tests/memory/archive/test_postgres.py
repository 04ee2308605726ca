"""What only the PostgreSQL archive has (memory/archive/postgres/): migrations that replicas
starting at once take turns on, hostile input that must never become a SQL or tsquery error,
NUL characters, the gram and counter checks, read deadlines, several replicas writing one
session, and that a SQLite-only process never imports asyncpg."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

asyncpg = pytest.importorskip("asyncpg", reason="the postgres extra is not installed")

from memory.archive.connections import read_deadline  # noqa: E402
from memory.archive.migrations import MigrationError  # noqa: E402
from memory.archive.postgres import MIGRATIONS, PgArchive, migrate  # noqa: E402
from memory.archive.records import NewMessage  # noqa: E402
from memory.archive.search import Searcher  # noqa: E402
from tests.memory.conftest import make_session, say  # noqa: E402


@pytest.fixture
def postgres_dsn(fresh_postgres_dsn: str) -> str:
    """These tests watch a database's first start and its migrations: a new schema each."""
    return fresh_postgres_dsn


async def _recorded(dsn: str) -> list[str]:
    db = await asyncpg.connect(dsn)
    try:
        return [row[0] for row in await db.fetch("SELECT name FROM archive_migrations")]
    finally:
        await db.close()


async def test_migrations_run_once_and_again_change_nothing(postgres_dsn: str) -> None:
    async with await PgArchive.open(postgres_dsn) as archive:
        await make_session(archive, "s1", "p1")
        await say(archive, "s1", "p1", "kept across opens")
        async with archive.pool.acquire() as db:
            assert await migrate(db) == []
    async with await PgArchive.open(postgres_dsn) as archive:
        assert [m.content for m in await archive.messages("s1", viewer="p1")] == [
            "kept across opens",
            "noted",
        ]
    assert await _recorded(postgres_dsn) == [m.name for m in MIGRATIONS]


async def test_an_archive_on_a_shared_pool_leaves_it_open(postgres_dsn: str) -> None:
    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=2)
    try:
        async with await PgArchive.on_pool(pool) as archive:
            await make_session(archive, "s1", "p1")
        assert await pool.fetchval("SELECT count(*) FROM sessions") == 1  # still open
    finally:
        await pool.close()


async def test_replicas_starting_at_once_take_turns(postgres_dsn: str) -> None:
    """Four opens of an empty schema at once: each migration runs once (under the advisory
    lock), none fails on another's half-made tables, and all of them work."""
    opened = await asyncio.gather(*(PgArchive.open(postgres_dsn) for _ in range(4)))
    try:
        assert await _recorded(postgres_dsn) == [m.name for m in MIGRATIONS]
        for n, archive in enumerate(opened):
            await make_session(archive, f"s{n}", "p1")
        assert (await opened[0].counts())["sessions"] == 4
    finally:
        for archive in opened:
            await archive.close()


async def test_a_database_from_a_newer_mnemo_is_refused(postgres_dsn: str) -> None:
    async with await PgArchive.open(postgres_dsn):
        pass
    db = await asyncpg.connect(postgres_dsn)
    await db.execute("INSERT INTO archive_migrations VALUES ('m999_from_the_future', 0)")
    await db.close()
    with pytest.raises(MigrationError, match="m999_from_the_future"):
        await PgArchive.open(postgres_dsn)


HOSTILE = [
    "'",
    "''",
    '"',
    "'; DROP TABLE messages; --",
    "a & b",
    "a | b",
    "!a",
    "a <-> b",
    "a <2> b",
    "ab:*",
    "ab:*A",
    "& | ! <-> :* ( )",
    "\\",
    "\\\\'",
    "a\\:*",
    "\x00",
    "note\x00 lighthouse",
    "%",
    "_%_",
    "東\x00京",
    "x" * 10_000,
    "note " * 2_000,
    "'note':* & !'reply'",
    "NEAR(note lighthouse)",
    "scope: search_text:",
    "²:* ⁿ ½",
]


async def test_hostile_queries_never_raise(postgres_dsn: str) -> None:
    async with await PgArchive.open(postgres_dsn) as archive:
        await make_session(archive, "s1", "p1")
        await say(archive, "s1", "p1", "note 1 about the lighthouse: a & b | !c <-> d:* \\ '")
        for scan_rows in (20_000, 1):
            search = Searcher(archive, like_scan_rows=scan_rows)
            for text in HOSTILE:
                for sort in ("relevance", "newest", "oldest"):
                    await search.discover(text, viewer="p1", sort=sort)
                    await search.discover(text, viewer=None, sort=sort, exclude_session=text)
                assert await archive.get_session(text, viewer=text) is None
                assert await archive.messages(text, viewer=text) == []
        found = await Searcher(archive).discover("'lighthouse'", viewer="p1")
        assert found.results[0].session.id == "s1"


async def test_a_nul_character_is_stored_as_a_replacement(postgres_dsn: str) -> None:
    async with await PgArchive.open(postgres_dsn) as archive:
        await make_session(archive, "s1", "p1")
        await archive.append_exchange(
            "s1", [NewMessage("tool", "binary\x00output of the heron feed", tool_name="t\x00")]
        )
        (stored,) = await archive.messages("s1", viewer="p1")
        assert stored.content == "binary\ufffdoutput of the heron feed"
        assert stored.tool_name == "t\ufffd"
        found = await Searcher(archive).discover("heron", viewer="p1")
        assert found.results[0].message.id == stored.id


async def test_check_finds_stale_grams_and_counts_and_repair_mends_them(
    postgres_dsn: str,
) -> None:
    async with await PgArchive.open(postgres_dsn) as archive:
        await make_session(archive, "s1", "p1")
        (cjk, plain) = await say(archive, "s1", "p1", "東京で会議", "in English")
        assert await archive.check() == []
        async with archive.pool.acquire() as db:  # behind the archive's back
            await db.execute("UPDATE messages SET content = '大阪で会議' WHERE id = $1", cjk)
            await db.execute("UPDATE messages SET grams = '{x}' WHERE id = $1", plain)
            await db.execute("UPDATE sessions SET message_count = 7")
        problems = await archive.check()
        assert len(problems) == 2 and "2 messages" in problems[0], problems
        search = Searcher(archive, like_scan_rows=1)
        assert (await search.find("大阪", viewer="p1"))[0] == []  # its grams are stale
        await archive.repair()
        assert await archive.check() == []
        assert [h.message_id for h in (await search.find("大阪", viewer="p1"))[0]] == [cjk]
        session = await archive.get_session("s1", viewer="p1")
        assert session is not None and session.message_count == 2


async def test_reads_under_a_deadline_are_cancelled_and_the_pool_answers_again(
    postgres_dsn: str,
) -> None:
    async with await PgArchive.open(postgres_dsn, max_size=2) as archive:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with read_deadline(0.05), pytest.raises(TimeoutError):
            await archive.fetch("SELECT pg_sleep(30)")
        assert loop.time() - started < 5
        for _ in range(3):  # every connection answers, without a deadline left behind
            assert [tuple(r) for r in await archive.fetch("SELECT 1")] == [(1,)]


async def test_two_replicas_writing_one_session_lose_nothing(postgres_dsn: str) -> None:
    """Two archives (two replicas' pools) append to one group session at once, people
    joining as they go: every exchange is there whole, and the counter agrees."""
    first, second = [await PgArchive.open(postgres_dsn) for _ in range(2)]
    try:
        await make_session(first, "g", "p0", chat_type="group")

        async def speak(n: int) -> list[int]:
            archive = first if n % 2 else second
            person = f"p{n % 5}"
            return await archive.append_exchange(
                "g",
                [NewMessage("user", f"turn {n}", speaker=person), NewMessage("assistant", "ok")],
                people=[person],
            )

        exchanges = await asyncio.gather(*(speak(n) for n in range(40)))
        messages = await second.messages("g", viewer="p3")
        assert len(messages) == 80
        order = [m.id for m in messages]
        for user, reply in exchanges:  # one after the other in the session, never interleaved
            assert order.index(reply) == order.index(user) + 1
        session = await first.get_session("g", viewer="p4")
        assert session is not None and session.message_count == 80
        assert session.people == ("p0", "p1", "p2", "p3", "p4")
        assert await first.check() == []
    finally:
        await first.close()
        await second.close()


def test_a_sqlite_process_never_imports_asyncpg() -> None:
    code = (
        "import sys, memory.archive, memory.archive.search, agent_core.agent, gateway.wiring;"
        " assert 'asyncpg' not in sys.modules, 'asyncpg imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
