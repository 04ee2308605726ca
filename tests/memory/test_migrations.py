"""Migrations: applied once, recorded, transactional, and refused when from the future."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
import pytest

from memory.archive import Archive
from memory.migrations import MIGRATIONS, Migration, MigrationError, migrate


async def test_fresh_database_gets_every_migration_once(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "state.db", isolation_level=None) as db:
        assert await migrate(db) == [m.name for m in MIGRATIONS]
        assert await migrate(db) == []
        rows = await db.execute_fetchall("SELECT name FROM schema_migrations")
        assert [r[0] for r in rows] == [m.name for m in MIGRATIONS]
        tables = {
            r[0]
            for r in await db.execute_fetchall(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')"
            )
        }
        assert {
            "sessions",
            "session_people",
            "messages",
            "messages_fts",
            "messages_trigram",
            "messages_ai",
            "messages_ad",
            "messages_au",
        } <= tables


async def test_a_failing_migration_leaves_nothing_behind(tmp_path: Path) -> None:
    broken = Migration("m999_broken", ("CREATE TABLE half_done (x INTEGER)", "CREATE TABLE oops ("))
    async with aiosqlite.connect(tmp_path / "state.db", isolation_level=None) as db:
        with pytest.raises(MigrationError, match="m999_broken"):
            await migrate(db, (*MIGRATIONS, broken))
        names = {r[0] for r in await db.execute_fetchall("SELECT name FROM sqlite_master")}
        assert "half_done" not in names
        recorded = [r[0] for r in await db.execute_fetchall("SELECT name FROM schema_migrations")]
        assert recorded == [m.name for m in MIGRATIONS]


async def test_a_database_from_a_newer_mnemo_is_refused(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "state.db", isolation_level=None) as db:
        await migrate(db)
        await db.execute("INSERT INTO schema_migrations VALUES ('m777_from_the_future', 0)")
    with pytest.raises(MigrationError, match="newer version"):
        await Archive.open(tmp_path / "state.db")


async def test_open_sets_wal_and_private_mode(tmp_path: Path) -> None:
    async with await Archive.open(tmp_path / "state.db") as archive:
        async with archive.reader() as db:
            (mode,) = next(iter(await db.execute_fetchall("PRAGMA journal_mode")))
            (fk,) = next(iter(await db.execute_fetchall("PRAGMA foreign_keys")))
        assert mode == "wal" and fk == 1
    assert (tmp_path / "state.db").stat().st_mode & 0o777 == 0o600
