"""The archive: every message of every session in ``<home>/state.db`` (SQLite, WAL, FTS5).

One ``Archive`` per process owns one writer (``memory.archive.writer``: a connection on its own
thread, each write transaction run there whole) and a small pool of read-only aiosqlite
connections. Cross-process safety is SQLite's own locking; every write to ``messages`` goes
through the FTS triggers of the migrations, so the two indexes cannot drift from the table.
The CJK gram index (``memory.archive.cjk``) gets its rows from the writer's own transactions
(triggers remove and re-scope them); ``check`` counts them and ``repair`` refills it.

Privacy is enforced in SQL: each message carries the *scope tokens* of the people who took
part in its session, indexed alongside its text, and every person-scoped query both
matches that token inside the index and joins ``session_people``. A stale token can only
hide a result, never reveal one.

The vocabulary (rows, errors, scope tokens) lives in ``memory.archive.records``; JSONL import in
``memory.archive.transfer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory.archive import cjk
from memory.archive import writer as w
from memory.archive.connections import bounded, connect_reader, create_private, read_deadline
from memory.archive.indexes import Indexes
from memory.archive.migrations import migrate
from memory.archive.records import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    ArchiveError,
    ImportFormatError,
    ImportReport,
    Message,
    NewMessage,
    Role,
    Session,
    SessionSpec,
    message_from_row,
    new_session_id,
    scope_token,
    session_from_row,
    visible_clause,
)
from memory.archive.transfer import import_batch, parse_record
from memory.archive.writer import Writer

__all__ = [
    "Archive",
    "ArchiveError",
    "ImportFormatError",
    "ImportReport",
    "Message",
    "NewMessage",
    "Role",
    "Session",
    "SessionSpec",
    "new_session_id",
    "read_deadline",
    "scope_token",
    "visible_clause",
]

FTS_TABLES = ("messages_fts", "messages_trigram")
T = TypeVar("T")

# A person's turns in a window: their user messages, through the partial index
# messages_speaker(speaker, created_at) WHERE role = 'user' (the role term must stay literal).
TURN_TIMES_SQL = (
    "SELECT created_at FROM messages"
    " WHERE role = 'user' AND speaker = :person AND created_at >= :since"
    " ORDER BY created_at DESC"
)
# The tokens of those turns: each turn's assistant rows (found by messages_session) lie
# between its user message and the session's next user message.
TOKENS_CAUSED_SQL = (
    "SELECT coalesce(sum(coalesce(a.prompt_tokens, 0) + coalesce(a.completion_tokens, 0)), 0)"
    " FROM messages AS u JOIN messages AS a"
    " ON a.session_id = u.session_id AND a.id > u.id AND a.id < coalesce("
    "(SELECT min(n.id) FROM messages AS n"
    " WHERE n.session_id = u.session_id AND n.id > u.id AND n.role = 'user'),"
    " 9223372036854775807)"
    " WHERE u.role = 'user' AND u.speaker = :person AND u.created_at >= :since"
    " AND a.role = 'assistant'"
)


class Archive:
    """``async with await Archive.open(path) as archive:`` or ``open`` / ``close``."""

    def __init__(self, path: Path, writer: Writer, readers: list[aiosqlite.Connection]) -> None:
        self.path = path
        self._writer = writer
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers = readers
        for reader in readers:
            self._readers.put_nowait(reader)
        self._joined: set[tuple[str, str]] = set()  # (session, person) known to be recorded

    @classmethod
    async def open(cls, path: Path, *, readers: int = 2) -> Archive:
        await asyncio.to_thread(create_private, path)
        writer = await Writer.open(path)
        pool: list[aiosqlite.Connection] = []
        try:
            await writer.run(migrate, transaction=False)
            for _ in range(max(1, readers)):
                pool.append(await connect_reader(path))
        except BaseException:
            for db in pool:
                await db.close()
            await writer.close()
            raise
        return cls(path, writer, pool)

    def search_indexes(self, *, like_scan_rows: int, cjk_index: bool) -> Indexes:
        """The FTS5 word, trigram and CJK gram indexes, read person-scoped."""
        return Indexes(self, like_scan_rows=like_scan_rows, cjk_index=cjk_index)

    async def close(self) -> None:
        for reader in self._all_readers:
            await reader.close()
        await self._writer.close()

    async def __aenter__(self) -> Archive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def reader(self) -> AsyncIterator[aiosqlite.Connection]:
        """A reader connection; under ``read_deadline`` its statements are interrupted
        (``sqlite3.OperationalError: interrupted``) once the deadline has passed."""
        db = await self._readers.get()
        try:
            async with bounded(db):
                yield db
        finally:
            self._readers.put_nowait(db)

    # -- writing --------------------------------------------------------------------------

    async def transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` whole in one write transaction on the writer thread (for the other
        tables of ``state.db``, e.g. ``gateway.ledger``)."""
        return await self._writer.run(work)

    async def start_session(self, spec: SessionSpec) -> None:
        """Create the session row (idempotent) and record its people."""
        await self._writer.run(lambda db: w.ensure_session(db, spec))
        self._joined.update((spec.id, person) for person in spec.people)

    async def append_exchange(
        self,
        session_id: str,
        messages: Sequence[NewMessage],
        *,
        people: Sequence[str] = (),
    ) -> list[int]:
        """Append one exchange (user message, tool calls and results, reply) atomically.

        ``people`` who are not yet participants join the session first, so the exchange is
        searchable by them. Returns the new message ids, in order.
        """
        if not messages:
            return []
        new = [p for p in people if (session_id, p) not in self._joined]
        ids = await self._writer.run(lambda db: w.insert_exchange(db, session_id, messages, new))
        self._joined.update((session_id, person) for person in new)
        return ids

    async def end_session(self, session_id: str, reason: str) -> None:
        await self._writer.run(lambda db: w.end_session(db, session_id, reason))

    # -- reading --------------------------------------------------------------------------

    async def get_session(self, session_id: str, *, viewer: str | None) -> Session | None:
        """The session, or None when it does not exist *or* ``viewer`` did not take part."""
        where = "id = :id" + (f" AND {visible_clause('id')}" if viewer is not None else "")
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {where}",
                    {"id": session_id, "viewer": viewer},
                )
            )
            if not rows:
                return None
            people = await db.execute_fetchall(
                "SELECT person FROM session_people WHERE session_id = ? ORDER BY person",
                (session_id,),
            )
        return session_from_row(rows[0], [p[0] for p in people])

    async def messages(
        self,
        session_id: str,
        *,
        viewer: str | None,
        after_id: int | None = None,
        before_id: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[Message]:
        """Messages of one session in id order (scope-checked in SQL)."""
        clauses = ["session_id = :sid"]
        if viewer is not None:
            clauses.append(visible_clause())
        if after_id is not None:
            clauses.append("id > :after")
        if before_id is not None:
            clauses.append("id < :before")
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)}"
            f" ORDER BY id {order}" + (" LIMIT :limit" if limit is not None else "")
        )
        params = {
            "sid": session_id,
            "viewer": viewer,
            "after": after_id,
            "before": before_id,
            "limit": limit,
        }
        async with self.reader() as db:
            rows = await db.execute_fetchall(sql, params)
        return [message_from_row(row) for row in rows]

    async def latest_session(self, session_key: str) -> Session | None:
        """The most recent, not ended session for a gateway session key (restart continuity)."""
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE session_key = ?"
                    " AND ended_at IS NULL ORDER BY last_active_at DESC LIMIT 1",
                    (session_key,),
                )
            )
        return session_from_row(rows[0]) if rows else None

    async def system_prompt(self, session_id: str) -> str | None:
        """The frozen system prompt a session was started with (None if not recorded)."""
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT system_prompt FROM sessions WHERE id = ?", (session_id,)
                )
            )
        return rows[0][0] if rows else None

    async def sessions(
        self, *, viewer: str | None, limit: int = 20, exclude: str | None = None
    ) -> list[Session]:
        """Most recently active sessions first."""
        clauses = ["1"]
        if viewer is not None:
            clauses.append(visible_clause("id"))
        if exclude is not None:
            clauses.append("id != :exclude")
        async with self.reader() as db:
            rows = await db.execute_fetchall(
                f"SELECT {SESSION_COLUMNS}, (SELECT group_concat(person, ' ') FROM"
                " (SELECT person FROM session_people p WHERE p.session_id = sessions.id"
                " ORDER BY person)) FROM sessions"
                f" WHERE {' AND '.join(clauses)} ORDER BY last_active_at DESC LIMIT :limit",
                {"viewer": viewer, "limit": limit, "exclude": exclude},
            )
        return [session_from_row(row, (row[14] or "").split()) for row in rows]

    async def people(self) -> list[str]:
        async with self.reader() as db:
            rows = await db.execute_fetchall(
                "SELECT DISTINCT person FROM session_people ORDER BY person"
            )
        return [row[0] for row in rows]

    async def counts(self) -> dict[str, int]:
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),"
                    " (SELECT count(DISTINCT person) FROM session_people)"
                )
            )
        sessions, messages, people = rows[0]
        return {"sessions": sessions, "messages": messages, "people": people}

    async def ping(self) -> None:
        """A trivial read on a reader connection (a file gone or locked raises)."""
        async with self.reader() as db, db.execute("SELECT 1 FROM sessions LIMIT 1") as rows:
            await rows.fetchall()

    async def size_bytes(self) -> int:
        """The database file and its write-ahead log, on disk."""

        def measure() -> int:
            total = 0
            for part in (self.path, self.path.with_name(self.path.name + "-wal")):
                with contextlib.suppress(OSError):
                    total += part.stat().st_size
            return total

        return await asyncio.to_thread(measure)

    async def usage_since(self, since: float, *, viewer: str | None = None) -> dict[str, int]:
        """Turns (user messages) and model tokens recorded since ``since`` (unix time)."""
        scope = f" AND {visible_clause()}" if viewer is not None else ""
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT count(*) FILTER (WHERE role = 'user'), coalesce(sum(prompt_tokens), 0),"
                    " coalesce(sum(completion_tokens), 0), coalesce(sum(cached_tokens), 0)"
                    f" FROM messages WHERE created_at >= :since{scope}",
                    {"since": since, "viewer": viewer},
                )
            )
        turns, prompt, completion, cached = rows[0]
        return {"turns": turns, "prompt": prompt, "completion": completion, "cached": cached}

    async def turn_times(self, person: str, since: float) -> list[float]:
        """When ``person`` started a turn (spoke a user message) since ``since``, newest
        first, in any of their sessions (index ``messages_speaker``)."""
        async with self.reader() as db:
            rows = await db.execute_fetchall(TURN_TIMES_SQL, {"person": person, "since": since})
        return [float(row[0]) for row in rows]

    async def tokens_caused(self, person: str, since: float) -> int:
        """Prompt + completion tokens of the model requests answering the turns ``person``
        started since ``since``: the assistant rows after each of their user messages, up
        to the session's next user message."""
        async with self.reader() as db:
            rows = list(
                await db.execute_fetchall(TOKENS_CAUSED_SQL, {"person": person, "since": since})
            )
        return int(rows[0][0])

    # -- import / export ------------------------------------------------------------------

    async def import_records(
        self,
        lines: Iterable[str],
        *,
        batch: int = 5000,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import JSONL message records (``memory.archive.transfer``); idempotent on external_id.

        Every line is validated before anything is written, so a bad file imports nothing.
        Records are then written in transactions of ``batch``; should the database fail
        midway, the batches already committed stay, and running the import again skips
        them (records without an external_id would be added twice).
        """
        records = [
            parse_record(text, number) for number, text in enumerate(lines, 1) if text.strip()
        ]
        report = ImportReport(read=len(records))
        for start in range(0, len(records), batch):
            chunk = records[start : start + batch]
            imported, skipped, sessions = await self._writer.run(
                lambda db, chunk=chunk: import_batch(db, chunk)  # type: ignore[misc]
            )
            report.imported += imported
            report.skipped_duplicates += skipped
            report.sessions |= sessions
            if progress is not None:
                progress(min(start + batch, len(records)), len(records))
        return report

    async def export_records(self, *, viewer: str | None) -> AsyncGenerator[dict[str, Any]]:
        """Yield the user and assistant messages in the import shape, oldest first.

        ``session`` is the archive's session id and every record has an ``external_id``
        (its own, or ``mnemo:<message id>``), so an import of the export is idempotent.
        """
        where = "m.role IN ('user', 'assistant')"
        if viewer is not None:
            where += f" AND {visible_clause('m.session_id')}"
        sql = (
            "SELECT m.session_id, m.speaker, s.platform, s.chat_id, m.role, m.content,"
            " m.created_at, m.external_id, (SELECT min(person) FROM session_people p"
            " WHERE p.session_id = m.session_id), m.id"
            f" FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {where}"
            " ORDER BY m.id"
        )
        async with self.reader() as db, db.execute(sql, {"viewer": viewer}) as cursor:
            async for row in cursor:
                record = {
                    "session": row[0],
                    "person": row[1] or row[8],
                    "platform": row[2],
                    "chat": row[3],
                    "role": row[4],
                    "content": row[5],
                    "created_at": datetime.fromtimestamp(row[6], UTC).isoformat(),
                }
                record["external_id"] = row[7] if row[7] is not None else f"mnemo:{row[9]}"
                yield record

    # -- integrity ------------------------------------------------------------------------

    async def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and the FTS5 index checks."""

        def run(db: sqlite3.Connection) -> list[str]:
            problems = [
                f"integrity_check: {row[0]}"
                for row in db.execute("PRAGMA integrity_check")
                if row[0] != "ok"
            ]
            (count,) = db.execute("SELECT count(*) FROM messages").fetchone()
            for table in FTS_TABLES:
                (indexed,) = db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()
                if indexed != count:
                    problems.append(f"{table}: {indexed} indexed rows for {count} messages")
            (grams,) = db.execute("SELECT count(*) FROM messages_cjk").fetchone()
            expected = cjk.indexed_count(db)
            if grams != expected:
                problems.append(f"messages_cjk: {grams} indexed rows for {expected} CJK messages")
            for table in (*FTS_TABLES, "messages_cjk"):
                try:
                    db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
                except sqlite3.DatabaseError as exc:
                    problems.append(f"{table}: {exc}")
            return problems

        return await self._writer.run(run)  # integrity-check is a write statement

    async def repair(self) -> None:
        """Rebuild the FTS indexes from the messages table."""

        def run(db: sqlite3.Connection) -> None:
            for table in FTS_TABLES:
                db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
            db.execute("DELETE FROM messages_cjk")
            cjk.backfill(db)

        await self._writer.run(run)
