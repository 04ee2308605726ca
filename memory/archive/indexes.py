"""The archive's indexes as the searcher reads them: the word index (bm25), the trigram
and CJK gram indexes and bounded scans (substrings), and messages by id (a ranking by
meaning, checked): SQLite's ``memory.archive.store.SearchIndexes``. Every read is scoped
in SQL (``scope_sql``: the sessions the viewer took part in,
``memory.archive.records.visible_clause``) and answers ``Hit`` rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import aiosqlite

from memory.archive.cjk import indexed
from memory.archive.query import Grams, ParsedQuery, Ranked, Substring
from memory.archive.records import scope_token, visible_clause
from memory.archive.results import Hit
from memory.archive.store import Scope, Sort

__all__ = ["LIKE_SCAN_ROWS", "Indexes", "Scope", "ScopeSQL", "Sort", "scope_sql"]

LIKE_SCAN_ROWS = 20_000
#: A ``WHERE`` clause over ``messages m`` and its parameters.
ScopeSQL = tuple[str, dict[str, Any]]


class Reads(Protocol):
    """What the index reads need of an archive: a reader connection (``Archive.reader``)."""

    def reader(self) -> AbstractAsyncContextManager[aiosqlite.Connection]: ...


class Indexes:
    """Scoped reads of ``archive``'s indexes; ``like_scan_rows``: the bound of the scans
    (``substring``); ``cjk_index=False`` leaves the gram index unused."""

    def __init__(self, archive: Reads, *, like_scan_rows: int, cjk_index: bool) -> None:
        self.archive = archive
        self.like_scan_rows = like_scan_rows
        self.cjk_index = cjk_index

    async def ranked(
        self, query: ParsedQuery, step: Ranked, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """The word index with ``step.expr``, bm25-ranked (or by time; equal scores: the
        newer first), scope matched inside the index; ``step.period``: only messages
        written then."""
        viewer, period = scope.viewer, step.period
        match = f"search_text : ({step.expr})"
        if viewer is not None:
            match = f'scope : "{scope_token(viewer)}" AND {match}'
        where, params = scope_sql(scope)
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
        return await self.hits(sql, params)

    async def substring(
        self, step: Substring, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """Substrings, exact (LIKE): ``step.terms`` (3+ characters) and ``step.short``.
        Which rows are examined:

        * only terms shorter than 3 characters, one of them a CJK character or a pair
          ``messages_cjk`` holds (``memory.archive.cjk.indexed``): the messages of the
          viewer that hold all those grams, the newest ``like_scan_rows`` of them;
        * a person whose history fits in ``like_scan_rows`` messages: all of it;
        * otherwise, and for an operator, the trigram index for terms of 3+ characters;
        * only short terms the gram index cannot serve and a larger history: the most recent
          ``like_scan_rows`` messages (the trigram index cannot serve them).
        """
        terms: Sequence[str] = step.terms
        short: Sequence[str] = step.short
        viewer = scope.viewer
        where, params = scope_sql(scope)
        scan = self.like_scan_rows
        params.update(wanted=wanted, scan=scan, needle=(terms or short)[0].lower())
        grams = [t for t in short if indexed(t)] if self.cjk_index and not terms else []
        if not grams and viewer is not None and await self.history_size(viewer) <= scan:
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
            # CROSS JOIN: the trigram index leads. Without statistics (a new archive, not yet
            # reopened) the planner would walk the session's messages and probe it per row.
            source = "messages_trigram t CROSS JOIN messages m ON m.id = t.rowid"
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
        return await self.hits(sql, params)

    async def grams(self, step: Grams, scope: Scope, *, wanted: int, sort: Sort) -> list[Hit]:
        """Any of ``step.grams`` through the gram index (the viewer's scope token inside it),
        the newest ``like_scan_rows`` such messages, ranked by the grams each holds."""
        if not self.cjk_index or not step.grams:
            return []
        where, params = scope_sql(scope)
        match = "(" + " OR ".join(f'"{gram}"' for gram in step.grams) + ")"
        if scope.viewer is not None:
            match = f'"{scope_token(scope.viewer)}" AND {match}'
        score = []
        for n, gram in enumerate(step.grams):
            params[f"g{n}"] = gram
            score.append(f"(instr(m.search_text, :g{n}) > 0) * {len(gram)}")
        params.update(match=match, scan=self.like_scan_rows, wanted=wanted)
        snippet = "substr(m.search_text, max(1, instr(m.search_text, :g0) - 60), 160)"
        order = {
            "relevance": "score, m.created_at DESC",
            "newest": "m.created_at DESC",
            "oldest": "m.created_at ASC",
        }
        sql = (
            f"SELECT m.id, m.session_id, s.root_id, -({' + '.join(score)}) AS score, {snippet}"
            " FROM messages m JOIN sessions s ON s.id = m.session_id"
            " WHERE m.id IN (SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH :match"
            f" ORDER BY rowid DESC LIMIT :scan) AND {where}"
            f" ORDER BY {order[sort]} LIMIT :wanted"
        )
        return await self.hits(sql, params)

    async def by_id(
        self,
        ids: Sequence[int],
        scope: Scope,
        period: tuple[float, float] | None,
    ) -> dict[int, Hit]:
        """The messages among ``ids`` that ``scope`` allows (and were written in
        ``period``), as hits without a snippet: a ranker's answer, checked."""
        if not ids:
            return {}
        where, params = scope_sql(scope)
        params["ids"] = json.dumps([int(i) for i in ids])
        if period is not None:
            where += " AND m.created_at >= :since AND m.created_at < :until"
            params.update(since=period[0], until=period[1])
        sql = (
            "SELECT m.id, m.session_id, s.root_id, 0.0, '' FROM messages m"
            " JOIN sessions s ON s.id = m.session_id"
            f" WHERE m.id IN (SELECT value FROM json_each(:ids)) AND {where}"
        )
        return {hit.message_id: hit for hit in await self.hits(sql, params)}

    async def history_size(self, viewer: str) -> int:
        async with self.archive.reader() as db:
            rows = await db.execute_fetchall(
                "SELECT coalesce(sum(message_count), 0) FROM sessions"
                " WHERE id IN (SELECT session_id FROM session_people WHERE person = ?)",
                (viewer,),
            )
        return int(next(iter(rows))[0])

    async def hits(self, sql: str, params: dict[str, Any]) -> list[Hit]:
        async with self.archive.reader() as db:
            rows = await db.execute_fetchall(sql, params)
        return [Hit(r[0], r[1], r[2], float(r[3]), r[4] or "") for r in rows]


def scope_sql(scope: Scope) -> ScopeSQL:
    """The scope of a search as SQL over ``messages m``: what ``viewer`` may see (all, for
    None), less ``exclude``'s messages, only people's and the bot's (``conversation_only``)."""
    where = ["1"]
    if scope.viewer is not None:
        where.append(visible_clause("m.session_id"))
    if scope.exclude is not None:
        where.append("m.session_id != :exclude")
    if scope.conversation_only:
        where.append("m.role IN ('user', 'assistant')")
    return " AND ".join(where), {"viewer": scope.viewer, "exclude": scope.exclude}
