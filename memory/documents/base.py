"""The seam under the synchronous stores: named text documents with a version.

Curated memory (``MEMORY.md``, ``USER.md``, ``PENDING.json`` of each person) and pairing
(``pairing.json``) keep their rules — limits, ``§`` rendering, scanning, approvals, codes —
in their own modules and hand this seam nothing but bytes. Two implementations keep them:
``memory.documents.files`` (a folder on disk, today's behaviour) and
``memory.documents.postgres`` (rows in PostgreSQL, so that several replicas share them).

A ``Documents`` is one folder of named documents:

* ``read(name)`` gives the bytes and a ``version`` (``None`` while the document does not
  exist); ``write(name, data, expected=version)`` replaces it only if its version is still
  ``expected`` (compare-and-swap), else raises ``Conflict``;
* ``exclusive(name)`` is a section in which nobody else — no other thread, process or
  replica — is inside ``exclusive`` for the same name: a read → change → write inside it is
  an atomic batch. Sections nest (approving a staged write holds ``PENDING.json`` and then
  ``MEMORY.md``); always take names in the same order;
* ``backup`` keeps a copy of what a store refuses to overwrite, ``set_aside`` moves away a
  document the store cannot read as its own (a corrupt JSON file), so later calls do not
  trip over it.

``Document.foreign`` is the PostgreSQL reading of "edited by hand": the row's text is not the
text a store last wrote there (see ``memory.documents.postgres``). On disk it is always
False: a hand-edited file is judged by its content alone, as it always was.

A ``Folders`` maps folder names (people) to ``Documents``.

Errors::

    DocumentsError
    └── Conflict     the document changed since it was read (the compare-and-swap failed)
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Conflict", "Document", "Documents", "DocumentsError", "Folders", "Version"]

Version = object
"""Opaque; compare with ``==``. ``None`` means the document does not exist."""


class DocumentsError(Exception):
    """Base of the document seam's exceptions."""


class Conflict(DocumentsError):
    """A write whose expected version is no longer the document's: someone wrote between."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where} changed since it was read; nothing was written")
        self.where = where


@dataclass(frozen=True, slots=True)
class Document:
    raw: bytes | None  # None: the document does not exist
    version: Version  # None exactly when raw is None
    foreign: bool = False  # written by something other than a store (PostgreSQL only)

    @property
    def exists(self) -> bool:
        return self.raw is not None


class Documents(Protocol):
    """One folder of named documents (see the module docstring)."""

    @property
    def where(self) -> str:
        """The folder, for people: a path, or ``postgres:memory/telegram-1``."""
        ...

    def location(self, name: str) -> str:
        """One document, for people (messages, ``mnemo memory show --json``)."""
        ...

    def read(self, name: str) -> Document: ...

    def version(self, name: str) -> Version:
        """``read(name).version`` without reading the text (cheap; for caches)."""
        ...

    def write(self, name: str, data: bytes, *, expected: Version) -> None:
        """Replace ``name`` with ``data`` if its version is still ``expected`` (``None``:
        only if it does not exist); ``Conflict`` otherwise. Atomic and durable."""
        ...

    def delete(self, name: str, *, expected: Version) -> None:
        """Remove ``name`` if its version is still ``expected``; ``Conflict`` otherwise."""
        ...

    def names(self) -> list[str]:
        """The documents in the folder, sorted."""
        ...

    def exclusive(self, name: str) -> AbstractContextManager[None]: ...

    def backup(self, name: str, raw: bytes, *, now: float) -> str:
        """Keep ``raw`` (what ``name`` holds) as a copy; where it is, for people. An identical
        copy kept before is reused. Durable even if the caller's section then fails."""
        ...

    def set_aside(self, name: str, problem: object, *, what: str, now: float) -> None:
        """Move ``name`` out of the way (kept for an operator, logged without its text)."""
        ...


class Folders(Protocol):
    """Folders of documents: one per person (curated memory)."""

    @property
    def where(self) -> str: ...

    def folder(self, name: str) -> Documents: ...

    def names(self) -> list[str]:
        """Every folder that exists, sorted (a folder exists once something was written)."""
        ...
