"""Append-only, named, recorded, transactional schema migrations for ``state.db``.

Add a ``Migration`` at the end of ``MIGRATIONS``; never edit or reorder one that shipped.
Each runs inside ``BEGIN IMMEDIATE … COMMIT`` together with the row that records it in
``schema_migrations``, so a crash leaves it either fully applied or not at all. A database
that records a migration this code does not know was written by a newer mnemo and is
refused rather than guessed at.

The archive schema (m001):

* ``sessions`` — one row per conversation; ``parent_id`` links a compression/branch child to
  its parent and ``root_id`` names the first session of that lineage (results are
  deduplicated by it); ``scope`` holds the scope tokens of the people who took part.
* ``session_people`` — who took part; the SQL-side visibility rule is "a person sees the
  sessions they appear in".
* ``messages`` — explicit integer id; ``search_text`` is a generated column (tool output is
  indexed on its first 8,192 characters only, the full text stays in ``content``).
* ``messages_fts`` (``unicode61 remove_diacritics 2``) and ``messages_trigram`` (``trigram``)
  are external-content FTS5 indexes over ``search_text`` and ``scope``, kept in sync by
  triggers, so an index row never exists without its message or the reverse.

m002 rebuilds the trigram index over the text alone with ``detail=none``: it is queried with
LIKE (which SQLite re-checks, so results stay exact) and never ranked; without positions and
without the scope column it is about half the size and much cheaper to write, and a new
participant no longer rewrites it (see bench/). Scope for substring search is the
``session_people`` join.

m006 makes the word index ``porter unicode61 remove_diacritics 2`` (English words match by
stem) and leaves the header line of user messages (``[YYYY-MM-DD HH:MM UTC · Name]``) out
of ``search_text`` but for the speaker's name (``SEARCH_TEXT``), rebuilding both indexes.

m007 adds ``messages_cjk``, the CJK gram index (``memory.archive.cjk`` says what it holds
and why the writer, not a trigger, adds its rows), with the triggers that keep it from
outliving a message or its scope, and fills it from the existing messages in batches.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.archive import cjk
from memory.archive.records import ArchiveError

__all__ = ["MIGRATIONS", "Migration", "MigrationError", "migrate"]

TOOL_INDEX_CHARS = 8192


class MigrationError(ArchiveError):
    """The database cannot be brought to this code's schema."""


@dataclass(frozen=True, slots=True)
class Migration:
    """``statements``, then ``backfill`` (Python, for data SQL alone cannot compute), in the
    migration's one transaction."""

    name: str
    statements: tuple[str, ...]
    backfill: Callable[[sqlite3.Connection], object] | None = None


def _fts(table: str, tokenizer: str) -> tuple[str, ...]:
    return (
        f"""CREATE VIRTUAL TABLE {table} USING fts5(
            search_text, scope, content='messages', content_rowid='id', tokenize='{tokenizer}')""",
    )


def _triggers() -> tuple[str, ...]:
    tables = ("messages_fts", "messages_trigram")
    insert = "\n".join(
        f"INSERT INTO {t}(rowid, search_text, scope) VALUES (new.id, new.search_text, new.scope);"
        for t in tables
    )
    delete = "\n".join(
        f"INSERT INTO {t}({t}, rowid, search_text, scope)"
        f" VALUES ('delete', old.id, old.search_text, old.scope);"
        for t in tables
    )
    return (
        f"CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN\n{insert}\nEND",
        f"CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN\n{delete}\nEND",
        "CREATE TRIGGER messages_au AFTER UPDATE OF content, role, scope ON messages BEGIN\n"
        f"{delete}\n{insert}\nEND",
    )


M001_INITIAL = Migration(
    "m001_initial",
    (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            parent_id TEXT REFERENCES sessions(id),
            root_id TEXT NOT NULL,
            session_key TEXT,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            chat_type TEXT NOT NULL,
            thread_id TEXT,
            title TEXT,
            started_at REAL NOT NULL,
            last_active_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            scope TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX sessions_recent ON sessions(last_active_at)",
        "CREATE INDEX sessions_key ON sessions(session_key, last_active_at)",
        "CREATE INDEX sessions_root ON sessions(root_id)",
        """CREATE TABLE session_people (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            person TEXT NOT NULL,
            PRIMARY KEY (session_id, person)
        ) WITHOUT ROWID""",
        "CREATE INDEX session_people_person ON session_people(person, session_id)",
        f"""CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
            speaker TEXT,
            content TEXT NOT NULL DEFAULT '',
            tool_calls TEXT,
            tool_call_id TEXT,
            tool_name TEXT,
            created_at REAL NOT NULL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cached_tokens INTEGER,
            external_id TEXT,
            scope TEXT NOT NULL DEFAULT '',
            search_text TEXT GENERATED ALWAYS AS (
                CASE WHEN role = 'tool' THEN substr(content, 1, {TOOL_INDEX_CHARS})
                ELSE content END
            ) VIRTUAL
        )""",
        "CREATE INDEX messages_session ON messages(session_id, id)",
        "CREATE UNIQUE INDEX messages_external ON messages(session_id, external_id)"
        " WHERE external_id IS NOT NULL",
        *_fts("messages_fts", "unicode61 remove_diacritics 2"),
        *_fts("messages_trigram", "trigram"),
        *_triggers(),
    ),
)


def _m002_triggers() -> tuple[str, ...]:
    """The word index keeps text + scope; the trigram index now holds text only, so a change
    of participants (scope) no longer rewrites trigram rows."""
    fts_insert = (
        "INSERT INTO messages_fts(rowid, search_text, scope)"
        " VALUES (new.id, new.search_text, new.scope);"
    )
    fts_delete = (
        "INSERT INTO messages_fts(messages_fts, rowid, search_text, scope)"
        " VALUES ('delete', old.id, old.search_text, old.scope);"
    )
    tri_insert = (
        "INSERT INTO messages_trigram(rowid, search_text) VALUES (new.id, new.search_text);"
    )
    tri_delete = (
        "INSERT INTO messages_trigram(messages_trigram, rowid, search_text)"
        " VALUES ('delete', old.id, old.search_text);"
    )
    return (
        f"CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN {fts_insert} {tri_insert} END",
        f"CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN {fts_delete} {tri_delete} END",
        "CREATE TRIGGER messages_au_words AFTER UPDATE OF content, role, scope ON messages"
        f" BEGIN {fts_delete} {fts_insert} END",
        "CREATE TRIGGER messages_au_trigram AFTER UPDATE OF content, role ON messages"
        f" BEGIN {tri_delete} {tri_insert} END",
    )


M002_TRIGRAM_DETAIL_NONE = Migration(
    "m002_trigram_text_only_detail_none",
    (
        "DROP TRIGGER messages_ai",
        "DROP TRIGGER messages_ad",
        "DROP TRIGGER messages_au",
        "DROP TABLE messages_trigram",
        """CREATE VIRTUAL TABLE messages_trigram USING fts5(
            search_text, content='messages', content_rowid='id',
            tokenize='trigram', detail='none')""",
        *_m002_triggers(),
        "INSERT INTO messages_trigram(messages_trigram) VALUES ('rebuild')",
    ),
)

M003_FROZEN_PROMPT = Migration(
    "m003_session_system_prompt",
    # The frozen system prompt of a session, so a restart continues it byte for byte.
    ("ALTER TABLE sessions ADD COLUMN system_prompt TEXT",),
)

M004_DELIVERY = Migration(
    "m004_delivery_ledger",
    # The gateway's delivery ledger (gateway.ledger): inbound updates seen (dedup, and
    # turns a restart interrupted) and the outbox of replies persisted before sending.
    (
        """CREATE TABLE inbound (
            key TEXT PRIMARY KEY,
            session_key TEXT NOT NULL,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            thread_id TEXT,
            message_id TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'done', 'interrupted')),
            received_at REAL NOT NULL,
            done_at REAL
        )""",
        "CREATE INDEX inbound_open ON inbound(received_at) WHERE state = 'queued'",
        "CREATE INDEX inbound_age ON inbound(received_at)",
        """CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            thread_id TEXT,
            reply_to TEXT,
            text TEXT NOT NULL,
            markdown INTEGER NOT NULL,
            buttons TEXT NOT NULL DEFAULT '[]',
            session_key TEXT,
            kind TEXT NOT NULL DEFAULT 'reply',
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'sent', 'failed')),
            chunks_sent INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            sent_at REAL
        )""",
        "CREATE INDEX outbox_pending ON outbox(platform, id) WHERE state = 'pending'",
        "CREATE INDEX outbox_age ON outbox(created_at)",
    ),
)

M005_SPEAKER_INDEX = Migration(
    "m005_messages_by_speaker",
    # Per-person budgets (gateway.limits) count the turns a person started in a window:
    # their user messages by time, without scanning everyone's.
    (
        "CREATE INDEX messages_speaker ON messages(speaker, created_at)"
        " WHERE role = 'user' AND speaker IS NOT NULL",
    ),
)

# A user message the agent wrote starts with the header line it gives the model,
# ``[2026-11-30 09:30 UTC]`` or ``[2026-11-30 09:30 UTC · Name]`` (agent_core.agent): the
# index leaves the date and time out, so their tokens do not match every message of a year, a
# day or an hour (the message's time is ``created_at``), and keeps the speaker's name (groups:
# "what did Tom say about…") as a line of its own.
_HEADER = "'[[]2[0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9] UTC*'"
_NL = "instr(content, char(10))"
_DOT = "instr(content, ' · ')"
SEARCH_TEXT = f"""CASE
    WHEN role = 'tool' THEN substr(content, 1, {TOOL_INDEX_CHARS})
    WHEN role = 'user' AND content GLOB {_HEADER} AND {_NL} BETWEEN 2 AND 200 THEN
        CASE WHEN {_DOT} BETWEEN 1 AND {_NL} - 4
            THEN substr(content, {_DOT} + 3, {_NL} - {_DOT} - 4) || char(10)
            ELSE '' END
        || substr(content, {_NL} + 1)
    ELSE content END"""

M006_PORTER = Migration(
    "m006_porter_words_without_header",
    # English words are indexed by their Porter stem ("injured" finds "injury" and
    # "injuries"; diacritics and CJK tokens as before, the stemmer passes them through), and
    # search_text leaves out the user message's header line. Both indexes read search_text,
    # so both are rebuilt: an external-content index must be told exactly the text it holds.
    (
        "DROP TRIGGER messages_ai",
        "DROP TRIGGER messages_ad",
        "DROP TRIGGER messages_au_words",
        "DROP TRIGGER messages_au_trigram",
        "DROP TABLE messages_fts",
        "DROP TABLE messages_trigram",
        "ALTER TABLE messages DROP COLUMN search_text",  # virtual: no row is rewritten
        f"ALTER TABLE messages ADD COLUMN search_text TEXT GENERATED ALWAYS AS ({SEARCH_TEXT})"
        " VIRTUAL",
        *_fts("messages_fts", "porter unicode61 remove_diacritics 2"),
        """CREATE VIRTUAL TABLE messages_trigram USING fts5(
            search_text, content='messages', content_rowid='id',
            tokenize='trigram', detail='none')""",
        *_m002_triggers(),
        "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
        "INSERT INTO messages_trigram(messages_trigram) VALUES ('rebuild')",
    ),
)

M007_CJK_GRAMS = Migration(
    "m007_cjk_gram_index",
    # A 2-character CJK word (東京, 会议, 서울) was found only in the newest messages a LIKE
    # scan reached; now it is one lookup in this index, scoped by the same tokens as the word
    # index. Grams are stored, so the triggers need no Python: a deleted message takes its
    # row along, a new participant rewrites it, new content drops it (see cjk.py).
    (
        """CREATE VIRTUAL TABLE messages_cjk USING fts5(
            grams, scope, tokenize='ascii', detail='none')""",
        "CREATE TRIGGER messages_ad_cjk AFTER DELETE ON messages"
        " BEGIN DELETE FROM messages_cjk WHERE rowid = old.id; END",
        "CREATE TRIGGER messages_au_cjk_scope AFTER UPDATE OF scope ON messages"
        " BEGIN UPDATE messages_cjk SET scope = new.scope WHERE rowid = new.id; END",
        "CREATE TRIGGER messages_au_cjk_text AFTER UPDATE OF content, role ON messages"
        " BEGIN DELETE FROM messages_cjk WHERE rowid = old.id; END",
    ),
    backfill=cjk.backfill,
)

log = logging.getLogger(__name__)

MIGRATIONS: tuple[Migration, ...] = (
    M001_INITIAL,
    M002_TRIGRAM_DETAIL_NONE,
    M003_FROZEN_PROMPT,
    M004_DELIVERY,
    M005_SPEAKER_INDEX,
    M006_PORTER,
    M007_CJK_GRAMS,
)


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every migration not yet recorded; return the names applied now.

    ``db`` must be in autocommit mode (``isolation_level=None``): each migration opens its own
    ``BEGIN IMMEDIATE`` transaction.
    """
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)"
    )
    known = {m.name for m in migrations}
    recorded = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
    unknown = sorted(recorded - known)
    if unknown:
        raise MigrationError(
            f"the database records migrations this mnemo does not know ({', '.join(unknown)}): "
            "it was written by a newer version; upgrade mnemo instead"
        )
    applied: list[str] = []
    for migration in migrations:
        if migration.name in recorded:
            continue
        if recorded:  # an existing archive: say why opening it takes longer this once
            log.info("archive: applying migration %s (a large archive may take a minute)",
                     migration.name)  # fmt: skip
        db.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock: another process may have just applied it.
            again = db.execute(
                "SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)
            ).fetchone()
            if again is None:
                for statement in migration.statements:
                    db.execute(statement)
                if migration.backfill is not None:
                    migration.backfill(db)
                db.execute(
                    "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                    (migration.name, time.time()),
                )
                applied.append(migration.name)
            db.execute("COMMIT")
        except Exception as exc:
            db.execute("ROLLBACK")
            raise MigrationError(f"migration {migration.name} failed: {exc}") from exc
    return applied
