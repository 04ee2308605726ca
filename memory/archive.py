"""The archive: every message of every session in ``<home>/state.db`` (SQLite, WAL, FTS5).

One ``Archive`` per process owns one writer connection (every write is one ``BEGIN
IMMEDIATE … COMMIT`` under an asyncio lock, so coroutines never interleave inside a
transaction) and a small pool of read-only connections. Cross-process safety is SQLite's
own locking; every write to ``messages`` goes through the FTS triggers of migration m001,
so the two indexes cannot drift from the table.

Privacy is enforced in SQL: each message carries the *scope tokens* of the people who took
part in its session, indexed alongside its text, and every person-scoped query both
matches that token in FTS5 and joins ``session_people``. A stale token can only hide a
result, never reveal one.

Errors::

    ArchiveError
    └── ImportFormatError     a JSONL line that is not a message
    MigrationError            (memory.migrations) the schema cannot be brought up to date;
                              sqlite3.Error for a file that is not a database
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import aiosqlite

from memory.migrations import migrate
from memory.store import InvalidPersonError, validate_person

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
    "scope_token",
]

Role = Literal["user", "assistant", "tool", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")
PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA busy_timeout = 10000",
    "PRAGMA foreign_keys = ON",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA cache_size = -32000",
)
TITLE_CHARS = 80


class ArchiveError(Exception):
    """Base of the archive's exceptions."""


class ImportFormatError(ArchiveError, ValueError):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def scope_token(person: str) -> str:
    """One FTS token per person: letters and digits only, so no tokenizer splits it."""
    return "p" + hashlib.blake2b(person.encode("utf-8"), digest_size=10).hexdigest()


def new_session_id() -> str:
    return "s" + uuid.uuid4().hex[:20]


_OWN_SESSION_ID = re.compile(r"[si][0-9a-f]{20}")


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What the gateway knows when a session starts."""

    id: str
    platform: str
    chat_id: str
    chat_type: str
    people: tuple[str, ...]
    thread_id: str | None = None
    session_key: str | None = None
    parent_id: str | None = None
    title: str | None = None
    started_at: float | None = None


@dataclass(frozen=True, slots=True)
class NewMessage:
    role: Role
    content: str
    speaker: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    created_at: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    external_id: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    session_id: str
    role: Role
    speaker: str | None
    content: str
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_name: str | None
    created_at: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    external_id: str | None


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    parent_id: str | None
    root_id: str
    session_key: str | None
    platform: str
    chat_id: str
    chat_type: str
    thread_id: str | None
    title: str | None
    started_at: float
    last_active_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    people: tuple[str, ...] = ()


@dataclass(slots=True)
class ImportReport:
    read: int = 0
    imported: int = 0
    skipped_duplicates: int = 0
    sessions: set[str] = field(default_factory=set)


MESSAGE_COLUMNS = (
    "id, session_id, role, speaker, content, tool_calls, tool_call_id, tool_name, created_at,"
    " prompt_tokens, completion_tokens, cached_tokens, external_id"
)
SESSION_COLUMNS = (
    "id, parent_id, root_id, session_key, platform, chat_id, chat_type, thread_id, title,"
    " started_at, last_active_at, ended_at, end_reason, message_count"
)


def message_from_row(row: Sequence[Any]) -> Message:
    calls = json.loads(row[5]) if row[5] else None
    return Message(row[0], row[1], row[2], row[3], row[4], calls, *row[6:13])


def session_from_row(row: Sequence[Any], people: Sequence[str] = ()) -> Session:
    return Session(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        row[11],
        row[12],
        row[13],
        tuple(people),
    )


def visible_clause(column: str = "session_id") -> str:
    """SQL that keeps ``column`` to sessions the person bound to ``:viewer`` took part in."""
    return f"{column} IN (SELECT session_id FROM session_people WHERE person = :viewer)"


class Archive:
    """``async with await Archive.open(path) as archive:`` or ``open`` / ``close``."""

    def __init__(
        self, path: Path, writer: aiosqlite.Connection, readers: list[aiosqlite.Connection]
    ):
        self.path = path
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers = readers
        for reader in readers:
            self._readers.put_nowait(reader)

    @classmethod
    async def open(cls, path: Path, *, readers: int = 2) -> Archive:
        await asyncio.to_thread(path.parent.mkdir, mode=0o700, parents=True, exist_ok=True)
        writer = await _connect(path)
        pool: list[aiosqlite.Connection] = []
        try:
            await migrate(writer)
            for _ in range(max(1, readers)):
                pool.append(await _connect(path, read_only=True))
        except BaseException:
            for db in (*pool, writer):
                await db.close()
            raise
        with contextlib.suppress(OSError):
            await asyncio.to_thread(path.chmod, 0o600)
        return cls(path, writer, pool)

    async def close(self) -> None:
        for reader in self._all_readers:
            await reader.close()
        with contextlib.suppress(aiosqlite.Error):
            await self._writer.execute("PRAGMA optimize")
        await self._writer.close()

    async def __aenter__(self) -> Archive:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- plumbing -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def reader(self) -> AsyncIterator[aiosqlite.Connection]:
        db = await self._readers.get()
        try:
            yield db
        finally:
            self._readers.put_nowait(db)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction on the writer connection; rolled back on any error."""
        async with self._write_lock:
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield self._writer
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            await self._writer.execute("COMMIT")

    # -- writing --------------------------------------------------------------------------

    async def start_session(self, spec: SessionSpec) -> None:
        """Create the session row (idempotent) and record its people."""
        async with self.transaction() as db:
            await self._ensure_session(db, spec)

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
        now = time.time()
        async with self.transaction() as db:
            scope = await self._join(db, session_id, people)
            ids: list[int] = []
            for message in messages:
                cursor = await db.execute(
                    "INSERT INTO messages (session_id, role, speaker, content, tool_calls,"
                    " tool_call_id, tool_name, created_at, prompt_tokens, completion_tokens,"
                    " cached_tokens, external_id, scope) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    _message_params(session_id, message, now, scope),
                )
                assert cursor.lastrowid is not None
                ids.append(cursor.lastrowid)
            first_user = next((m.content for m in messages if m.role == "user"), None)
            await db.execute(
                "UPDATE sessions SET last_active_at = ?, message_count = message_count + ?,"
                " title = COALESCE(title, ?) WHERE id = ?",
                (
                    max(m.created_at or now for m in messages),
                    len(messages),
                    _title(first_user),
                    session_id,
                ),
            )
        return ids

    async def end_session(self, session_id: str, reason: str) -> None:
        async with self.transaction() as db:
            await db.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?"
                " WHERE id = ? AND ended_at IS NULL",
                (time.time(), reason, session_id),
            )

    async def _ensure_session(self, db: aiosqlite.Connection, spec: SessionSpec) -> None:
        started = spec.started_at if spec.started_at is not None else time.time()
        root = spec.id
        if spec.parent_id is not None:
            rows = await db.execute_fetchall(
                "SELECT root_id FROM sessions WHERE id = ?", (spec.parent_id,)
            )
            if not rows:
                raise ArchiveError(f"parent session {spec.parent_id!r} does not exist")
            root = next(iter(rows))[0]
        await db.execute(
            "INSERT OR IGNORE INTO sessions (id, parent_id, root_id, session_key, platform,"
            " chat_id, chat_type, thread_id, title, started_at, last_active_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                spec.id,
                spec.parent_id,
                root,
                spec.session_key,
                spec.platform,
                spec.chat_id,
                spec.chat_type,
                spec.thread_id,
                spec.title,
                started,
                started,
            ),
        )
        await self._join(db, spec.id, spec.people)

    async def _join(self, db: aiosqlite.Connection, session_id: str, people: Sequence[str]) -> str:
        """Add participants; when someone new joins, re-scope the session's messages."""
        rows = await db.execute_fetchall("SELECT scope FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            raise ArchiveError(f"session {session_id!r} does not exist")
        scope: str = next(iter(rows))[0]
        changed = False
        for person in people:
            cursor = await db.execute(
                "INSERT OR IGNORE INTO session_people (session_id, person) VALUES (?, ?)",
                (session_id, person),
            )
            changed = changed or cursor.rowcount > 0
        if changed:
            everyone = await db.execute_fetchall(
                "SELECT person FROM session_people WHERE session_id = ? ORDER BY person",
                (session_id,),
            )
            scope = " ".join(scope_token(row[0]) for row in everyone)
            await db.execute("UPDATE sessions SET scope = ? WHERE id = ?", (scope, session_id))
            await db.execute(
                "UPDATE messages SET scope = ? WHERE session_id = ? AND scope != ?",
                (scope, session_id, scope),
            )
        return scope

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

    # -- import / export ------------------------------------------------------------------

    async def import_records(
        self,
        lines: Iterable[str],
        *,
        batch: int = 2000,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import JSONL message records (see ``parse_record``); idempotent on external_id.

        Every line is validated before anything is written, so a bad file imports nothing.
        Records are then written in transactions of ``batch``; should the database fail
        midway, the batches already committed stay, and running the import again skips
        them (records without an external_id would be added twice).

        A record exported by ``export_records`` carries ``external_id`` ``mnemo:<message
        id>`` and its archive session id, so importing an export back into the archive it
        came from adds nothing.
        """
        records = [
            parse_record(text, number) for number, text in enumerate(lines, 1) if text.strip()
        ]
        report = ImportReport(read=len(records))
        for start in range(0, len(records), batch):
            chunk = records[start : start + batch]
            async with self.transaction() as db:
                for record in chunk:
                    sid = await self._import_session_id(db, record)
                    if await self._already_here(db, sid, record.external_id):
                        report.skipped_duplicates += 1
                        continue
                    if sid not in report.sessions:
                        await self._ensure_session(db, record.spec(sid))
                        report.sessions.add(sid)
                    else:
                        await self._join(db, sid, (record.person,))
                    scope_rows = await db.execute_fetchall(
                        "SELECT scope FROM sessions WHERE id = ?", (sid,)
                    )
                    scope = next(iter(scope_rows))[0]
                    cursor = await db.execute(
                        "INSERT OR IGNORE INTO messages (session_id, role, speaker, content,"
                        " created_at, external_id, scope) VALUES (?,?,?,?,?,?,?)",
                        (
                            sid,
                            record.role,
                            record.person if record.role == "user" else None,
                            record.content,
                            record.created_at,
                            record.external_id,
                            scope,
                        ),
                    )
                    if cursor.rowcount > 0:
                        report.imported += 1
                        await db.execute(
                            "UPDATE sessions SET message_count = message_count + 1,"
                            " last_active_at = max(last_active_at, ?), started_at ="
                            " min(started_at, ?), title = COALESCE(title, ?) WHERE id = ?",
                            (
                                record.created_at,
                                record.created_at,
                                _title(record.content) if record.role == "user" else None,
                                sid,
                            ),
                        )
                    else:
                        report.skipped_duplicates += 1
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

    @staticmethod
    async def _import_session_id(db: aiosqlite.Connection, record: ImportRecord) -> str:
        """Our own session ids (an export) are kept; any other name is hashed."""
        if _OWN_SESSION_ID.fullmatch(record.session):
            rows = await db.execute_fetchall(
                "SELECT platform FROM sessions WHERE id = ?", (record.session,)
            )
            found = list(rows)
            if not found or found[0][0] == record.platform:
                return record.session
        return record.hashed_session_id

    @staticmethod
    async def _already_here(db: aiosqlite.Connection, sid: str, external_id: str | None) -> bool:
        """An exported ``mnemo:<id>`` record whose message is still in that session."""
        if external_id is None or not external_id.startswith("mnemo:"):
            return False
        number = external_id.removeprefix("mnemo:")
        if not number.isdigit():
            return False
        rows = await db.execute_fetchall(
            "SELECT 1 FROM messages WHERE id = ? AND session_id = ?", (int(number), sid)
        )
        return bool(list(rows))

    # -- integrity ------------------------------------------------------------------------

    async def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and the FTS5 index checks."""
        problems: list[str] = []
        async with self.reader() as db:
            rows = await db.execute_fetchall("PRAGMA integrity_check")
            problems += [f"integrity_check: {r[0]}" for r in rows if r[0] != "ok"]
            count = await _scalar(db, "SELECT count(*) FROM messages")
            for table in ("messages_fts", "messages_trigram"):
                indexed = await _scalar(db, f"SELECT count(*) FROM {table}_docsize")
                if indexed != count:
                    problems.append(f"{table}: {indexed} indexed rows for {count} messages")
        for table in ("messages_fts", "messages_trigram"):
            try:
                async with self.transaction() as db:  # integrity-check is a write statement
                    await db.execute(
                        f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"
                    )
            except aiosqlite.DatabaseError as exc:
                problems.append(f"{table}: {exc}")
        return problems

    async def repair(self) -> None:
        """Rebuild both FTS indexes from the messages table."""
        async with self.transaction() as db:
            for table in ("messages_fts", "messages_trigram"):
                await db.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")


@dataclass(frozen=True, slots=True)
class ImportRecord:
    session: str
    person: str
    platform: str
    chat: str
    role: Literal["user", "assistant"]
    content: str
    created_at: float
    external_id: str | None

    @property
    def hashed_session_id(self) -> str:
        digest = hashlib.blake2b(f"{self.platform}\0{self.session}".encode(), digest_size=10)
        return "i" + digest.hexdigest()

    def spec(self, session_id: str) -> SessionSpec:
        return SessionSpec(
            id=session_id,
            platform=self.platform,
            chat_id=self.chat,
            chat_type="imported",
            people=(self.person,),
            started_at=self.created_at,
        )


def parse_record(text: str, line: int) -> ImportRecord:
    """One JSONL import line, validated field by field."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(line, f"not JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise ImportFormatError(line, "expected a JSON object")
    required = ("session", "person", "platform", "chat", "role", "content", "created_at")
    missing = [k for k in required if k not in raw]
    if missing:
        raise ImportFormatError(line, f"missing {', '.join(missing)}")
    unknown = sorted(set(raw) - {*required, "external_id"})
    if unknown:
        raise ImportFormatError(line, f"unknown key(s) {', '.join(unknown)}")
    for key in required:
        if not isinstance(raw[key], str):
            raise ImportFormatError(line, f"{key} must be a string, not {_json_kind(raw[key])}")
    if raw.get("external_id") is not None and not isinstance(raw["external_id"], str):
        raise ImportFormatError(line, "external_id must be a string")
    if raw["role"] not in ("user", "assistant"):
        raise ImportFormatError(line, f"role must be 'user' or 'assistant', not {raw['role']!r}")
    try:
        stamp = datetime.fromisoformat(raw["created_at"])
    except ValueError:
        raise ImportFormatError(
            line, f"created_at is not ISO-8601: {raw['created_at']!r}"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    try:  # e.g. 0001-01-01T00:00+05:00 is before year 1 in UTC
        stamp.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ImportFormatError(
            line, f"created_at is out of range: {raw['created_at']!r}"
        ) from None
    for key in ("session", "person", "platform", "chat"):
        if not raw[key].strip():
            raise ImportFormatError(line, f"{key} is empty")
    try:
        validate_person(raw["person"])
    except InvalidPersonError as exc:
        raise ImportFormatError(line, str(exc)) from None
    return ImportRecord(
        raw["session"],
        raw["person"],
        raw["platform"],
        raw["chat"],
        raw["role"],
        raw["content"],
        stamp.timestamp(),
        raw.get("external_id"),
    )


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


async def _scalar(db: aiosqlite.Connection, sql: str, params: Any = ()) -> Any:
    rows = await db.execute_fetchall(sql, params)
    return next(iter(rows))[0]


async def _connect(path: Path, *, read_only: bool = False) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        for pragma in PRAGMAS:
            if read_only and pragma.startswith("PRAGMA journal_mode"):
                continue
            await db.execute(pragma)
        if read_only:
            await db.execute("PRAGMA query_only = 1")
    except BaseException:
        await db.close()  # an unclosed connection's thread would keep the process alive
        raise
    return db


def _message_params(
    session_id: str, message: NewMessage, now: float, scope: str
) -> tuple[Any, ...]:
    if message.role not in ROLES:
        raise ArchiveError(f"unknown role {message.role!r}")
    calls = json.dumps(list(message.tool_calls), ensure_ascii=False) if message.tool_calls else None
    return (
        session_id,
        message.role,
        message.speaker,
        message.content,
        calls,
        message.tool_call_id,
        message.tool_name,
        message.created_at if message.created_at is not None else now,
        message.prompt_tokens,
        message.completion_tokens,
        message.cached_tokens,
        message.external_id,
        scope,
    )


def _title(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"
