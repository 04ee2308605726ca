"""How the archive's file and its connections are made, and how long a read may run.

``create_private`` makes ``state.db`` (and so its ``-wal`` and ``-shm``) private before SQLite
first opens it; ``connect_reader`` opens a read-only connection with the writer's pragmas;
``read_deadline`` bounds the reads of the current task (``bounded`` applies it to a reader for
the time it is lent): past it SQLite interrupts the running statement, which raises
``sqlite3.OperationalError: interrupted`` and frees the connection at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import stat
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiosqlite

from memory.archive import writer as w
from memory.files import FILE_MODE, ensure_private_dir

__all__ = ["READ_DEADLINE", "bounded", "connect_reader", "create_private", "read_deadline"]

#: When the reads of the current task must stop (``time.monotonic()``); see ``read_deadline``.
READ_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "READ_DEADLINE", default=None
)


@contextlib.contextmanager
def read_deadline(seconds: float) -> Iterator[None]:
    """Reads of the archive made in this block (by this task) give up after ``seconds``: a
    statement still running then is interrupted by SQLite and raises. For a caller with a
    budget (a prefetch), so that an abandoned search does not keep a reader busy."""
    token = READ_DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        READ_DEADLINE.reset(token)


@contextlib.asynccontextmanager
async def bounded(db: aiosqlite.Connection) -> AsyncIterator[None]:
    """``db`` under the current task's read deadline, if it has one (a progress handler
    checked every thousand SQLite instructions), removed again on the way out."""
    deadline = READ_DEADLINE.get()
    if deadline is None:
        yield
        return
    await db.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            # None removes it (sqlite3's API; aiosqlite's stub forgot the None)
            await db.set_progress_handler(None, 0)  # type: ignore[arg-type]


def create_private(path: Path) -> None:
    """The home (0700) and ``state.db`` (0600) exist before SQLite first opens the file.

    SQLite would create the database with 0644 minus the umask, and it gives the ``-wal``
    and ``-shm`` files it creates later the database file's own mode: made 0600 here, all
    three are private from the moment they exist, whatever the umask (an empty file is an
    empty database to SQLite). An existing database, perhaps from an older version that
    let its ``-wal`` and ``-shm`` be 0644, is tightened where we may.
    """
    ensure_private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        for existing in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm"))):
            with contextlib.suppress(OSError):  # missing, or not ours to change
                if stat.S_IMODE(existing.stat().st_mode) != FILE_MODE:
                    existing.chmod(FILE_MODE)
        return
    try:
        os.fchmod(fd, FILE_MODE)  # the umask may have taken bits SQLite needs
    finally:
        os.close(fd)


async def connect_reader(path: Path) -> aiosqlite.Connection:
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        for pragma in w.PRAGMAS:
            if not pragma.startswith("PRAGMA journal_mode"):
                await db.execute(pragma)
        await db.execute("PRAGMA query_only = 1")
    except BaseException:
        await db.close()  # an unclosed connection's thread would keep the process alive
        raise
    return db
