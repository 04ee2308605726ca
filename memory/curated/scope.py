"""Where each person's curated memory lives: ``MemoryStores`` maps people to stores.

Under ``<home>/memories``, scope ``person`` gives every person (a valid person id,
``memory.people``) a folder of their own; scope ``shared`` maps everyone to the one folder
``shared``. A chat's memory (``memory.group_scope: chat``) is a "person" id of its own, made
by the gateway.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from memory.curated.store import MemoryLimits, MemoryStore
from memory.people import is_person_id, validate_person

__all__ = ["MemoryScope", "MemoryStores"]

MemoryScope = Literal["person", "shared"]


class MemoryStores:
    """Maps people to their stores under ``<home>/memories``; scope ``shared`` = one store."""

    def __init__(
        self,
        root: Path,
        *,
        limits: MemoryLimits | None = None,
        scope: MemoryScope = "person",
        write_approval: bool = False,
    ) -> None:
        self.root = root
        self.limits = limits or MemoryLimits()
        self.scope = scope
        self.write_approval = write_approval

    def directory_for(self, person: str) -> str:
        return "shared" if self.scope == "shared" else validate_person(person)

    def for_person(self, person: str) -> MemoryStore:
        name = self.directory_for(person)
        return MemoryStore(
            self.root / name,
            limits=self.limits,
            write_approval=self.write_approval,
            person=name,
        )

    def people(self) -> list[str]:
        """Every person (directory) that has a store on disk, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and is_person_id(p.name))

    def __iter__(self) -> Iterator[MemoryStore]:
        """Every store on disk (for operators: scans, stats)."""
        for name in self.people():
            yield MemoryStore(
                self.root / name,
                limits=self.limits,
                write_approval=self.write_approval,
                person=name,
            )
