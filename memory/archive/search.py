"""Searching the archive: ranked hits, and the reads behind the ``session_search`` tool.

``Searcher.find`` runs the steps ``memory.archive.query.route`` chooses for the parsed query
and groups the hits by session lineage (a session and the ones compressed from it), best
lineage first, keeping the best few hits of each; the steps merge (all words, then any word,
then substrings), each adding what the ones before did not find. Word-index results are
ranked by relevance (bm25 on SQLite), trigram results by recency (``sort`` orders either by
time); all are scoped in SQL by the backend's ``memory.archive.store.SearchIndexes``
(``memory.archive.indexes`` for SQLite, ``memory.archive.postgres`` for PostgreSQL): a person
only ever reaches sessions they took part in. The searcher itself is backend-neutral: it
reads the archive through ``memory.archive.store.ArchiveStore``.
A ``Searcher`` given a ``semantic`` ranker (``memory.archive.fusion``) fuses its ranking by
meaning into a person's ``discover`` by relevance; its ids are scoped in SQL the same way.

The tool's four modes are typed reads here, answered with the frozen dataclasses of
``memory.archive.results``:

* ``discover`` (a query) → ``Discovery``: sessions that matched, best first, each a
  ``SessionResult`` holding its best matching messages (up to ``hits_per_session``, best
  first), each a ``Match`` with the message before and after it in its session;
* ``read`` (a session) → ``Reading``: all of it, or its first and last messages;
* ``scroll`` (a session and a message in it) → ``Scroll``: the messages around it;
* ``browse`` (nothing) → ``Listed`` sessions, most recent first.

A session the viewer cannot see answers ``SessionNotFound``, exactly as one that does not
exist. The JSON the model reads is built from these at the tool edge
(``agent_core.tools.search``); the chat commands and the CLI read the fields.

Errors: ``SessionNotFound`` and ``MessageNotInSession`` (``ArchiveError``, ``LookupError``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memory.archive.database import Message, Session
from memory.archive.fusion import FUSION, Fusion, SemanticRanker, fuse, grouped
from memory.archive.indexes import LIKE_SCAN_ROWS
from memory.archive.query import Grams, ParsedQuery, Ranked, parse_query, route
from memory.archive.results import (
    Discovery,
    Hit,
    Listed,
    Match,
    MessageNotInSession,
    Reading,
    Scroll,
    SessionNotFound,
    SessionResult,
)
from memory.archive.store import ArchiveStore, Scope, Sort

__all__ = [
    "HITS_PER_SESSION",
    "LIKE_SCAN_ROWS",
    "READ_ALL_UP_TO",
    "READ_HEAD",
    "READ_TAIL",
    "Searcher",
    "Sort",
]

log = logging.getLogger(__name__)

READ_ALL_UP_TO = 30
READ_HEAD, READ_TAIL = 20, 10
HITS_PER_SESSION = 3  # matching messages shown per session result
NO_WORDS = "The query has no searchable words; nothing was searched."
NO_MATCH = "No past messages match. Try other words, or omit query to browse."


class Searcher:
    """Ranked, scoped search over an archive, and the reads of ``session_search``."""

    def __init__(
        self,
        archive: ArchiveStore,
        *,
        like_scan_rows: int = LIKE_SCAN_ROWS,
        cjk_index: bool = True,
        semantic: SemanticRanker | None = None,
        fusion: Fusion = FUSION,
    ) -> None:
        """``like_scan_rows``: the bound of the scans (``_substring``); ``cjk_index=False``
        leaves the gram index unused, so short CJK terms are scanned as before it existed
        (the archive benchmark times both); ``semantic``: a ranking by meaning that
        ``discover`` fuses with the words' (``memory.archive.fusion``), as ``fusion`` says.
        The index reads are the archive backend's own (``ArchiveStore.search_indexes``)."""
        self.archive = archive
        self.indexes = archive.search_indexes(like_scan_rows=like_scan_rows, cjk_index=cjk_index)
        self.semantic = semantic
        self.fusion = fusion

    async def find(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int = 3,
        sort: Sort = "relevance",
        exclude_session: str | None = None,
        conversation_only: bool = False,
    ) -> tuple[list[Hit], ParsedQuery]:
        """The best hit of each of the best ``limit`` session lineages; ``conversation_only``:
        what people and the bot said, no tool output (what a person's /search shows)."""
        groups, query = await self.find_grouped(
            text,
            viewer=viewer,
            limit=limit,
            per_session=1,
            sort=sort,
            exclude_session=exclude_session,
            conversation_only=conversation_only,
        )
        return [group[0] for group in groups], query

    async def find_grouped(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int = 3,
        per_session: int = HITS_PER_SESSION,
        sort: Sort = "relevance",
        exclude_session: str | None = None,
        conversation_only: bool = False,
    ) -> tuple[list[list[Hit]], ParsedQuery]:
        """Hits grouped by session lineage: at most ``limit`` lineages, best first, each with
        at most ``per_session`` hits, best first. The route's steps merge: a later step (any
        word, then substrings) runs while fewer than ``limit`` lineages were found, and adds
        hits after the earlier steps' ones (all words rank above any word)."""
        query = parse_query(text)
        if query.empty:
            return [], query
        scope = Scope(viewer, exclude_session, conversation_only)
        hits, _ = await self._words(query, scope, limit=limit, per_session=per_session, sort=sort)
        return grouped(hits, limit, per_session), query

    async def word_ranking(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int,
        per_session: int = HITS_PER_SESSION,
        exclude_session: str | None = None,
        conversation_only: bool = False,
    ) -> tuple[list[Hit], set[int]]:
        """The words' message ranking by relevance that ``discover`` fuses with a ranking by
        meaning (``memory.archive.fusion.fuse``): hits best first, each message once, until
        ``limit`` session lineages were found; and the ids only a loose step (any of the
        terms) found. For a memory provider that fuses its own vectors the same way."""
        query = parse_query(text)
        if query.empty:
            return [], set()
        scope = Scope(viewer, exclude_session, conversation_only)
        return await self._words(
            query, scope, limit=limit, per_session=per_session, sort="relevance"
        )

    async def _words(
        self,
        query: ParsedQuery,
        scope: Scope,
        *,
        limit: int,
        per_session: int,
        sort: Sort,
    ) -> tuple[list[Hit], set[int]]:
        """The route's hits, best first, each message once: its steps run in order until
        ``limit`` session lineages were found (a Latin substring search only when the words
        found nothing); and the ids a loose step found (any of the terms)."""
        wanted = min(max(limit * per_session * 8, 24), 400)
        hits: list[Hit] = []
        loose: set[int] = set()
        seen_messages: set[int] = set()
        roots: set[str] = set()
        for step in route(query):
            if isinstance(step, Ranked):
                found = await self.indexes.ranked(query, step, scope, wanted=wanted, sort=sort)
            elif isinstance(step, Grams):
                found = await self.indexes.grams(step, scope, wanted=wanted, sort=sort)
            elif step.fallback and roots:
                break  # the Latin substring search only runs when words found nothing
            else:
                found = await self.indexes.substring(step, scope, wanted=wanted, sort=sort)
            for hit in found:
                if hit.message_id not in seen_messages:
                    seen_messages.add(hit.message_id)
                    hits.append(hit)
                    roots.add(hit.root_id)
                    if isinstance(step, Grams) or (isinstance(step, Ranked) and step.loose):
                        loose.add(hit.message_id)
            if len(roots) >= limit:
                break
        return hits, loose

    async def _fused(
        self,
        text: str,
        semantic: SemanticRanker,
        *,
        viewer: str,
        names: Sequence[str],
        limit: int,
        per_session: int,
        exclude_session: str | None,
        conversation_only: bool,
    ) -> tuple[list[list[Hit]], ParsedQuery]:
        """``find_grouped`` by relevance with the ranking by meaning fused in (``fusion``):
        the ranker runs while the words are searched; what it answers is scoped here in
        SQL like the words; when it fails the words answer alone."""
        query = parse_query(text)
        if query.empty:
            return [], query
        fusion = self.fusion
        asked = asyncio.ensure_future(semantic(viewer, text, fusion.candidates, names=names))
        scope = Scope(viewer, exclude_session, conversation_only)
        try:
            words, loose = await self._words(
                query, scope, limit=limit, per_session=per_session, sort="relevance"
            )
        except BaseException:
            asked.cancel()
            raise
        try:
            meaning = list(await asked)
        except Exception as exc:  # the words still answer
            log.warning("discover: the ranking by meaning failed: %s", type(exc).__name__)
            meaning = []
        visible = await self.indexes.by_id(
            meaning, scope, query.period if fusion.in_period else None
        )
        meaning = [message_id for message_id in meaning if message_id in visible]
        by_id = {**visible, **{hit.message_id: hit for hit in words}}  # the words' snippets
        ranked = fuse([hit.message_id for hit in words], meaning, fusion, loose=loose)
        further = fusion.further_within if meaning else 0  # words alone: as find_grouped
        groups = grouped([by_id[m] for m in ranked], limit, per_session, further_within=further)
        return groups, query

    # -- the session_search reads -------------------------------------------------------

    async def discover(
        self,
        text: str,
        *,
        viewer: str | None,
        limit: int = 3,
        hits_per_session: int = HITS_PER_SESSION,
        sort: Sort = "relevance",
        exclude_session: str | None = None,
        conversation_only: bool = False,
        neighbours: bool = True,
        names: Sequence[str] = (),
    ) -> Discovery:
        """``find_grouped``, each hit with its message and (``neighbours``) the messages
        just before and after it in its session. With a ``semantic`` ranker, a person's
        search by relevance fuses the ranking by meaning in (``_fused``; ``names``: what
        the viewer is called, for the ranker)."""
        if self.semantic is not None and viewer is not None and sort == "relevance":
            groups, parsed = await self._fused(
                text,
                self.semantic,
                viewer=viewer,
                names=names,
                limit=limit,
                per_session=hits_per_session,
                exclude_session=exclude_session,
                conversation_only=conversation_only,
            )
        else:
            groups, parsed = await self.find_grouped(
                text,
                viewer=viewer,
                limit=limit,
                per_session=hits_per_session,
                sort=sort,
                exclude_session=exclude_session,
                conversation_only=conversation_only,
            )
        if parsed.empty:
            return Discovery(text, parsed, (), NO_WORDS)
        if not groups:
            return Discovery(text, parsed, (), NO_MATCH)
        results = []
        for group in groups:
            found = await self._result(group, viewer, neighbours=neighbours)
            if found is not None:
                results.append(found)
        return Discovery(text, parsed, tuple(results), parsed.note)

    async def _result(
        self, group: Sequence[Hit], viewer: str | None, *, neighbours: bool
    ) -> SessionResult | None:
        archive = self.archive
        session_id = group[0].session_id
        session = await archive.get_session(session_id, viewer=viewer)
        if session is None:  # pragma: no cover - the SQL already scoped it
            return None
        matches = []
        for hit in group:  # archive.messages is scoped too: an unseen session gives none
            window = await archive.messages(
                hit.session_id,
                viewer=viewer,
                before_id=hit.message_id + 1,
                limit=2 if neighbours else 1,
                newest_first=True,
            )
            if not window or window[0].id != hit.message_id:  # pragma: no cover - scoped
                continue
            after: list[Message] = []
            if neighbours:
                after = await archive.messages(
                    hit.session_id, viewer=viewer, after_id=hit.message_id, limit=1
                )
            matches.append(
                Match(
                    window[0],
                    hit.snippet,
                    window[1] if len(window) > 1 else None,
                    after[0] if after else None,
                )
            )
        return SessionResult(session, tuple(matches)) if matches else None

    async def read(self, session_id: str, *, viewer: str | None) -> Reading:
        """The whole session up to ``READ_ALL_UP_TO`` messages; else its head and tail."""
        session = await self._visible(session_id, viewer)
        head = await self.archive.messages(session_id, viewer=viewer, limit=READ_ALL_UP_TO + 1)
        if len(head) <= READ_ALL_UP_TO:
            return Reading(session, tuple(head))
        tail = await self.archive.messages(
            session_id, viewer=viewer, limit=READ_TAIL, newest_first=True
        )
        tail.reverse()
        first = head[:READ_HEAD]
        return Reading(session, (*first, *tail), (first[-1].id, tail[0].id))

    async def scroll(
        self, session_id: str, anchor: int, window: int, *, viewer: str | None
    ) -> Scroll:
        """Up to ``window`` messages on each side of message ``anchor`` of the session."""
        session = await self._visible(session_id, viewer)
        before = await self.archive.messages(
            session_id, viewer=viewer, before_id=anchor + 1, limit=window + 2, newest_first=True
        )
        after = await self.archive.messages(
            session_id, viewer=viewer, after_id=anchor, limit=window + 1
        )
        if not before or before[0].id != anchor:
            raise MessageNotInSession(anchor, session_id)
        older = list(reversed(before[1 : window + 1]))
        return Scroll(
            session,
            anchor,
            (*older, before[0], *after[:window]),
            more_before=len(before) > window + 1,
            more_after=len(after) > window,
        )

    async def browse(
        self, limit: int, *, viewer: str | None, exclude_session: str | None = None
    ) -> list[Listed]:
        """The ``limit`` most recently active sessions with their first messages."""
        sessions = await self.archive.sessions(viewer=viewer, limit=limit, exclude=exclude_session)
        listed = []
        for session in sessions:
            first = await self.archive.messages(session.id, viewer=viewer, limit=1)
            listed.append(Listed(session, first[0] if first else None))
        return listed

    async def _visible(self, session_id: str, viewer: str | None) -> Session:
        session = await self.archive.get_session(session_id, viewer=viewer)
        if session is None:
            raise SessionNotFound(session_id)
        return session
