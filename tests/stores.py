"""The synchronous stores on both backends: ``storage`` runs a test once on files in its
``tmp_path`` and once on PostgreSQL (a schema of the test's own, via ``postgres_dsn``; the
test skips where PostgreSQL does not answer). ``Storage.replica()`` opens a second view of
the same storage — on PostgreSQL a second pool, as a second ``mnemo run`` would — so tests can
check what one replica sees of another's writes.

Loaded for every test by ``tests/conftest.py`` (``pytest_plugins``); psycopg is imported only
when a test asks for PostgreSQL, as it is an extra.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from memory import MemoryStore, MemoryStores, Target
from memory.curated import FILE_NAMES
from memory.documents import Documents, FileDocuments, FileFolders, Folders
from memory.skills import DocumentTree, SkillStore

if TYPE_CHECKING:
    from memory.documents.postgres import PgStores

__all__ = ["Storage", "pg_stores_factory", "raw", "storage"]

StorageName = Literal["files", "postgres"]


@dataclass
class Storage:
    name: StorageName
    tmp: Path
    open_pg: Callable[[], PgStores] | None = None
    pg: PgStores | None = field(default=None)

    def __post_init__(self) -> None:
        if self.open_pg is not None and self.pg is None:
            self.pg = self.open_pg()

    def replica(self) -> Storage:
        """The same storage seen as another replica would see it."""
        return Storage(self.name, self.tmp, self.open_pg)

    def folders(self) -> Folders:
        if self.pg is None:
            return FileFolders(self.tmp / "memories")
        return self.pg.memory()

    def memory_stores(self, **kw: Any) -> MemoryStores:
        return MemoryStores(self.folders(), **kw)

    def memory(self, person: str = "telegram-1", **kw: Any) -> MemoryStore:
        return MemoryStore(self.folders().folder(person), person=person, **kw)

    def documents(self, folder: str = "docs") -> Documents:
        """A folder of documents no store uses (for the seam's own contract)."""
        if self.pg is None:
            return FileDocuments(self.tmp / "documents" / folder)
        return self.pg.documents("test", folder)

    def skills(self, **kw: Any) -> SkillStore:
        if self.pg is None:
            return SkillStore(self.tmp / "skills", **kw)
        return SkillStore(DocumentTree(self.pg.skills()), **kw)

    def pairing_documents(self) -> Documents:
        if self.pg is None:
            return FileDocuments(self.tmp)
        return self.pg.pairing()


def raw(store: MemoryStore, target: Target = "memory") -> str | None:
    """What the store keeps for ``target``, as text (None: nothing yet)."""
    document = store.documents.read(FILE_NAMES[target])
    return None if document.raw is None else document.raw.decode("utf-8")


@pytest.fixture
def pg_stores_factory(request: pytest.FixtureRequest) -> Iterator[Callable[[], PgStores]]:
    """Opens ``PgStores`` on the test's schema, each with a pool of its own (closed after)."""
    dsn: str = request.getfixturevalue("postgres_dsn")
    from psycopg_pool import ConnectionPool

    from memory.documents.postgres import PgStores

    pools: list[ConnectionPool[Any]] = []

    def open_stores() -> PgStores:
        pool: ConnectionPool[Any] = ConnectionPool(dsn, min_size=1, max_size=4, open=True)
        pools.append(pool)
        return PgStores(pool)

    try:
        yield open_stores
    finally:
        for pool in pools:
            pool.close()


@pytest.fixture(params=["files", "postgres"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    if request.param == "files":
        return Storage("files", tmp_path)
    opener: Callable[[], PgStores] = request.getfixturevalue("pg_stores_factory")
    return Storage("postgres", tmp_path, opener)
