"""``PgArchive``: the archive's sessions and messages in PostgreSQL (asyncpg, one pool).

The same contract as SQLite's ``memory.archive.database.Archive`` (``ArchiveStore``): an
exchange is written whole in one transaction, and every person-scoped read keeps to the
sessions the viewer took part in, in its own SQL (``VISIBLE``). Writes of several replicas
meet in PostgreSQL: a session row's counters are updated in place (row lock), participants
are inserted with ``ON CONFLICT DO NOTHING``, message ids come from an identity column.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import asyncpg

from memory.archive.cjk import CJK_CLASS
from memory.archive.connections import READ_DEADLINE
from memory.archive.postgres.indexes import PgIndexes
from memory.archive.postgres.schema import VISIBLE, migrate
from memory.archive.postgres.transfer import import_records
from memory.archive.postgres.writes import (
    INSERT_EXCHANGE,
    SET_GRAMS,
    clean,
    ensure_session,
    gram_list,
    index_grams,
    join,
    message_params,
)
from memory.archive.records import (
    MESSAGE_COLUMNS,
    ROLES,
    SESSION_COLUMNS,
    ArchiveError,
    ImportReport,
    Message,
    NewMessage,
    Session,
    SessionSpec,
    message_from_row,
    session_from_row,
    title_of,
)

__all__ = ["VISIBLE", "PgArchive", "deadline"]

#: ``column`` within the sessions the person bound to ``param`` took part in.
CHECK_BATCH = 2_000
T = TypeVar("T")

TURN_TIMES_SQL = (
    "SELECT created_at FROM messages WHERE role = 'user' AND speaker = $1 AND created_at >= $2"
    " ORDER BY created_at DESC"
)
TOKENS_CAUSED_SQL = (
    "SELECT coalesce(sum(coalesce(a.prompt_tokens, 0) + coalesce(a.completion_tokens, 0)), 0)"
    " FROM messages AS u JOIN messages AS a"
    " ON a.session_id = u.session_id AND a.id > u.id AND a.id < coalesce("
    "(SELECT min(n.id) FROM messages AS n"
    " WHERE n.session_id = u.session_id AND n.id > u.id AND n.role = 'user'),"
    " 9223372036854775807)"
    " WHERE u.role = 'user' AND u.speaker = $1 AND u.created_at >= $2 AND a.role = 'assistant'"
)


def deadline() -> float | None:
    """Seconds left of the current task's ``read_deadline`` (asyncpg's ``timeout=``: past it
    the statement is cancelled on the server and ``TimeoutError`` raised), None without one."""
    until = READ_DEADLINE.get()
    return None if until is None else max(0.001, until - time.monotonic())


class PgArchive:
    """``async with await PgArchive.open(dsn) as archive:`` or ``open`` / ``close``."""

    def __init__(self, pool: asyncpg.Pool, *, owns_pool: bool = True) -> None:
        self.pool = pool
        self.owns_pool = owns_pool
        self._writes: set[asyncio.Future[Any]] = set()  # running, perhaps for a cancelled caller

    @classmethod
    async def open(cls, dsn: str, *, min_size: int = 1, max_size: int = 10) -> PgArchive:
        """Connect a pool to ``dsn`` and bring the schema up to date (``schema.migrate``)."""
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        try:
            async with pool.acquire() as db:
                await migrate(db)
        except BaseException:
            await pool.close()
            raise
        return cls(pool)

    @classmethod
    async def on_pool(cls, pool: asyncpg.Pool) -> PgArchive:
        """The archive on a pool its caller owns (shared with the other stores of a replica):
        the schema is brought up to date, and ``close`` leaves the pool open."""
        async with pool.acquire() as db:
            await migrate(db)
        return cls(pool, owns_pool=False)

    def search_indexes(self, *, like_scan_rows: int, cjk_index: bool) -> PgIndexes:
        """``tsvector``, ``pg_trgm`` and CJK gram indexes, read person-scoped."""
        return PgIndexes(self, like_scan_rows=like_scan_rows, cjk_index=cjk_index)

    async def close(self) -> None:
        """Wait for the writes still running (a cancelled caller's), then close the pool
        if it is this archive's own."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self.owns_pool:
            await self.pool.close()

    async def __aenter__(self) -> PgArchive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def fetch(self, sql: str, *args: object) -> list[asyncpg.Record]:
        """A read, under the task's read deadline; text arguments cannot carry a NUL."""
        clean_args = [clean(a) if isinstance(a, str) else a for a in args]
        return list(await self.pool.fetch(sql, *clean_args, timeout=deadline()))

    # -- writing --------------------------------------------------------------------------

    async def _write(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` (one transaction) to its end even when the caller is cancelled, as
        SQLite's writer does: a cancelled caller must not assume the write did not happen."""
        task = asyncio.ensure_future(work)
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # heard, if unread
        return await asyncio.shield(task)

    async def start_session(self, spec: SessionSpec) -> None:
        """Create the session row (idempotent) and record its people."""
        await self._write(self._start(spec))

    async def _start(self, spec: SessionSpec) -> None:
        async with self.pool.acquire() as db, db.transaction():
            await ensure_session(db, spec)

    async def append_exchange(
        self, session_id: str, messages: Sequence[NewMessage], *, people: Sequence[str] = ()
    ) -> list[int]:
        """Append one exchange (user message, tool calls and results, reply) atomically;
        ``people`` not yet participants join first. Returns the new ids, in order."""
        if not messages:
            return []
        for message in messages:
            if message.role not in ROLES:
                raise ArchiveError(f"unknown role {message.role!r}")
        return await self._write(self._append(session_id, messages, people))

    async def _append(
        self, session_id: str, messages: Sequence[NewMessage], people: Sequence[str]
    ) -> list[int]:
        now = time.time()
        first_user = next((m.content for m in messages if m.role == "user"), None)
        rows = [message_params(session_id, message, now) for message in messages]
        columns: list[object] = [list(column) for column in zip(*rows, strict=True)]
        async with self.pool.acquire() as db, db.transaction():
            await join(db, session_id, people)
            inserted = await db.fetch(
                INSERT_EXCHANGE,
                *columns,
                max(m.created_at or now for m in messages),
                clean(title_of(first_user)),
            )
            await index_grams(db, inserted)
        ids = [row[0] for row in inserted]
        return ids

    async def end_session(self, session_id: str, reason: str) -> None:
        await self._write(
            self.pool.execute(
                "UPDATE sessions SET ended_at = $2, end_reason = $3"
                " WHERE id = $1 AND ended_at IS NULL",
                session_id,
                time.time(),
                reason,
            )
        )

    # -- reading --------------------------------------------------------------------------

    async def get_session(self, session_id: str, *, viewer: str | None) -> Session | None:
        """The session, or None when it does not exist *or* ``viewer`` did not take part."""
        where = "id = $1"
        if viewer is not None:
            where += " AND " + VISIBLE.format(column="id", param="$2")
        rows = await self.fetch(
            f"SELECT {SESSION_COLUMNS}, ARRAY(SELECT person FROM session_people p"
            f" WHERE p.session_id = sessions.id ORDER BY person) FROM sessions WHERE {where}",
            session_id,
            *([viewer] if viewer is not None else []),
        )
        return session_from_row(tuple(rows[0]), rows[0][14]) if rows else None

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
        args: list[object] = [session_id]
        clauses = ["session_id = $1"]
        for value, clause in (
            (viewer, VISIBLE.format(column="session_id", param="${}")),
            (after_id, "id > ${}"),
            (before_id, "id < ${}"),
        ):
            if value is not None:
                args.append(value)
                clauses.append(clause.format(len(args)))
        sql = (
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)}"
            f" ORDER BY id {'DESC' if newest_first else 'ASC'}"
        )
        if limit is not None:
            args.append(limit)
            sql += f" LIMIT ${len(args)}"
        return [message_from_row(tuple(row)) for row in await self.fetch(sql, *args)]

    async def latest_session(self, session_key: str) -> Session | None:
        """The most recent, not ended session for a gateway session key."""
        rows = await self.fetch(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE session_key = $1"
            " AND ended_at IS NULL ORDER BY last_active_at DESC LIMIT 1",
            session_key,
        )
        return session_from_row(tuple(rows[0])) if rows else None

    async def system_prompt(self, session_id: str) -> str | None:
        rows = await self.fetch("SELECT system_prompt FROM sessions WHERE id = $1", session_id)
        return rows[0][0] if rows else None

    async def sessions(
        self, *, viewer: str | None, limit: int = 20, exclude: str | None = None
    ) -> list[Session]:
        """Most recently active sessions first."""
        args: list[object] = [limit]
        clauses = ["TRUE"]
        if viewer is not None:
            args.append(viewer)
            clauses.append(VISIBLE.format(column="id", param=f"${len(args)}"))
        if exclude is not None:
            args.append(exclude)
            clauses.append(f"id <> ${len(args)}")
        rows = await self.fetch(
            f"SELECT {SESSION_COLUMNS}, ARRAY(SELECT person FROM session_people p"
            " WHERE p.session_id = sessions.id ORDER BY person) FROM sessions"
            f" WHERE {' AND '.join(clauses)} ORDER BY last_active_at DESC LIMIT $1",
            *args,
        )
        return [session_from_row(tuple(row), row[14]) for row in rows]

    async def people(self) -> list[str]:
        rows = await self.fetch("SELECT DISTINCT person FROM session_people ORDER BY person")
        return [row[0] for row in rows]

    async def counts(self) -> dict[str, int]:
        (row,) = await self.fetch(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),"
            " (SELECT count(DISTINCT person) FROM session_people)"
        )
        return {"sessions": row[0], "messages": row[1], "people": row[2]}

    async def ping(self) -> None:
        """A trivial read through the pool, bounded (a database that stopped raises)."""
        await self.pool.fetchval("SELECT 1", timeout=2)

    async def size_bytes(self) -> int:
        """The archive's tables with their indexes and TOAST, in this schema."""
        (row,) = await self.fetch(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            " AND c.relname IN ('sessions', 'session_people', 'messages')"
        )
        return int(row[0])

    async def usage_since(self, since: float, *, viewer: str | None = None) -> dict[str, int]:
        """Turns (user messages) and model tokens recorded since ``since`` (unix time)."""
        scope = (
            " AND " + VISIBLE.format(column="session_id", param="$2") if viewer is not None else ""
        )
        (row,) = await self.fetch(
            "SELECT count(*) FILTER (WHERE role = 'user'), coalesce(sum(prompt_tokens), 0),"
            " coalesce(sum(completion_tokens), 0), coalesce(sum(cached_tokens), 0)"
            f" FROM messages WHERE created_at >= $1{scope}",
            since,
            *([viewer] if viewer is not None else []),
        )
        return {"turns": row[0], "prompt": row[1], "completion": row[2], "cached": row[3]}

    async def turn_times(self, person: str, since: float) -> list[float]:
        """When ``person`` started a turn since ``since``, newest first (``messages_speaker``)."""
        return [float(row[0]) for row in await self.fetch(TURN_TIMES_SQL, person, since)]

    async def tokens_caused(self, person: str, since: float) -> int:
        """Prompt + completion tokens of the model requests answering ``person``'s turns
        since ``since`` (as ``Archive.tokens_caused``)."""
        (row,) = await self.fetch(TOKENS_CAUSED_SQL, person, since)
        return int(row[0])

    # -- import / export ------------------------------------------------------------------

    async def import_records(
        self,
        lines: Iterable[str],
        *,
        batch: int = 5000,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """JSONL message records (``memory.archive.transfer``), as ``Archive.import_records``:
        all validated first, then written in transactions of ``batch``; idempotent."""
        return await import_records(self.pool, lines, batch=batch, progress=progress)

    async def export_records(self, *, viewer: str | None) -> AsyncGenerator[dict[str, Any]]:
        """The user and assistant messages in the import shape, oldest first."""
        where = "m.role IN ('user', 'assistant')"
        args: list[object] = []
        if viewer is not None:
            args.append(viewer)
            where += " AND " + VISIBLE.format(column="m.session_id", param="$1")
        sql = (
            "SELECT m.session_id, m.speaker, s.platform, s.chat_id, m.role, m.content,"
            " m.created_at, m.external_id, (SELECT min(person) FROM session_people p"
            " WHERE p.session_id = m.session_id), m.id"
            f" FROM messages m JOIN sessions s ON s.id = m.session_id WHERE {where}"
            " ORDER BY m.id"
        )
        async with self.pool.acquire() as db, db.transaction(readonly=True):
            async for row in db.cursor(sql, *args):
                yield {
                    "session": row[0],
                    "person": row[1] or row[8],
                    "platform": row[2],
                    "chat": row[3],
                    "role": row[4],
                    "content": row[5],
                    "created_at": datetime.fromtimestamp(row[6], UTC).isoformat(),
                    "external_id": row[7] if row[7] is not None else f"mnemo:{row[9]}",
                }

    # -- integrity ------------------------------------------------------------------------

    async def check(self) -> list[str]:
        """Problems: CJK gram rows that differ from their text, session counters that differ
        from their messages (the text indexes are generated columns: they cannot drift)."""
        problems = []
        wrong = len(await self._stale_grams())
        if wrong:
            problems.append(f"messages.grams: {wrong} messages whose CJK grams are stale")
        (row,) = await self.fetch(_COUNTS_OFF)
        if row[0]:
            problems.append(f"sessions.message_count: {row[0]} sessions counted wrong")
        return problems

    async def repair(self) -> None:
        """Rewrite stale CJK grams and session counters."""
        stale = await self._stale_grams()
        async with self.pool.acquire() as db, db.transaction():
            await db.executemany(SET_GRAMS, stale)
            await db.execute(
                "UPDATE sessions s SET message_count ="
                " (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
            )

    async def _stale_grams(self) -> list[tuple[int, list[str] | None]]:
        """(id, the grams it should hold) of each message whose stored grams differ."""
        stale: list[tuple[int, list[str] | None]] = [
            (row[0], None)
            for row in await self.fetch(
                "SELECT id FROM messages WHERE grams IS NOT NULL AND search_text !~ $1", CJK_CLASS
            )
        ]
        after = 0
        while rows := await self.fetch(
            "SELECT id, search_text, grams FROM messages WHERE search_text ~ $1 AND id > $2"
            " ORDER BY id LIMIT $3",
            CJK_CLASS,
            after,
            CHECK_BATCH,
        ):
            for row in rows:
                expected = gram_list(row[1])
                if (list(row[2]) if row[2] is not None else None) != expected:
                    stale.append((row[0], expected))
            after = rows[-1][0]
        return stale


_COUNTS_OFF = (
    "SELECT count(*) FROM sessions s"
    " WHERE message_count <> (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"
)
