"""Migrations: applied once, recorded, transactional, and refused when from the future."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

from memory.archive.database import Archive
from memory.archive.migrations import MIGRATIONS, Migration, MigrationError, migrate
from memory.archive.records import scope_token
from memory.archive.search import Searcher
from tests.memory.conftest import say


def test_fresh_database_gets_every_migration_once(tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        assert migrate(db) == [m.name for m in MIGRATIONS]
        assert migrate(db) == []
        rows = db.execute("SELECT name FROM schema_migrations").fetchall()
        assert [r[0] for r in rows] == [m.name for m in MIGRATIONS]
        tables = {
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
        }
        assert {
            "sessions",
            "session_people",
            "messages",
            "messages_fts",
            "messages_trigram",
            "messages_ai",
            "messages_ad",
            "messages_au_words",
            "messages_au_trigram",
            "messages_cjk",
            "messages_ad_cjk",
            "messages_au_cjk_scope",
            "messages_au_cjk_text",
        } <= tables


def test_a_failing_migration_leaves_nothing_behind(tmp_path: Path) -> None:
    broken = Migration("m999_broken", ("CREATE TABLE half_done (x INTEGER)", "CREATE TABLE oops ("))
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        with pytest.raises(MigrationError, match="m999_broken"):
            migrate(db, (*MIGRATIONS, broken))
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        assert "half_done" not in names
        recorded = [r[0] for r in db.execute("SELECT name FROM schema_migrations")]
        assert recorded == [m.name for m in MIGRATIONS]


async def test_a_database_from_a_newer_mnemo_is_refused(tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        migrate(db)
        db.execute("INSERT INTO schema_migrations VALUES ('m777_from_the_future', 0)")
    with pytest.raises(MigrationError, match="newer version"):
        await Archive.open(tmp_path / "state.db")


async def test_open_sets_wal_and_private_mode(tmp_path: Path) -> None:
    async with await Archive.open(tmp_path / "state.db") as archive:
        async with archive.reader() as db:
            (mode,) = next(iter(await db.execute_fetchall("PRAGMA journal_mode")))
            (fk,) = next(iter(await db.execute_fetchall("PRAGMA foreign_keys")))
        assert mode == "wal" and fk == 1
    assert (tmp_path / "state.db").stat().st_mode & 0o777 == 0o600


def test_m002_rebuilds_the_trigram_index_of_existing_messages(tmp_path: Path) -> None:
    """A database written under m001 keeps its substring search after m002."""
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        migrate(db, MIGRATIONS[:1])
        db.execute(
            "INSERT INTO sessions (id, root_id, platform, chat_id, chat_type, started_at,"
            " last_active_at) VALUES ('s1', 's1', 'telegram', '1', 'dm', 0, 0)"
        )
        db.execute(
            "INSERT INTO messages (session_id, role, content, created_at)"
            " VALUES ('s1', 'user', 'supercalifragilistic', 0)"
        )
        assert migrate(db, MIGRATIONS[:2]) == ["m002_trigram_text_only_detail_none"]
        rows = db.execute(
            "SELECT rowid FROM messages_trigram WHERE search_text LIKE '%califrag%'"
        ).fetchall()
        assert rows == [(1,)]
        db.execute(
            "INSERT INTO messages_trigram(messages_trigram, rank) VALUES ('integrity-check', 1)"
        )


async def test_m006_upgrades_an_archive_to_stemmed_words_without_the_header(
    tmp_path: Path,
) -> None:
    """An archive written before m006 (unicode61 words, header line indexed) is searchable
    after it by stem, still diacritics-insensitive, CJK by substring, and scoped; of the
    header only a group speaker's name is left."""
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        migrate(db, MIGRATIONS[:5])
        for sid, person in (("s1", "ana"), ("s2", "bo")):
            db.execute(
                "INSERT INTO sessions (id, root_id, platform, chat_id, chat_type, started_at,"
                " last_active_at, scope, message_count) VALUES (?, ?, 'telegram', ?, 'dm', 0, 0,"
                " ?, 3)",
                (sid, sid, sid, scope_token(person)),
            )
            db.execute("INSERT INTO session_people VALUES (?, ?)", (sid, person))
            for role, text in (
                ("user", "[2025-03-01 10:00 UTC]\nI sprained my knee running in Zürich"),
                ("assistant", "Rest it, and no racing for a while."),
                ("user", "[2025-03-02 09:00 UTC · Ana]\n昨日は東京タワーに行きました"),
            ):
                db.execute(
                    "INSERT INTO messages (session_id, role, content, created_at, scope)"
                    " VALUES (?, ?, ?, 0, ?)",
                    (sid, role, text, scope_token(person)),
                )
        assert "2025" in str(
            db.execute("SELECT search_text FROM messages WHERE id = 1").fetchone()[0]
        )
    async with await Archive.open(tmp_path / "state.db") as archive:
        async with archive.reader() as reader:
            rows = await reader.execute_fetchall(
                "SELECT search_text FROM messages WHERE session_id = 's1' ORDER BY id"
            )
            assert [r[0] for r in rows] == [
                "I sprained my knee running in Zürich",
                "Rest it, and no racing for a while.",
                "Ana\n昨日は東京タワーに行きました",  # a group's speaker stays findable
            ]
        searcher = Searcher(archive)
        for query, expected in (
            ("runs", [1]),  # running, by stem
            ("raced", [2]),  # racing
            ("zurich", [1]),  # diacritics as before
            ("東京タワー", [3]),  # CJK by substring
            ("2025", []),  # the header's date and time are no longer indexed
            ("Ana", [3]),
        ):
            hits, _ = await searcher.find(query, viewer="ana", limit=5)
            assert [h.message_id for h in hits] == expected, query
        await say(archive, "s1", "ana", "[2025-04-01 08:00 UTC]\nthe knee swells when I run")
        hits, _ = await searcher.find("swelling", viewer="ana")
        assert [h.message_id for h in hits] == [7]
        hits, _ = await searcher.find("swelling", viewer="bo")
        assert hits == []
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        for table in ("messages_fts", "messages_trigram"):
            db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")


def test_upgrading_an_existing_archive_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An upgrade can take a while on a big archive (m006 rebuilds the indexes): each
    migration applied to an existing archive is logged; a fresh one is quiet."""
    caplog.set_level(logging.INFO, logger="memory.archive.migrations")
    db = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    migrate(db, MIGRATIONS[:-1])
    assert caplog.records == []  # fresh: nothing to say
    assert migrate(db) == [MIGRATIONS[-1].name]
    assert [r.getMessage() for r in caplog.records] == [
        f"archive: applying migration {MIGRATIONS[-1].name} (a large archive may take a minute)"
    ]
    db.close()
