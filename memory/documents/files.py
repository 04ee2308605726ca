"""Documents in a folder on disk: the stores' behaviour from before there was a choice.

``FileDocuments(directory)`` keeps each document as a file of its own (mode 0600, the folder
0700, created on the first write): ``exclusive`` holds ``flock`` on ``<name>.lock``
(``memory.files.file_lock``), a write goes through ``atomic_write_bytes`` (temp file, fsync,
rename), a backup is ``<name>.bak.<unix-ts>`` beside it and a document set aside becomes
``<name>.corrupt.<unix-ts>``. The version is the file's (inode, mtime, size): an atomic
write always makes a new inode, so a file replaced by anyone — a store, or a person with an
editor — has a new version.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from memory.documents.base import Conflict, Document, Version
from memory.files import atomic_write_bytes, ensure_private_dir, file_lock, fsync_dir, move_aside

__all__ = ["FileDocuments", "FileFolders"]


class FileDocuments:
    """The documents of one folder on disk."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def where(self) -> str:
        return str(self.directory)

    def path(self, name: str) -> Path:
        return self.directory / name

    def location(self, name: str) -> str:
        return str(self.path(name))

    def read(self, name: str) -> Document:
        try:
            fd = os.open(self.path(name), os.O_RDONLY | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            return Document(None, None)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            return Document(handle.read(), _stamp(info))

    def version(self, name: str) -> Version:
        try:
            return _stamp(self.path(name).stat())
        except (FileNotFoundError, NotADirectoryError):
            return None

    def write(self, name: str, data: bytes, *, expected: Version) -> None:
        if self.version(name) != expected:
            raise Conflict(self.location(name))
        ensure_private_dir(self.directory)
        atomic_write_bytes(self.path(name), data)

    def delete(self, name: str, *, expected: Version) -> None:
        if self.version(name) != expected:
            raise Conflict(self.location(name))
        if expected is not None:
            os.unlink(self.path(name))
            fsync_dir(self.directory)

    def names(self) -> list[str]:
        """Documents only: no locks, temp files, backups or files set aside."""
        try:
            found = os.listdir(self.directory)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(
            name
            for name in found
            if not name.startswith(".")
            and not name.endswith(".lock")
            and ".bak." not in name
            and ".corrupt." not in name
            and (self.directory / name).is_file()
        )

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        with file_lock(self.path(name)):
            yield

    def backup(self, name: str, raw: bytes, *, now: float) -> str:
        """``<name>.bak.<unix-ts>`` beside the file, reusing an identical existing backup."""
        path = self.path(name)
        for existing in sorted(self.directory.glob(name + ".bak.*")):
            if existing.read_bytes() == raw:
                return str(existing)
        stamp = int(now)
        candidate = path.with_name(f"{name}.bak.{stamp}")
        n = 1
        while candidate.exists():
            candidate = path.with_name(f"{name}.bak.{stamp}-{n}")
            n += 1
        ensure_private_dir(self.directory)
        atomic_write_bytes(candidate, raw)
        return str(candidate)

    def set_aside(self, name: str, problem: object, *, what: str, now: float) -> None:
        move_aside(self.path(name), problem, what=what, now=now)


class FileFolders:
    """One folder per person under ``root`` (``<home>/memories``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def where(self) -> str:
        return str(self.root)

    def folder(self, name: str) -> FileDocuments:
        return FileDocuments(self.root / name)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir())


def _stamp(info: os.stat_result) -> tuple[int, int, int] | None:
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_size)
