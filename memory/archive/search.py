"""Searching the archive: query sanitising, routing, and the ``session_search`` tool.

Nothing a person or the model types reaches ``MATCH`` as syntax. ``parse_query`` keeps
balanced ``"phrases"`` and words, drops FTS5 operators and punctuation, quotes every term
(so ``my-app.config.ts`` is a phrase of its tokens, ``NEAR(`` or ``scope:`` are just text)
and caps the length; the MATCH strings are then built by this module alone.

Routing (``Searcher.find``):

* text with CJK characters → the trigram index (LIKE, exact) for terms of 3+ characters,
  and a LIKE scan bounded to the most recent ``LIKE_SCAN_ROWS`` visible messages for
  shorter ones;
* other text → the word index: all terms (AND), then — when that finds fewer than asked —
  any term with light suffix stripping (OR, prefix), then the trigram index (substrings).

Word-index results are ranked by bm25, trigram results by recency (``sort`` orders either
by time); all are deduplicated by session lineage and scoped in SQL (``memory.archive.database``).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, cast

from memory.archive.database import Archive, Message, Session, scope_token, visible_clause

__all__ = [
    "Hit",
    "ParsedQuery",
    "SearchTool",
    "Searcher",
    "parse_query",
]

MAX_QUERY_CHARS = 400
MAX_TERMS = 12
LIKE_SCAN_ROWS = 20_000
MESSAGE_CHARS = 4000
BOOKEND_CHARS = 1200
READ_ALL_UP_TO = 30
READ_HEAD, READ_TAIL = 20, 10
Sort = Literal["relevance", "newest", "oldest"]

_STOP_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    did didn't don't i'm i've we're you're it's tell remember said say says told ask asked
    please know think mention mentioned talk talked"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u3130-\u318f\uff66-\uff9f]"
)
_TERM_EDGE = re.compile(r"^[^\w]+|[^\w*]+$")
_INNER_OK = re.compile(r"^[\w][\w.\-_/@:+#']*$")
_SUFFIXES = ("ingly", "ings", "ing", "edly", "ed", "es", "s", "ly")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    phrases: tuple[str, ...]
    terms: tuple[str, ...]  # quoted-safe words, stop words removed (unless nothing else)
    prefixes: tuple[str, ...]  # words the person ended with '*'
    cjk: bool
    note: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.phrases or self.terms or self.prefixes)

    def all_terms(self) -> tuple[str, ...]:
        return self.phrases + self.terms + self.prefixes


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def parse_query(text: str) -> ParsedQuery:
    """Turn anything typed into safe pieces; never raises."""
    notes: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        notes.append(f"query cut to {MAX_QUERY_CHARS} characters")
    text = _clean(text)
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an unbalanced quote: the last one is ignored
        last = parts.pop()
        parts[-1] += " " + last
    phrases: list[str] = []
    words: list[str] = []
    for index, part in enumerate(parts):
        if index % 2 == 1:
            phrase = " ".join(part.split())
            if phrase:
                phrases.append(phrase)
        else:
            words.extend(part.split())
    terms: list[str] = []
    prefixes: list[str] = []
    for raw in words:
        if raw in _OPERATORS:
            continue
        if raw.upper().startswith("NEAR("):
            raw = raw[5:]  # noqa: PLW2901 - the operator goes, its argument stays
        word = _TERM_EDGE.sub("", raw.replace("(", " ").replace(")", " ").strip())
        for chunk in word.split():
            prefix = chunk.endswith("*")
            piece = chunk.strip("*^:")
            if piece and not _INNER_OK.match(piece):
                piece = re.sub(r"[^\w.\-_/@:+#']", " ", piece).strip()
            if not piece or not any(c.isalnum() for c in piece):
                continue
            (prefixes if prefix else terms).append(piece)
    meaningful = [t for t in terms if t.lower() not in STOP_WORDS]
    if meaningful or phrases or prefixes:
        terms = meaningful
    if len(phrases) + len(terms) + len(prefixes) > MAX_TERMS:
        notes.append(f"only the first {MAX_TERMS} terms were used")
        keep = MAX_TERMS
        phrases = phrases[:keep]
        terms = terms[: max(0, keep - len(phrases))]
        prefixes = prefixes[: max(0, keep - len(phrases) - len(terms))]
    cjk = bool(_CJK.search(" ".join(phrases + terms + prefixes)))
    return ParsedQuery(
        tuple(dict.fromkeys(phrases)),
        tuple(dict.fromkeys(terms)),
        tuple(dict.fromkeys(prefixes)),
        cjk,
        "; ".join(notes) or None,
    )


def _quote(term: str) -> str:
    return '"' + term.replace('"', " ") + '"'


def _stem(term: str) -> str:
    lower = term.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 4:
            return term[: len(term) - len(suffix)]
    return term


def fts_all(query: ParsedQuery) -> str | None:
    pieces = [_quote(t) for t in query.phrases + query.terms] + [
        _quote(p) + "*" for p in query.prefixes
    ]
    return " AND ".join(pieces) or None


def fts_any(query: ParsedQuery) -> str | None:
    """Any term (recall over precision). A plain word of 4+ letters is reduced to a rough
    stem and prefix-matched ("deploying" finds "deployed"); anything else — code-like terms,
    short words — stays exact, because a prefix of a short token ("my-app.config.t*") makes
    FTS5 merge the doclists of every token it starts."""
    pieces = [_quote(p) for p in query.phrases]
    for term in query.terms:
        stem = _stem(term)
        if stem.isalpha() and len(stem) >= 4:
            pieces.append(_quote(stem) + "*")
        else:
            pieces.append(_quote(term))
    pieces += [_quote(p) + "*" for p in query.prefixes]
    return " OR ".join(dict.fromkeys(pieces)) or None


def trigram_terms(query: ParsedQuery) -> list[str]:
    """Terms the trigram index can serve as LIKE patterns (3+ characters, no wildcards)."""
    terms = [t.replace("%", " ").replace("_", " ").strip() for t in query.all_terms()]
    return [t for t in dict.fromkeys(terms) if len(t) >= 3]


def short_cjk_terms(query: ParsedQuery) -> list[str]:
    return [t for t in query.all_terms() if len(t) < 3 and _CJK.search(t)]


@dataclass(frozen=True, slots=True)
class Hit:
    message_id: int
    session_id: str
    root_id: str
    score: float
    snippet: str


class Searcher:
    """Ranked, scoped search over an ``Archive``."""

    def __init__(self, archive: Archive, *, like_scan_rows: int = LIKE_SCAN_ROWS) -> None:
        self.archive = archive
        self.like_scan_rows = like_scan_rows

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
        """Best hits, one per session lineage, at most ``limit``; ``conversation_only``:
        what people and the bot said, no tool output (what a person's /search shows)."""
        query = parse_query(text)
        if query.empty:
            return [], query
        wanted = max(limit * 8, 24)
        plans: list[Callable[[], Awaitable[list[Hit]]]] = []

        scope = _scope_sql(viewer, exclude_session, conversation_only)

        def ranked(expr: str) -> Callable[[], Awaitable[list[Hit]]]:
            return lambda: self._ranked(expr, scope, viewer=viewer, wanted=wanted, sort=sort)

        def substring(terms: list[str], short: list[str]) -> Callable[[], Awaitable[list[Hit]]]:
            return lambda: self._substring(
                terms, short, scope, viewer=viewer, wanted=wanted, sort=sort
            )

        fallback: Callable[[], Awaitable[list[Hit]]] | None = None
        if query.cjk:
            plans.append(substring(trigram_terms(query), short_cjk_terms(query)))
        else:
            plans += [ranked(expr) for expr in (fts_all(query), fts_any(query)) if expr]
            if trigram_terms(query):
                fallback = substring(trigram_terms(query), [])
                plans.append(fallback)
        hits: list[Hit] = []
        seen_messages: set[int] = set()
        for plan in plans:
            if plan is fallback and hits:
                break  # the Latin substring search only runs when words found nothing
            found = await plan()
            for hit in found:
                if hit.message_id not in seen_messages:
                    seen_messages.add(hit.message_id)
                    hits.append(hit)
            if len(_by_lineage(hits)) >= limit:
                break
        return _by_lineage(hits)[:limit], query

    async def _ranked(
        self,
        expr: str,
        scope: tuple[str, dict[str, Any]],
        *,
        viewer: str | None,
        wanted: int,
        sort: Sort,
    ) -> list[Hit]:
        """The word index, bm25-ranked (or by time), scope matched inside the index."""
        match = f"search_text : ({expr})"
        if viewer is not None:
            match = f'scope : "{scope_token(viewer)}" AND {match}'
        where, params = scope[0], dict(scope[1])
        params.update(match=match, wanted=wanted)
        order = {"relevance": "score", "newest": "m.created_at DESC", "oldest": "m.created_at ASC"}
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

        * a person whose history fits in ``like_scan_rows`` messages: all of it;
        * otherwise, and for an operator, the trigram index for terms of 3+ characters;
        * only terms shorter than 3 characters (CJK) and a larger history: the most recent
          ``like_scan_rows`` messages (the trigram index cannot serve them).
        """
        where, params = scope[0], dict(scope[1])
        scan = self.like_scan_rows
        params.update(wanted=wanted, scan=scan, needle=(terms or short)[0].lower())
        if viewer is not None and await self._history_size(viewer) <= scan:
            terms, short = [], [*terms, *short]
        likes = []
        for n, term in enumerate([*terms, *short]):
            params[f"t{n}"] = f"%{term}%"
            likes.append(f"{'t' if n < len(terms) else 'm'}.search_text LIKE :t{n}")
        if terms:
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


def _by_lineage(hits: Sequence[Hit]) -> list[Hit]:
    best: dict[str, Hit] = {}
    for hit in hits:
        best.setdefault(hit.root_id, hit)
    return list(best.values())


# -- the session_search tool ---------------------------------------------------------------


def when(timestamp: float, now: float | None = None) -> str:
    """``2026-11-28 14:03 UTC (2 days ago)``."""
    now = time.time() if now is None else now
    stamp = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
    delta = max(0.0, now - timestamp)
    for unit, seconds in (("year", 31_536_000), ("month", 2_592_000), ("week", 604_800),
                          ("day", 86_400), ("hour", 3_600), ("minute", 60)):  # fmt: skip
        if delta >= seconds:
            n = int(delta // seconds)
            return f"{stamp} ({n} {unit}{'s' if n > 1 else ''} ago)"
    return f"{stamp} (just now)"


def message_json(message: Message, *, limit: int = MESSAGE_CHARS) -> dict[str, Any]:
    content = message.content
    truncated = len(content) > limit
    data: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "created_at": message.created_at,
        "when": when(message.created_at),
        "content": content[:limit] + ("…" if truncated else ""),
        "truncated": truncated,
    }
    if message.speaker:
        data["speaker"] = message.speaker
    if message.tool_name:
        data["tool_name"] = message.tool_name
    if message.tool_calls:
        data["tool_calls"] = [
            {"name": c.get("function", {}).get("name", c.get("name"))} for c in message.tool_calls
        ]
    if message.external_id:
        data["external_id"] = message.external_id
    return data


def session_json(session: Session) -> dict[str, Any]:
    return {
        "session_id": session.id,
        "title": session.title or "(untitled)",
        "platform": session.platform,
        "chat_type": session.chat_type,
        "started_at": session.started_at,
        "last_active_at": session.last_active_at,
        "when": when(session.last_active_at),
        "message_count": session.message_count,
        **({"parent_session_id": session.parent_id} if session.parent_id else {}),
    }


class _BadArgs(ValueError):
    pass


def _int_arg(
    args: Mapping[str, Any], name: str, default: int | None, low: int, high: int
) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _BadArgs(f"{name} must be an integer")
    return min(max(value, low), high)


class SearchTool:
    """The model-facing ``session_search`` contract, bound to one person's view.

    ``call(args, viewer=…, current_session_id=…)`` returns a JSON-able dict with ``success``
    and ``mode`` (scroll / read / browse / discover) and never raises for bad arguments.
    """

    def __init__(self, archive: Archive, *, like_scan_rows: int = LIKE_SCAN_ROWS) -> None:
        self.archive = archive
        self.searcher = Searcher(archive, like_scan_rows=like_scan_rows)

    async def call(
        self,
        args: Mapping[str, Any],
        *,
        viewer: str | None,
        current_session_id: str | None = None,
    ) -> dict[str, Any]:
        try:
            known = {"query", "limit", "sort", "session_id", "around_message_id", "window"}
            unknown = sorted(set(args) - known)
            if unknown:
                raise _BadArgs(
                    f"unknown argument(s) {unknown}; session_search takes {sorted(known)}"
                )
            limit = _int_arg(args, "limit", 3, 1, 10) or 3
            window = _int_arg(args, "window", 5, 1, 20) or 5
            around = _int_arg(args, "around_message_id", None, 0, 2**62)
            sort_arg = args.get("sort") or "relevance"
            if sort_arg not in ("relevance", "newest", "oldest"):
                raise _BadArgs("sort must be 'relevance', 'newest' or 'oldest'")
            sort = cast(Sort, sort_arg)
            session_id = args.get("session_id")
            query = args.get("query")
            for name, value in (("session_id", session_id), ("query", query)):
                if value is not None and not isinstance(value, str):
                    raise _BadArgs(f"{name} must be a string")
        except _BadArgs as exc:
            return {"success": False, "mode": "error", "error": str(exc)}
        if session_id and around is not None:
            return await self.scroll(session_id, around, window, viewer=viewer)
        if session_id:
            return await self.read(session_id, viewer=viewer)
        if around is not None:
            return {
                "success": False,
                "mode": "scroll",
                "error": "around_message_id needs session_id",
            }
        if not query or not query.strip():
            return await self.browse(
                limit if "limit" in args else 10, viewer=viewer, current=current_session_id
            )
        return await self.discover(query, limit, sort, viewer=viewer, current=current_session_id)

    async def _visible(self, session_id: str, viewer: str | None) -> Session | None:
        return await self.archive.get_session(session_id, viewer=viewer)

    @staticmethod
    def _not_found(mode: str, session_id: str) -> dict[str, Any]:
        # The same answer for "does not exist" and "not yours": existence is not leaked.
        return {
            "success": False,
            "mode": mode,
            "error": f"No session {session_id!r} in your history.",
        }

    async def scroll(
        self, session_id: str, anchor: int, window: int, *, viewer: str | None
    ) -> dict[str, Any]:
        session = await self._visible(session_id, viewer)
        if session is None:
            return self._not_found("scroll", session_id)
        before = await self.archive.messages(
            session_id, viewer=viewer, before_id=anchor + 1, limit=window + 2, newest_first=True
        )
        after = await self.archive.messages(
            session_id, viewer=viewer, after_id=anchor, limit=window + 1
        )
        if not before or before[0].id != anchor:
            return {
                "success": False,
                "mode": "scroll",
                "error": f"Message {anchor} is not in session {session_id!r}.",
            }
        older = list(reversed(before[1 : window + 1]))
        return {
            "success": True,
            "mode": "scroll",
            "session": session_json(session),
            "anchor_message_id": anchor,
            "messages": [message_json(m) for m in [*older, before[0], *after[:window]]],
            "more_before": len(before) > window + 1,
            "more_after": len(after) > window,
        }

    async def read(self, session_id: str, *, viewer: str | None) -> dict[str, Any]:
        session = await self._visible(session_id, viewer)
        if session is None:
            return self._not_found("read", session_id)
        head = await self.archive.messages(session_id, viewer=viewer, limit=READ_ALL_UP_TO + 1)
        result: dict[str, Any] = {"success": True, "mode": "read", "session": session_json(session)}
        if len(head) <= READ_ALL_UP_TO:
            result["messages"] = [message_json(m) for m in head]
            return result
        tail = await self.archive.messages(
            session_id, viewer=viewer, limit=READ_TAIL, newest_first=True
        )
        tail.reverse()
        first, last = head[:READ_HEAD], tail
        result["messages"] = [message_json(m) for m in first + last]
        result["omitted"] = {"after_message_id": first[-1].id, "before_message_id": last[0].id}
        result["hint"] = (
            f"Showing the first {READ_HEAD} and last {READ_TAIL} messages. To see the middle, call "
            f"session_search with session_id={session_id!r} and around_message_id between "
            f"{first[-1].id} and {last[0].id}."
        )
        return result

    async def browse(
        self, limit: int, *, viewer: str | None, current: str | None
    ) -> dict[str, Any]:
        sessions = await self.archive.sessions(viewer=viewer, limit=limit, exclude=current)
        items = []
        for session in sessions:
            first = await self.archive.messages(session.id, viewer=viewer, limit=1)
            item = session_json(session)
            item["preview"] = message_json(first[0], limit=200)["content"] if first else ""
            items.append(item)
        return {"success": True, "mode": "browse", "sessions": items}

    async def discover(
        self, text: str, limit: int, sort: Sort, *, viewer: str | None, current: str | None
    ) -> dict[str, Any]:
        hits, parsed = await self.searcher.find(
            text, viewer=viewer, limit=limit, sort=sort, exclude_session=current
        )
        result: dict[str, Any] = {"success": True, "mode": "discover", "query": text, "results": []}
        if parsed.note:
            result["note"] = parsed.note
        if parsed.empty:
            result["note"] = "The query has no searchable words; nothing was searched."
            return result
        if not hits:
            result["note"] = "No past messages match. Try other words, or omit query to browse."
            return result
        for rank, hit in enumerate(hits):
            session = await self.archive.get_session(hit.session_id, viewer=viewer)
            if session is None:  # pragma: no cover - the SQL already scoped it
                continue
            window = await self.archive.messages(
                hit.session_id,
                viewer=viewer,
                before_id=hit.message_id + 1,
                limit=6 if rank == 0 else 1,
                newest_first=True,
            )
            anchor = window[0]
            entry: dict[str, Any] = {
                **session_json(session),
                "message": message_json(anchor),
                "snippet": hit.snippet,
            }
            if rank == 0:
                after = await self.archive.messages(
                    hit.session_id, viewer=viewer, after_id=hit.message_id, limit=5
                )
                entry["context"] = [
                    message_json(m) for m in [*reversed(window[1:]), anchor, *after]
                ]
                first = await self.archive.messages(hit.session_id, viewer=viewer, limit=3)
                last = await self.archive.messages(
                    hit.session_id, viewer=viewer, limit=3, newest_first=True
                )
                entry["bookends"] = {
                    "first": [message_json(m, limit=BOOKEND_CHARS) for m in first],
                    "last": [message_json(m, limit=BOOKEND_CHARS) for m in reversed(last)],
                }
            result["results"].append(entry)
        return result
