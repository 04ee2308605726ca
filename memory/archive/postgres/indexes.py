"""The PostgreSQL archive's indexes as the searcher reads them (``SearchIndexes``): words
(``tsvector`` / GIN, ranked by ``ts_rank``), substrings (``pg_trgm`` GIN, ``ILIKE``), short
CJK terms (the ``grams`` array, GIN) and bounded scans, and messages by id. Every read is
scoped in its own SQL (``scope_where``: the sessions the viewer took part in).

Nothing typed reaches SQL or ``tsquery`` syntax. The query is parsed as on SQLite
(``memory.archive.query.parse_query``); each phrase or term becomes a bound parameter of
``phraseto_tsquery`` (its words, non-alphanumeric characters made spaces, as the indexed
text), and a prefix a quoted lexeme of letters and digits only before ``:*``; the pieces
are joined with ``&&`` (all) or ``||`` (any) in SQL this module writes. LIKE patterns have
``\\``, ``%`` and ``_`` escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from memory.archive.cjk import indexed
from memory.archive.postgres.schema import VISIBLE
from memory.archive.query import Grams, ParsedQuery, Ranked, Substring, _root
from memory.archive.results import Hit
from memory.archive.store import Scope, Sort

__all__ = ["Args", "PgIndexes", "like_pattern", "scope_where", "tsquery"]

_WORDS = re.compile(r"[^\W_]+")
HEADLINE = "StartSel=[, StopSel=], MaxWords=16, MinWords=6"


class Args:
    """Bound parameters of one statement: ``args(value)`` adds one and says its ``$n``."""

    def __init__(self) -> None:
        self.values: list[object] = []

    def __call__(self, value: object) -> str:
        self.values.append(value)  # text is cleaned of NUL by ``PgArchive.fetch``
        return f"${len(self.values)}"


def scope_where(scope: Scope, args: Args) -> str:
    """``scope`` as a condition on ``messages m``."""
    where = ["TRUE"]
    if scope.viewer is not None:
        where.append(VISIBLE.format(column="m.session_id", param=args(scope.viewer)))
    if scope.exclude is not None:
        where.append(f"m.session_id <> {args(scope.exclude)}")
    if scope.conversation_only:
        where.append("m.role IN ('user', 'assistant')")
    return " AND ".join(where)


def _phrase(text: str, args: Args) -> str | None:
    words = " ".join(_WORDS.findall(text))
    return f"phraseto_tsquery('english', {args(words)})" if words else None


def _prefix(text: str, args: Args) -> str | None:
    words = _WORDS.findall(text)
    if not words:
        return None
    lexemes = " <-> ".join(f"'{word}'" for word in words) + ":*"  # letters and digits only
    return f"to_tsquery('english', {args(lexemes)})"


def tsquery(query: ParsedQuery, every: bool, args: Args) -> str | None:
    """The ``tsquery`` SQL of ``query``: all its pieces (``every``) or any of them, where a
    name or a number counts twice and a long word adds a prefix of its root
    (``memory.archive.query.fts_any``); None when no piece has a word."""
    pieces = [_phrase(p, args) for p in query.phrases]
    for term in query.terms:
        pieces += [_phrase(term, args)] * (2 if term in query.keys and not every else 1)
        root = None if every else _root(term)
        if root is not None:
            pieces.append(_prefix(root, args))
    pieces += [_prefix(p, args) for p in query.prefixes]
    found = [piece for piece in pieces if piece is not None]
    return "(" + (" && " if every else " || ").join(found) + ")" if found else None


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Fetches(Protocol):
    """What the index reads need of an archive: a read under the deadline
    (``PgArchive.fetch``)."""

    async def fetch(self, sql: str, *args: object) -> list[Any]: ...


class PgIndexes:
    """Scoped reads of ``archive``'s indexes; ``like_scan_rows``: the bound of the scans;
    ``cjk_index=False`` leaves the gram index unused (as ``memory.archive.indexes``)."""

    def __init__(self, archive: Fetches, *, like_scan_rows: int, cjk_index: bool) -> None:
        self.archive = archive
        self.like_scan_rows = like_scan_rows
        self.cjk_index = cjk_index

    async def ranked(
        self, query: ParsedQuery, step: Ranked, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """The word index, ``ts_rank``-ranked (or by time; equal scores: the newer first)."""
        args = Args()
        expr = tsquery(query, step.every, args)
        if expr is None:
            return []
        where = scope_where(scope, args)
        if step.period is not None:
            where += f" AND m.created_at >= {args(step.period[0])}"
            where += f" AND m.created_at < {args(step.period[1])}"
        order = {
            "relevance": "score, created_at DESC, id DESC",
            "newest": "created_at DESC, id DESC",
            "oldest": "created_at ASC, id ASC",
        }[sort]
        sql = (
            f"WITH q AS (SELECT {expr} AS q)"
            " SELECT h.id, h.session_id, s.root_id, h.score,"
            f" ts_headline('english', h.search_text, q.q, '{HEADLINE}')"
            " FROM (SELECT m.id, m.session_id, m.search_text, m.created_at,"
            " -ts_rank(m.words, q.q, 1) AS score FROM messages m, q"
            f" WHERE m.words @@ q.q AND {where} ORDER BY {order} LIMIT {args(wanted)}) h"
            f" JOIN sessions s ON s.id = h.session_id CROSS JOIN q ORDER BY {order}"
        )
        return await self._hits(sql, args)

    async def substring(
        self, step: Substring, scope: Scope, *, wanted: int, sort: Sort
    ) -> list[Hit]:
        """Substrings, exact (ILIKE). Which rows are examined:

        * only terms shorter than 3 characters, one of them a CJK character or a pair the
          ``grams`` hold: the viewer's messages holding all those grams, the newest
          ``like_scan_rows`` of them;
        * terms of 3+ characters: the trigram index (or the viewer's history, as the planner
          judges cheaper: the answer is the same);
        * only short terms the grams cannot serve: the most recent ``like_scan_rows`` visible
          messages.
        """
        terms, short = step.terms, step.short
        args = Args()
        where = scope_where(scope, args)
        grams = [t for t in short if indexed(t)] if self.cjk_index and not terms else []
        likes = [f"m.search_text ILIKE {args(like_pattern(t))}" for t in (*terms, *short)]
        if grams:
            inner = f"m.grams @> {args(grams)}::text[] AND {where}"
        elif not terms:
            inner = where
        else:
            inner = ""
        if inner:
            where = (
                f"m.id IN (SELECT m.id FROM messages m WHERE {inner}"
                f" ORDER BY m.id DESC LIMIT {args(self.like_scan_rows)})"
            )
        needle = args((terms or short)[0].lower())
        snippet = (
            f"substr(m.search_text, greatest(1, strpos(lower(m.search_text), {needle}) - 60), 160)"
        )
        sql = (
            f"SELECT m.id, m.session_id, s.root_id, 0.0, {snippet}"
            " FROM messages m JOIN sessions s ON s.id = m.session_id"
            f" WHERE {' AND '.join(likes)} AND {where}"
            f" ORDER BY m.created_at {'ASC' if sort == 'oldest' else 'DESC'}, m.id"
            f" LIMIT {args(wanted)}"
        )
        return await self._hits(sql, args)

    async def grams(self, step: Grams, scope: Scope, *, wanted: int, sort: Sort) -> list[Hit]:
        """Any of ``step.grams`` (``grams`` GIN overlap), the newest ``like_scan_rows`` such
        messages, ranked by the grams each holds."""
        if not self.cjk_index or not step.grams:
            return []
        args = Args()
        inner = f"m.grams && {args(list(step.grams))}::text[] AND {scope_where(scope, args)}"
        score = " + ".join(
            f"(strpos(m.search_text, {args(gram)}) > 0)::int * {len(gram)}" for gram in step.grams
        )
        first = args(step.grams[0])
        snippet = f"substr(m.search_text, greatest(1, strpos(m.search_text, {first}) - 60), 160)"
        order = {
            "relevance": "score, m.created_at DESC",
            "newest": "m.created_at DESC",
            "oldest": "m.created_at ASC",
        }
        sql = (
            f"SELECT m.id, m.session_id, s.root_id, -({score}) AS score, {snippet}"
            " FROM messages m JOIN sessions s ON s.id = m.session_id"
            f" WHERE m.id IN (SELECT m.id FROM messages m WHERE {inner}"
            f" ORDER BY m.id DESC LIMIT {args(self.like_scan_rows)})"
            f" ORDER BY {order[sort]}, m.id LIMIT {args(wanted)}"
        )
        return await self._hits(sql, args)

    async def by_id(
        self, ids: Sequence[int], scope: Scope, period: tuple[float, float] | None
    ) -> dict[int, Hit]:
        """The messages among ``ids`` that ``scope`` allows (and written in ``period``)."""
        if not ids:
            return {}
        args = Args()
        where = (
            f"m.id = ANY({args([int(i) for i in ids])}::bigint[]) AND {scope_where(scope, args)}"
        )
        if period is not None:
            where += f" AND m.created_at >= {args(period[0])} AND m.created_at < {args(period[1])}"
        sql = (
            "SELECT m.id, m.session_id, s.root_id, 0.0, '' FROM messages m"
            f" JOIN sessions s ON s.id = m.session_id WHERE {where}"
        )
        return {hit.message_id: hit for hit in await self._hits(sql, args)}

    async def _hits(self, sql: str, args: Args) -> list[Hit]:
        rows = await self.archive.fetch(sql, *args.values)
        return [Hit(r[0], r[1], r[2], float(r[3]), r[4] or "") for r in rows]
