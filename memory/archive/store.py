"""The archive's seam: what the gateway and the agent use of an archive, as ``Protocol``s, so
that SQLite (``memory.archive.database.Archive``) and PostgreSQL
(``memory.archive.postgres.PgArchive``) serve the same callers.

* ``ArchiveStore`` — sessions and their messages: writing an exchange, the scoped reads, the
  counts and budgets, JSONL import and export, the integrity check.
* ``SearchIndexes`` — the person-scoped index reads a ``memory.archive.search.Searcher``
  makes: ranked words, substrings, ids a ranking by meaning answered. The searcher holds the
  cascade (all words, then any word, then substrings), the grouping by session lineage and
  the ``session_search`` reads, once, for both backends.
* ``SessionSearch`` — the searcher's own surface (``discover``, ``read``, ``scroll``,
  ``browse``, ``find``), answered with the dataclasses of ``memory.archive.results``.

``Archive.transact`` (a ``sqlite3`` callable) and ``Archive.reader`` stay SQLite's own (the
delivery ledger and the local provider use them): they are not part of the seam.

``Scope`` is what a search may see, said once: the viewer (None: an operator, everything),
a session to leave out, and whether tool output counts; each backend renders it as SQL.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memory.archive.query import Grams, ParsedQuery, Ranked, Substring
from memory.archive.records import ImportReport, Message, NewMessage, Session, SessionSpec
from memory.archive.results import Discovery, Hit, Listed, Reading, Scroll

__all__ = ["ArchiveStore", "Scope", "SearchIndexes", "SessionSearch", "Sort"]

Sort = Literal["relevance", "newest", "oldest"]


@dataclass(frozen=True, slots=True)
class Scope:
    """What a search may reach: the sessions ``viewer`` took part in (None: all), less
    ``exclude``'s messages, only people's and the bot's (``conversation_only``)."""

    viewer: str | None
    exclude: str | None = None
    conversation_only: bool = False


class ArchiveStore(Protocol):
    """Every message of every session, person-scoped reads in the backend's own SQL."""

    async def close(self) -> None: ...

    def search_indexes(self, *, like_scan_rows: int, cjk_index: bool) -> SearchIndexes:
        """This backend's scoped index reads, for a ``Searcher`` over it."""
        ...

    async def start_session(self, spec: SessionSpec) -> None: ...

    async def append_exchange(
        self, session_id: str, messages: Sequence[NewMessage], *, people: Sequence[str] = ()
    ) -> list[int]: ...

    async def end_session(self, session_id: str, reason: str) -> None: ...

    async def get_session(self, session_id: str, *, viewer: str | None) -> Session | None: ...

    async def messages(
        self,
        session_id: str,
        *,
        viewer: str | None,
        after_id: int | None = None,
        before_id: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[Message]: ...

    async def latest_session(self, session_key: str) -> Session | None: ...

    async def system_prompt(self, session_id: str) -> str | None: ...

    async def sessions(
        self, *, viewer: str | None, limit: int = 20, exclude: str | None = None
    ) -> list[Session]: ...

    async def people(self) -> list[str]: ...

    async def counts(self) -> dict[str, int]: ...

    async def ping(self) -> None:
        """Raise unless the store answers a trivial read (``/healthz``)."""
        ...

    async def size_bytes(self) -> int:
        """What the archive takes in its store (file and WAL; tables and indexes)."""
        ...

    async def usage_since(self, since: float, *, viewer: str | None = None) -> dict[str, int]: ...

    async def turn_times(self, person: str, since: float) -> list[float]: ...

    async def tokens_caused(self, person: str, since: float) -> int: ...

    async def import_records(
        self,
        lines: Iterable[str],
        *,
        batch: int = 5000,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport: ...

    def export_records(self, *, viewer: str | None) -> AsyncGenerator[dict[str, Any]]: ...

    async def check(self) -> list[str]: ...

    async def repair(self) -> None: ...


class SearchIndexes(Protocol):
    """The scoped index reads behind a ``Searcher``; every one answers only what ``scope``
    allows, decided in SQL."""

    async def ranked(
        self, query: ParsedQuery, step: Ranked, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """The word index: ``step``'s terms (all or any, ``Ranked.every``), best first (or by
        time), at most ``wanted``; equal scores: the newer first."""
        ...

    async def substring(
        self, step: Substring, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """Exact substrings (every one of ``step``'s terms), the newest first (``oldest``:
        the oldest)."""
        ...

    async def grams(self, step: Grams, scope: Scope, *, wanted: int, sort: Sort) -> list[Hit]:
        """Messages holding any of ``step``'s CJK grams, the most of them first (a pair
        counts twice; equal: the newer first; or by time), among the newest ``like_scan_rows`` that
        hold one; none where the gram index is not used (``cjk_index=False``)."""
        ...

    async def by_id(
        self, ids: Sequence[int], scope: Scope, period: tuple[float, float] | None
    ) -> dict[int, Hit]:
        """The messages among ``ids`` that ``scope`` allows (written in ``period``), as hits
        without a snippet."""
        ...


class SessionSearch(Protocol):
    """The reads of ``session_search`` and of the search commands."""

    async def find(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int = 3,
        sort: Sort = "relevance",
        exclude_session: str | None = None,
        conversation_only: bool = False,
    ) -> tuple[list[Hit], ParsedQuery]: ...

    async def discover(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int = 3,
        hits_per_session: int = 3,
        sort: Sort = "relevance",
        exclude_session: str | None = None,
        conversation_only: bool = False,
        neighbours: bool = True,
    ) -> Discovery: ...

    async def read(self, session_id: str, *, viewer: str | None) -> Reading: ...

    async def scroll(
        self, session_id: str, anchor: int, window: int, *, viewer: str | None
    ) -> Scroll: ...

    async def browse(
        self, limit: int, *, viewer: str | None, exclude_session: str | None = None
    ) -> list[Listed]: ...
