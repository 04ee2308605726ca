"""Where each person's curated memory lives: ``MemoryStores`` maps people to stores.

Under ``<home>/memories``, scope ``person`` gives every person (a valid person id,
``memory.people``) a folder of their own; scope ``shared`` maps everyone to the one folder
``shared``. A chat's memory (``memory.group_scope: chat``) is a "person" id of its own, made
by the gateway. The folders are ``memory.documents.Folders``: ``<home>/memories`` on disk by
default, or PostgreSQL's (``MemoryStores(PgStores(pool).folders("memory"))``, every replica
then reading and writing the same memory).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from memory.curated.store import MemoryLimits, MemoryStore
from memory.documents import FileFolders, Folders
from memory.people import is_person_id, validate_person

__all__ = ["MemoryScope", "MemoryStores"]

MemoryScope = Literal["person", "shared"]


class MemoryStores:
    """Maps people to their stores under ``root`` (``<home>/memories``, or any ``Folders``);
    scope ``shared`` = one store."""

    def __init__(
        self,
        root: Path | Folders,
        *,
        limits: MemoryLimits | None = None,
        scope: MemoryScope = "person",
        write_approval: bool = False,
    ) -> None:
        self.folders: Folders = FileFolders(root) if isinstance(root, Path) else root
        self.limits = limits or MemoryLimits()
        self.scope = scope
        self.write_approval = write_approval

    @property
    def where(self) -> str:
        """Where the stores are, for people: a folder, or ``postgres:memory``."""
        return self.folders.where

    def directory_for(self, person: str) -> str:
        return "shared" if self.scope == "shared" else validate_person(person)

    def for_person(self, person: str) -> MemoryStore:
        return self._store(self.directory_for(person))

    def people(self) -> list[str]:
        """Every person (folder) that has a store, sorted."""
        return [name for name in self.folders.names() if is_person_id(name)]

    def __iter__(self) -> Iterator[MemoryStore]:
        """Every store there is (for operators: scans, stats)."""
        for name in self.people():
            yield self._store(name)

    def _store(self, name: str) -> MemoryStore:
        return MemoryStore(
            self.folders.folder(name),
            limits=self.limits,
            write_approval=self.write_approval,
            person=name,
        )
