"""Where the skill folders are kept: ``SkillTree``, the one seam the skill code reads and
writes through, with a path relative to the skills root (``devops/deploy/SKILL.md``, ``""``
the root itself) for every file and folder.

* ``FileTree(root)`` is a folder on disk, as skills always were: ``kind`` never follows a
  symlink, ``read_text`` opens with ``O_NOFOLLOW`` and checks the size first
  (``memory.skills.files``); a create builds the folder under a dot name and renames it into
  place, SKILL.md and support files go through ``atomic_write_text``, a delete renames the
  folder to a dot name before removing it; folders are 0700 and files 0600. Its write lock is
  ``<root>/.write.lock``; its staged changes are ``<root>/.pending.json``.
* ``DocumentTree(documents)`` keeps every file as a document named by its path
  (``memory.documents``, e.g. PostgreSQL's ``PgStores(pool).documents("skills")``, which
  every replica shares): folders are implied by the paths below them, there are no
  symlinks, and the write lock is the exclusive section of ``.write``, so a create, a
  delete of a whole skill, or an approval is one transaction there. Each ``kind`` and
  ``entries`` lists the folder's documents; a read that asks many of them (the index at a
  session's start, a skill's view) runs inside ``reading()``, which lists them once.

Both skip dot entries when listing (the staged changes, locks, temporary folders).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from memory.documents import Conflict, Documents, DocumentsError, FileDocuments
from memory.files import DIR_MODE, atomic_write_text, ensure_private_dir, file_lock, fsync_dir
from memory.skills.files import Kind, SkillError, decoded, kind_of, read_text

__all__ = ["DocumentTree", "FileTree", "SkillTree", "join", "walk", "walk_real"]

WRITE_LOCK = ".write"


def join(*parts: str) -> str:
    """``a/b/c`` from the non-empty parts (``join("", "x") == "x"``)."""
    return "/".join(part for part in parts if part)


class SkillTree(Protocol):
    """The skills root: every path is relative to it (see the module docstring)."""

    @property
    def where(self) -> str:
        """The root, for people: a path, or ``postgres:skills``."""
        ...

    @property
    def pending(self) -> Documents:
        """Where ``.pending.json`` (the changes staged for an admin) is kept."""
        ...

    def location(self, rel: str) -> str: ...

    def kind(self, rel: str) -> Kind:
        """What ``rel`` is (``""``: the root), without following a symlink."""
        ...

    def entries(self, rel: str, *, hidden: bool = False) -> list[str]:
        """Sorted names in the folder ``rel``, dot entries only if ``hidden`` (``OSError`` if
        it cannot be listed)."""
        ...

    def read_text(self, rel: str, *, max_bytes: int, label: str, limit_text: str) -> str:
        """Strict UTF-8 text of a regular file (a leading BOM dropped); ``SkillError``
        naming ``label`` if it is missing, not a file, too big or not UTF-8."""
        ...

    def inside(self, rel: str, base: str) -> bool:
        """``rel`` really is below ``base`` (belt and braces after ``kind`` checks)."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """A read of many paths: where listing costs a round trip, the listing is taken
        once for the block (this thread's; a write of this tree inside lists again)."""
        ...

    def write_lock(self) -> AbstractContextManager[None]: ...

    def create_folder(self, rel: str, skill_md: str) -> None:
        """A new skill folder ``rel`` holding ``SKILL.md``, all at once."""
        ...

    def write_text(self, rel: str, text: str) -> None:
        """Replace or create the file ``rel`` (its missing folders too), atomically."""
        ...

    def remove_file(self, rel: str, *, keep: str) -> None:
        """Remove the file ``rel`` and the folders it leaves empty, up to ``keep``."""
        ...

    def delete_folder(self, rel: str) -> None:
        """Remove the folder ``rel`` and everything in it (never through a symlink), and its
        parent if that is left empty and is not the root."""
        ...


class FileTree:
    """The skills folder on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._pending = FileDocuments(root)

    @property
    def where(self) -> str:
        return str(self.root)

    @property
    def pending(self) -> Documents:
        return self._pending

    def path(self, rel: str) -> Path:
        return self.root / rel if rel else self.root

    def location(self, rel: str) -> str:
        return str(self.path(rel))

    def kind(self, rel: str) -> Kind:
        return kind_of(self.path(rel))

    def entries(self, rel: str, *, hidden: bool = False) -> list[str]:
        names = os.listdir(self.path(rel))
        return sorted(name for name in names if hidden or not name.startswith("."))

    def read_text(self, rel: str, *, max_bytes: int, label: str, limit_text: str) -> str:
        return read_text(self.path(rel), max_bytes=max_bytes, label=label, limit_text=limit_text)

    def inside(self, rel: str, base: str) -> bool:
        return self.path(rel).resolve().is_relative_to(self.path(base).resolve())

    def reading(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # each stat is the truth, and cheap

    def write_lock(self) -> AbstractContextManager[None]:
        return file_lock(self.root / WRITE_LOCK)

    def create_folder(self, rel: str, skill_md: str) -> None:
        target = self.path(rel)
        parent = target.parent
        ensure_private_dir(parent)  # skills/ and the category: 0700 whatever the umask
        tmp = Path(tempfile.mkdtemp(prefix=f".create-{target.name}-", dir=parent))
        try:
            os.chmod(tmp, DIR_MODE)  # becomes the skill's folder; mkdtemp's mode is masked
            atomic_write_text(tmp / "SKILL.md", skill_md)
            os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        fsync_dir(parent)

    def write_text(self, rel: str, text: str) -> None:
        path = self.path(rel)
        ensure_private_dir(path.parent)
        atomic_write_text(path, text)

    def remove_file(self, rel: str, *, keep: str) -> None:
        path, stop = self.path(rel), self.path(keep)
        os.unlink(path)
        directory = path.parent
        while directory != stop:  # drop folders the removal left empty
            try:
                directory.rmdir()
            except OSError:
                break
            directory = directory.parent
        fsync_dir(path.parent if path.parent.exists() else stop)

    def delete_folder(self, rel: str) -> None:
        folder = self.path(rel)
        parent = folder.parent
        doomed = parent / f".deleted-{folder.name}-{secrets.token_hex(4)}"
        os.rename(folder, doomed)
        fsync_dir(parent)
        shutil.rmtree(doomed)  # never follows symlinks: it unlinks them
        if parent != self.root:
            with contextlib.suppress(OSError):
                parent.rmdir()  # only succeeds when the category is now empty


class DocumentTree:
    """The skills as documents named by their paths (e.g. in PostgreSQL)."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self._pinned = threading.local()  # depth, names: the listing of a `reading` block

    @property
    def where(self) -> str:
        return self.documents.where

    @property
    def pending(self) -> Documents:
        return self.documents

    def location(self, rel: str) -> str:
        return self.documents.location(rel) if rel else self.documents.where

    def kind(self, rel: str) -> Kind:
        if not rel:
            return "dir"
        names = self._names()
        if rel in names:
            return "file"
        if any(name.startswith(rel + "/") for name in names):
            return "dir"
        return "missing"

    def entries(self, rel: str, *, hidden: bool = False) -> list[str]:
        prefix = rel + "/" if rel else ""
        found = {
            name[len(prefix) :].split("/", 1)[0]
            for name in self._names()
            if name.startswith(prefix)
        }
        return sorted(name for name in found if hidden or not name.startswith("."))

    def read_text(self, rel: str, *, max_bytes: int, label: str, limit_text: str) -> str:
        raw = self.documents.read(rel).raw
        if raw is None:
            what = "is not a regular file" if self.kind(rel) == "dir" else "does not exist"
            raise SkillError(f"{label} {what}.")
        if len(raw) > max_bytes:
            raise SkillError(f"{label} is {len(raw):,} bytes; {limit_text}.")
        return decoded(raw, label)

    def inside(self, rel: str, base: str) -> bool:
        return rel == base or rel.startswith(base + "/") or not base

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        pinned = self._pinned
        depth = getattr(pinned, "depth", 0)
        pinned.depth = depth + 1
        try:
            yield
        finally:
            pinned.depth = depth
            if not depth:
                pinned.names = None

    def _names(self) -> list[str]:
        pinned = self._pinned
        if not getattr(pinned, "depth", 0):
            return self.documents.names()
        names: list[str] | None = getattr(pinned, "names", None)
        if names is None:
            names = pinned.names = self.documents.names()
        return names

    def write_lock(self) -> AbstractContextManager[None]:
        return self.documents.exclusive(WRITE_LOCK)

    def create_folder(self, rel: str, skill_md: str) -> None:
        self._write(join(rel, "SKILL.md"), skill_md, None)

    def write_text(self, rel: str, text: str) -> None:
        self._write(rel, text, self.documents.version(rel))

    def remove_file(self, rel: str, *, keep: str) -> None:
        self._delete(rel)

    def delete_folder(self, rel: str) -> None:
        for name in self.documents.names():
            if name.startswith(rel + "/"):
                self._delete(name)

    def _write(self, rel: str, text: str, expected: object) -> None:
        self._pinned.names = None  # the listing changes
        try:
            self.documents.write(rel, text.encode("utf-8"), expected=expected)
        except Conflict:
            raise SkillError(f"{rel} changed while it was being written; retry.") from None
        except DocumentsError as exc:
            raise SkillError(f"{rel} could not be written: {exc}.") from None

    def _delete(self, rel: str) -> None:
        self._pinned.names = None
        try:
            self.documents.delete(rel, expected=self.documents.version(rel))
        except Conflict:
            raise SkillError(f"{rel} changed while it was being removed; retry.") from None


def walk_real(tree: SkillTree, base: str, parts: tuple[str, ...], *, label: str) -> str:
    """``base/parts…``, refusing a symlink or non-directory in any component but the last
    (which must not be a symlink either, and may be missing). ``label`` names the path in
    errors, relative to the skills root."""
    rel = base
    for index, part in enumerate(parts):
        rel = join(rel, part)
        kind = tree.kind(rel)
        last = index == len(parts) - 1
        shown = "/".join((label, *parts[: index + 1]))
        if kind == "symlink":
            raise SkillError(
                f"{shown} is a symbolic link; skills only use real files and folders inside "
                "their own folder."
            )
        if kind == "missing":
            return join(base, *parts)
        if not last and kind != "dir":
            raise SkillError(f"{shown} is not a folder.")
        if last and kind not in ("file", "dir"):
            raise SkillError(f"{shown} is not a regular file.")
    if not tree.inside(rel, base):  # belt and braces
        raise SkillError(f"{label}/{'/'.join(parts)} resolves outside the skill's folder.")
    return rel


def walk(tree: SkillTree, top: str) -> Iterator[tuple[str, Kind]]:
    """Every entry below ``top`` with its kind, depth first, never following a symlink."""
    for name in tree.entries(top):
        rel = join(top, name)
        kind = tree.kind(rel)
        yield rel, kind
        if kind == "dir":
            yield from walk(tree, rel)
