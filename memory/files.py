"""Durable file primitives shared by the curated memory store, the skills and the archive.

* ``file_lock(path)`` holds an exclusive ``flock`` on a *separate* ``<path>.lock`` file, so
  the data file itself can be swapped by ``os.replace`` while the lock is held. ``flock``
  locks belong to an open file description, so the lock excludes other processes and
  other threads of this process alike.
* ``ensure_private_dir(path)`` makes every folder of ours (the home, ``memories/``, a
  person's folder, ``skills/`` and its subfolders, a lock file's parent) mode 0700 whatever
  the umask.
* ``atomic_write_bytes(path, data)`` writes a temp file in the same directory, flushes,
  fsyncs, renames over ``path`` and fsyncs the directory: a reader (or a crash) sees the
  old file or the new one, never a partial one.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_private_dir",
    "file_lock",
    "fsync_dir",
    "move_aside",
]

log = logging.getLogger(__name__)

FILE_MODE = 0o600
DIR_MODE = 0o700


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and each missing parent with mode 0700, whatever the umask.

    ``Path.mkdir(mode, parents=True)`` gives missing parents the default mode and masks
    ``mode`` with the umask, so each missing level is made here and chmodded outright.
    (``mkdir`` with 0700 is never *more* open than 0700, so there is no window in which
    others could look in.) A directory that already exists is left as it is, even one made
    by a concurrent caller a moment ago: its mode is its owner's choice (``mnemo doctor``
    warns about an open home). A file in the way raises ``FileExistsError``.
    """
    missing: list[Path] = []
    level = path
    while not level.is_dir() and level.parent != level:
        missing.append(level)
        level = level.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            if directory.is_dir():
                continue  # made by someone else meanwhile: not ours to chmod
            raise
        os.chmod(directory, DIR_MODE)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` for the duration of the block.

    The parent directory is created (mode 0700) if it does not exist yet.
    """
    ensure_private_dir(path.parent)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        # Closing the descriptor releases the flock.
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = FILE_MODE) -> None:
    """Replace ``path`` with ``data`` atomically and durably."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, mode: int = FILE_MODE) -> None:
    """``atomic_write_bytes`` for UTF-8 text (no BOM, newlines written as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def fsync_dir(directory: Path) -> None:
    """Make a rename or an unlink in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def move_aside(path: Path, problem: object, *, what: str, now: float) -> None:
    """A state file we cannot read as ours goes to ``<name>.corrupt.<unix-ts>`` (kept for an
    operator, logged) so every later call does not trip over it; ``what`` names it in the
    log line ("staged memory writes", "the pairing file")."""
    aside = path.with_name(f"{path.name}.corrupt.{int(now)}")
    try:
        os.replace(path, aside)
    except OSError as exc:
        log.warning(
            "%s in %s were unreadable (%s) and could not be moved: %s", what, path, problem, exc
        )
        return
    log.warning("%s in %s were unreadable (%s); moved to %s", what, path, problem, aside)
