"""The archive's one write connection, and the write transactions it runs.

A write transaction (one exchange, one import batch) is a plain function of a
``sqlite3.Connection`` run whole on the writer's own thread: one thread hop per
transaction instead of one per statement, and no coroutine can interleave with it. The
thread is the connection's only user, as SQLite's default threading check requires.

Group commit: transactions that are waiting when the writer thread becomes free run
together, each inside its own SAVEPOINT of one ``BEGIN IMMEDIATE … COMMIT`` (at most
``GROUP_MAX`` of them). An exception in one rolls back to its savepoint: that transaction
leaves nothing, and the others of its group still commit. Each caller hears of its result
only after the COMMIT, so nothing is reported written that is not. Nothing waits to form a
group: a lone exchange commits at once, as before; under load (many chats at once) the
exchanges that arrived during one commit share the next, and with it the fixed cost of a
commit (the FTS5 indexes flush their pending terms once per commit). Readers
(``memory.archive.database``) use their own connections and see only committed data (WAL).

Checkpoints are off the write path: SQLite's automatic checkpoint would copy the WAL into
the database (and fsync it) inside whichever commit crossed the threshold — a 5 ms stall
at the 99th percentile of turns (bench/prefix_bench.py). Instead a second connection on its
own thread runs a PASSIVE checkpoint every ``CHECKPOINT_EVERY`` transactions, which never
blocks the writer or readers; ``close`` truncates the WAL. A passive checkpoint cannot finish
while writes keep coming, and SQLite only starts the WAL over once one has: under a steady
stream of turns the WAL would grow without bound (about 80 KB per exchange). So when the WAL
file has passed ``WAL_LIMIT`` the writer truncates it itself, between two transactions (a
short stall, once per ``WAL_LIMIT`` written), and ``journal_size_limit`` keeps the file at
most that size whenever SQLite starts it over on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memory.archive.cjk import has_cjk, index_messages
from memory.archive.records import (
    ROLES,
    ArchiveError,
    NewMessage,
    SessionSpec,
    scope_token,
    title_of,
)

__all__ = ["PRAGMAS", "Writer", "end_session", "ensure_session", "insert_exchange", "join"]

T = TypeVar("T")
PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA busy_timeout = 10000",
    "PRAGMA foreign_keys = ON",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA cache_size = -32000",
    f"PRAGMA journal_size_limit = {64 * 1024 * 1024}",
)
CHECKPOINT_EVERY = 100
GROUP_MAX = 64  # transactions one COMMIT may carry
WAL_LIMIT = 64 * 1024 * 1024  # bytes of WAL the writer lets pile up before it truncates it
log = logging.getLogger(__name__)


class Writer:
    """``await Writer.open(path)``; ``await writer.run(fn)``; ``await writer.close()``."""

    def __init__(
        self,
        executor: ThreadPoolExecutor,
        connection: sqlite3.Connection,
        checkpointer: ThreadPoolExecutor,
        checkpoint_db: sqlite3.Connection,
        wal: Path | None = None,
    ) -> None:
        self._wal = wal
        self.wal_limit = WAL_LIMIT
        self._executor = executor
        self._db = connection
        self._checkpointer = checkpointer
        self._checkpoint_db = checkpoint_db
        self._since_checkpoint = 0
        self._checkpoint: Future[None] | None = None
        self._waiting: list[_Job] = []  # transactions for the next group
        self._lock = threading.Lock()
        self._draining = False  # a drain is queued on (or running in) the writer thread
        self.groups = 0  # commits made for transactions (a test and the benchmark read it)

    @classmethod
    async def open(cls, path: Path) -> Writer:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemo-archive-writer")
        checkpointer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemo-checkpoint")
        loop = asyncio.get_running_loop()
        opened: list[sqlite3.Connection] = []
        try:
            opened.append(await loop.run_in_executor(executor, _connect, path))
            opened.append(await loop.run_in_executor(checkpointer, _connect, path))
        except BaseException:
            for db, pool in zip(opened, (executor, checkpointer), strict=False):
                await loop.run_in_executor(pool, db.close)
            executor.shutdown(wait=False)
            checkpointer.shutdown(wait=False)
            raise
        return cls(executor, opened[0], checkpointer, opened[1], path.with_name(path.name + "-wal"))

    async def run(self, work: Callable[[sqlite3.Connection], T], *, transaction: bool = True) -> T:
        """Run ``work`` on the writer thread, inside one transaction unless told otherwise.

        Cancelling the caller does not cancel the transaction: it runs to COMMIT (or
        ROLLBACK) on the writer thread, so a caller that was cancelled must not assume the
        write did not happen (retry with an ``external_id`` to stay idempotent)."""
        loop = asyncio.get_running_loop()
        if transaction:
            done: asyncio.Future[T] = loop.create_future()
            # a caller that was cancelled never reads it: take the exception off its hands
            done.add_done_callback(lambda f: f.cancelled() or f.exception())
            with self._lock:
                self._waiting.append(_Job(work, done, loop))
                start, self._draining = not self._draining, True
            if start:
                self._executor.submit(self._drain)
            result = await asyncio.shield(done)
        else:
            result = await loop.run_in_executor(self._executor, lambda: work(self._db))
        self._since_checkpoint += 1
        if self._since_checkpoint >= CHECKPOINT_EVERY and (
            self._checkpoint is None or self._checkpoint.done()
        ):
            self._since_checkpoint = 0
            if self._wal_size() > self.wal_limit:  # passive ones could not keep up
                await loop.run_in_executor(self._executor, _truncate, self._db)
            else:
                self._checkpoint = self._checkpointer.submit(_checkpoint, self._checkpoint_db)
        return result

    def _drain(self) -> None:
        """On the writer thread: commit the waiting transactions in groups until none wait."""
        while True:
            with self._lock:
                group = self._waiting[:GROUP_MAX]
                del self._waiting[: len(group)]
                if not group:
                    self._draining = False
                    return
            self.groups += 1
            for job, outcome in zip(group, _in_group(self._db, group), strict=True):
                job.loop.call_soon_threadsafe(_settle, job.done, outcome)

    def _wal_size(self) -> int:
        try:
            return 0 if self._wal is None else self._wal.stat().st_size
        except OSError:
            return 0

    async def close(self) -> None:
        def finish() -> None:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("PRAGMA optimize")
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._checkpointer, self._checkpoint_db.close)
        self._checkpointer.shutdown(wait=True)
        await loop.run_in_executor(self._executor, finish)
        self._executor.shutdown(wait=True)


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in PRAGMAS:
            db.execute(pragma)
        db.execute("PRAGMA wal_autocheckpoint = 0")  # see the module docstring
    except BaseException:
        db.close()
        raise
    return db


def _checkpoint(db: sqlite3.Connection) -> None:
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as exc:  # busy or locked: the next one will catch up
        log.info("archive checkpoint skipped: %s", exc)


def _truncate(db: sqlite3.Connection) -> None:
    """Copy the whole WAL into the database and empty it (on the writer's own thread, between
    two transactions; readers are waited for up to ``busy_timeout``)."""
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:  # busy: the next round tries again
        log.info("archive WAL truncation skipped: %s", exc)


@dataclass(slots=True)
class _Job:
    work: Callable[[sqlite3.Connection], Any]
    done: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop


def _in_group(db: sqlite3.Connection, group: Sequence[_Job]) -> list[tuple[bool, Any]]:
    """Run each job in its own savepoint of one transaction: (True, result) or (False,
    exception) per job, in order. A failed COMMIT (or BEGIN) fails them all."""
    outcomes: list[tuple[bool, Any]] = []
    try:
        db.execute("BEGIN IMMEDIATE")
        for job in group:
            db.execute("SAVEPOINT job")
            try:
                outcomes.append((True, job.work(db)))
            except Exception as exc:  # this job's, not the group's
                db.execute("ROLLBACK TO job")
                outcomes.append((False, exc))
            db.execute("RELEASE job")
        db.execute("COMMIT")
    except BaseException as exc:  # the group's: nothing of it was written
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        failure = exc if isinstance(exc, Exception) else ArchiveError(f"write stopped: {exc!r}")
        return [(False, failure)] * len(group)
    return outcomes


def _settle(done: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if done.cancelled():
        return
    ok, value = outcome
    if ok:
        done.set_result(value)
    else:
        done.set_exception(value)


# -- write transactions (run inside Writer.run) -------------------------------------------


def ensure_session(db: sqlite3.Connection, spec: SessionSpec) -> None:
    """Create the session row if it is new, and record its people."""
    started = spec.started_at if spec.started_at is not None else time.time()
    root = spec.id
    if spec.parent_id is not None:
        row = db.execute("SELECT root_id FROM sessions WHERE id = ?", (spec.parent_id,)).fetchone()
        if row is None:
            raise ArchiveError(f"parent session {spec.parent_id!r} does not exist")
        root = row[0]
    db.execute(
        "INSERT OR IGNORE INTO sessions (id, parent_id, root_id, session_key, platform,"
        " chat_id, chat_type, thread_id, title, started_at, last_active_at, system_prompt)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
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
            spec.system_prompt,
        ),
    )
    join(db, spec.id, spec.people)


def join(db: sqlite3.Connection, session_id: str, people: Sequence[str]) -> None:
    """Add participants; when someone new joins, re-scope the session's messages."""
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise ArchiveError(f"session {session_id!r} does not exist")
    added = db.executemany(
        "INSERT OR IGNORE INTO session_people (session_id, person) VALUES (?, ?)",
        [(session_id, person) for person in people],
    ).rowcount
    if added <= 0:
        return
    everyone = db.execute(
        "SELECT person FROM session_people WHERE session_id = ? ORDER BY person", (session_id,)
    ).fetchall()
    scope = " ".join(scope_token(row[0]) for row in everyone)
    db.execute("UPDATE sessions SET scope = ? WHERE id = ?", (scope, session_id))
    db.execute(
        "UPDATE messages SET scope = ? WHERE session_id = ? AND scope != ?",
        (scope, session_id, scope),
    )


INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, role, speaker, content, tool_calls, tool_call_id,"
    " tool_name, created_at, prompt_tokens, completion_tokens, cached_tokens, external_id,"
    " scope) VALUES (?,?,?,?,?,?,?,?,?,?,?,?, (SELECT scope FROM sessions WHERE id = ?))"
)


def insert_exchange(
    db: sqlite3.Connection,
    session_id: str,
    messages: Sequence[NewMessage],
    people: Sequence[str],
) -> list[int]:
    """One exchange: join new people, insert every message, update the session row."""
    now = time.time()
    if people:
        join(db, session_id, people)
    elif db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise ArchiveError(f"session {session_id!r} does not exist")
    ids: list[int] = []
    for message in messages:
        cursor = db.execute(INSERT_MESSAGE, _message_params(session_id, message, now))
        assert cursor.lastrowid is not None
        ids.append(cursor.lastrowid)
    if any(has_cjk(m.content) for m in messages):  # the CJK gram index (memory.archive.cjk)
        index_messages(db, ids)
    first_user = next((m.content for m in messages if m.role == "user"), None)
    db.execute(
        "UPDATE sessions SET last_active_at = max(last_active_at, ?),"
        " message_count = message_count + ?, title = COALESCE(title, ?) WHERE id = ?",
        (
            max(m.created_at or now for m in messages),
            len(messages),
            title_of(first_user),
            session_id,
        ),
    )
    return ids


def end_session(db: sqlite3.Connection, session_id: str, reason: str) -> None:
    db.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        (time.time(), reason, session_id),
    )


def _message_params(session_id: str, message: NewMessage, now: float) -> tuple[object, ...]:
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
        session_id,
    )
