"""The archive on both backends, for tests anywhere in the tree: the ``backend`` and
``archive_store`` fixtures (``tests/conftest.py`` registers them) give a real SQLite file or a
real PostgreSQL schema (``tests.services.postgres_dsn``, skipped where PostgreSQL does not
answer), so one set of behavioural tests holds both to the same contract
(``memory.archive.store``); ``searcher_of`` gives the searcher each
backend's callers would build. (Not ``store``: that names a memory or skill store in many
tests.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from memory.archive.database import Archive
from memory.archive.indexes import Indexes
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore, SearchIndexes, SessionSearch

if TYPE_CHECKING:
    from memory.archive.postgres import PgArchive, PgIndexes

__all__ = ["archive_store", "backend", "searcher_of"]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite; for PostgreSQL the DSN of a fresh schema (or the test skips)."""
    if request.param == "sqlite":
        return None
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


@pytest.fixture
async def archive_store(backend: str | None, tmp_path: Path) -> AsyncIterator[ArchiveStore]:
    """An empty archive on each backend."""
    if backend is None:
        async with await Archive.open(tmp_path / "state.db") as archive:
            yield archive
        return
    from memory.archive.postgres import PgArchive

    async with await PgArchive.open(backend) as pg:
        yield pg


def searcher_of(archive: ArchiveStore, **options: Any) -> Searcher:
    """The archive's searcher: SQLite's indexes or PostgreSQL's under the same ``Searcher``."""
    return Searcher(archive, **options)


def _both_satisfy_the_seam(
    archive: Archive, pg: PgArchive, search: Searcher, indexes: Indexes, pg_indexes: PgIndexes
) -> tuple[ArchiveStore, ArchiveStore, SessionSearch, SearchIndexes, SearchIndexes]:
    """Never called: mypy proves here that both backends (and the one ``Searcher``) are what
    ``memory.archive.store`` says the callers may rely on."""
    return archive, pg, search, indexes, pg_indexes
