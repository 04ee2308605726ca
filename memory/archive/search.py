"""Searching the archive: ranked hits, and the reads behind the ``session_search`` tool.

``Searcher.find`` runs the steps ``memory.archive.query.route`` chooses for the parsed query
and groups the hits by session lineage (a session and the ones compressed from it), best
lineage first, keeping the best few hits of each; the steps merge (all words, then any word,
then substrings), each adding what the ones before did not find. Word-index results are
ranked by bm25, trigram results by recency (``sort`` orders either by time); all are scoped
in SQL
(``memory.archive.database``): a person only ever reaches sessions they took part in.

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

from collections.abc import Sequence
from typing import Any, Literal

from memory.archive.cjk import indexed
from memory.archive.database import Archive, Message, Session, scope_token, visible_clause
from memory.archive.query import ParsedQuery, Ranked, parse_query, route
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

__all__ = [
    "HITS_PER_SESSION",
    "LIKE_SCAN_ROWS",
    "READ_ALL_UP_TO",
    "READ_HEAD",
    "READ_TAIL",
    "Searcher",
    "Sort",
]

LIKE_SCAN_ROWS = 20_000
READ_ALL_UP_TO = 30
READ_HEAD, READ_TAIL = 20, 10
HITS_PER_SESSION = 3  # matching messages shown per session result
NO_WORDS = "The query has no searchable words; nothing was searched."
NO_MATCH = "No past messages match. Try other words, or omit query to browse."
Sort = Literal["relevance", "newest", "oldest"]


class Searcher:
    """Ranked, scoped search over an ``Archive``, and the reads of ``session_search``."""

    def __init__(
        self, archive: Archive, *, like_scan_rows: int = LIKE_SCAN_ROWS, cjk_index: bool = True
    ) -> None:
        """``like_scan_rows``: the bound of the scans (``_substring``); ``cjk_index=False``
        leaves the gram index unused, so short CJK terms are scanned as before it existed
        (the archive benchmark times both)."""
        self.archive = archive
        self.like_scan_rows = like_scan_rows
        self.cjk_index = cjk_index

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
        wanted = min(max(limit * per_session * 8, 24), 400)
        scope = _scope_sql(viewer, exclude_session, conversation_only)
        groups: dict[str, list[Hit]] = {}
        seen_messages: set[int] = set()
        for step in route(query):
            if isinstance(step, Ranked):
                found = await self._ranked(
                    step.expr, scope, viewer=viewer, wanted=wanted, sort=sort, period=step.period
                )
            elif step.fallback and groups:
                break  # the Latin substring search only runs when words found nothing
            else:
                found = await self._substring(
                    step.terms, step.short, scope, viewer=viewer, wanted=wanted, sort=sort
                )
            for hit in found:
                if hit.message_id in seen_messages:
                    continue
                seen_messages.add(hit.message_id)
                group = groups.get(hit.root_id)
                if group is None:
                    if len(groups) < limit:
                        groups[hit.root_id] = [hit]
                elif len(group) < per_session:
                    group.append(hit)
            if len(groups) >= limit:
                break
        return list(groups.values()), query

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
    ) -> Discovery:
        """``find_grouped``, each hit with its message and (``neighbours``) the messages
        just before and after it in its session."""
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

    # -- the indexes ----------------------------------------------------------------------

    async def _ranked(
        self,
        expr: str,
        scope: tuple[str, dict[str, Any]],
        *,
        viewer: str | None,
        wanted: int,
        sort: Sort,
        period: tuple[float, float] | None = None,
    ) -> list[Hit]:
        """The word index, bm25-ranked (or by time; equal scores: the newer first), scope
        matched inside the index; ``period``: only messages written then."""
        match = f"search_text : ({expr})"
        if viewer is not None:
            match = f'scope : "{scope_token(viewer)}" AND {match}'
        where, params = scope[0], dict(scope[1])
        params.update(match=match, wanted=wanted)
        if period is not None:
            where += " AND m.created_at >= :since AND m.created_at < :until"
            params.update(since=period[0], until=period[1])
        order = {
            "relevance": "score, m.created_at DESC",
            "newest": "m.created_at DESC",
            "oldest": "m.created_at ASC",
        }
        sql = (
            "SELECT m.id, m.session_id, s.root_id, bm25(messages_fts, 1.0, 0.0) AS score,"
            " snippet(messages_fts, 0, '[', ']', '…', 16)"
            " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
            " JOIN sessions s ON s.id = m.session_id"
            f" WHERE messages_fts MATCH :match AND {where} ORDER BY {order[sort]} LIMIT :wanted"
        )
        return await self._hits(sql, params)

    async def _substring(
        self,
        terms: Sequence[str],
        short: Sequence[str],
        scope: tuple[str, dict[str, Any]],
        *,
        viewer: str | None,
        wanted: int,
        sort: Sort,
    ) -> list[Hit]:
        """Substrings, exact (LIKE). Which rows are examined:

        * only terms shorter than 3 characters, one of them a CJK character or a pair
          ``messages_cjk`` holds (``memory.archive.cjk.indexed``): the messages of the
          viewer that hold all those grams, the newest ``like_scan_rows`` of them;
        * a person whose history fits in ``like_scan_rows`` messages: all of it;
        * otherwise, and for an operator, the trigram index for terms of 3+ characters;
        * only short terms the gram index cannot serve and a larger history: the most recent
          ``like_scan_rows`` messages (the trigram index cannot serve them).
        """
        where, params = scope[0], dict(scope[1])
        scan = self.like_scan_rows
        params.update(wanted=wanted, scan=scan, needle=(terms or short)[0].lower())
        grams = [t for t in short if indexed(t)] if self.cjk_index and not terms else []
        if not grams and viewer is not None and await self._history_size(viewer) <= scan:
            terms, short = [], [*terms, *short]
        likes = []
        for n, term in enumerate([*terms, *short]):
            params[f"t{n}"] = f"%{term}%"
            likes.append(f"{'t' if n < len(terms) else 'm'}.search_text LIKE :t{n}")
        if grams:
            tokens = ([scope_token(viewer)] if viewer is not None else []) + grams
            params["grams"] = " AND ".join(f'"{token}"' for token in tokens)
            source = "messages m"
            where = (
                "m.id IN (SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH :grams"
                f" ORDER BY rowid DESC LIMIT :scan) AND {where}"
            )
        elif terms:
            source = "messages_trigram t JOIN messages m ON m.id = t.rowid"
        else:
            source = "messages m"
            where = (
                f"m.id IN (SELECT m.id FROM messages m WHERE {where}"
                " ORDER BY m.id DESC LIMIT :scan)"
            )
        snippet = "substr(m.search_text, max(1, instr(lower(m.search_text), :needle) - 60), 160)"
        sql = (
            f"SELECT m.id, m.session_id, s.root_id, 0.0, {snippet}"
            f" FROM {source} JOIN sessions s ON s.id = m.session_id"
            f" WHERE {' AND '.join(likes)} AND {where}"
            f" ORDER BY m.created_at {'ASC' if sort == 'oldest' else 'DESC'} LIMIT :wanted"
        )
        return await self._hits(sql, params)

    async def _history_size(self, viewer: str) -> int:
        async with self.archive.reader() as db:
            rows = await db.execute_fetchall(
                "SELECT coalesce(sum(message_count), 0) FROM sessions"
                " WHERE id IN (SELECT session_id FROM session_people WHERE person = ?)",
                (viewer,),
            )
        return int(next(iter(rows))[0])

    async def _hits(self, sql: str, params: dict[str, Any]) -> list[Hit]:
        async with self.archive.reader() as db:
            rows = await db.execute_fetchall(sql, params)
        return [Hit(r[0], r[1], r[2], float(r[3]), r[4] or "") for r in rows]


def _scope_sql(
    viewer: str | None, exclude: str | None, conversation_only: bool = False
) -> tuple[str, dict[str, Any]]:
    where = ["1"]
    if viewer is not None:
        where.append(visible_clause("m.session_id"))
    if exclude is not None:
        where.append("m.session_id != :exclude")
    if conversation_only:
        where.append("m.role IN ('user', 'assistant')")
    return " AND ".join(where), {"viewer": viewer, "exclude": exclude}
