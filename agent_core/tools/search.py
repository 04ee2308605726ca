"""The ``session_search`` tool, bound to one session's person, and its JSON.

``session_search_tool`` closes over the person's own view of the archive: no argument names
a person, so the model cannot address anyone else's history whatever it sends.
``Tool.invoke`` has checked the arguments against the schema (types, choices, no unknown
names) before ``SearchTool.call`` sees them; ``call`` picks the mode, applies the defaults
and caps, runs the typed read (``memory.archive.search``) and builds the JSON the model
reads: ``success`` and ``mode`` (scroll / read / browse / discover) always, ``error`` when
it failed. ``message_json`` and ``session_json`` are also what ``mnemo sessions … --json``
prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from agent_core.tools.base import Tool
from memory.archive import (
    FUSION,
    HITS_PER_SESSION,
    LIKE_SCAN_ROWS,
    READ_HEAD,
    READ_TAIL,
    ArchiveStore,
    Discovery,
    Fusion,
    Message,
    MessageNotInSession,
    Reading,
    Searcher,
    SemanticRanker,
    Session,
    SessionNotFound,
    SessionResult,
    Sort,
    excerpt,
    when,
    without_header,
)

__all__ = ["MESSAGE_CHARS", "SearchTool", "message_json", "session_json", "session_search_tool"]

MESSAGE_CHARS = 4000
PREVIEW_CHARS = 200
#: What discover shows of a match and of its neighbours: enough to judge it, little enough
#: that the default call (3 sessions x 3 matches) stays under about 4,000 characters of JSON
#: on chat-length messages and 5,000 when every message is long (bench-recall measures it);
#: ``scroll`` reads the whole messages.
MATCH_CHARS, NEIGHBOUR_CHARS, TITLE_CHARS = 200, 80, 60
DEFAULT_LIMIT, MAX_LIMIT = 3, 10
BROWSE_LIMIT = 10
DEFAULT_WINDOW, MAX_WINDOW = 5, 20
#: What the description says of discover when a ranking by meaning is fused in.
BY_WORDS = "With query: the best matching sessions,"
BY_MEANING = (
    "With query: the best matching sessions, by its words and by meaning (a question in"
    " plain words also finds messages that answer it in other words),"
)


def session_search_tool(
    search: SearchTool,
    *,
    person: str,
    current_session: Callable[[], str | None],
    names: Callable[[], Sequence[str]] = tuple,
) -> Tool:
    """The ``session_search`` tool, always scoped to ``person``; ``names``: what the person
    is called now (for a ranking by meaning, which reads a question naming them as theirs)."""

    async def session_search(
        *,
        query: str | None = None,
        limit: int | None = None,
        sort: Literal["relevance", "newest", "oldest"] | None = None,
        session_id: str | None = None,
        around_message_id: int | None = None,
        window: int | None = None,
    ) -> dict[str, Any]:
        """Search this person's past conversations (raw messages; nothing is summarised).
        With query: the best matching sessions, each with its best matching messages (id,
        excerpt, and the messages just before and after). Without query: the most recent
        sessions. With session_id: that session (first and last messages); add
        around_message_id (a match's id) to read the messages around it in full.

        Args:
            query: words or "exact phrases" to look for
            limit: how many sessions to return (default 3, at most 10)
            sort: relevance (default), newest or oldest
            session_id: a session id from an earlier result
            around_message_id: a message id in that session to read around
            window: how many messages on each side (default 5, at most 20)
        """
        args = {
            "query": query,
            "limit": limit,
            "sort": sort,
            "session_id": session_id,
            "around_message_id": around_message_id,
            "window": window,
        }
        call = {key: value for key, value in args.items() if value is not None}
        return await search.call(
            call, viewer=person, current_session_id=current_session(), names=names()
        )

    tool = Tool.from_function(session_search)
    if search.searcher.semantic is None:
        return tool
    return replace(tool, description=tool.description.replace(BY_WORDS, BY_MEANING))


class SearchTool:
    """The model-facing ``session_search`` contract over a ``Searcher``; ``semantic``: a
    ranking by meaning that discover fuses with the words' (the memory provider's, when it
    has one: ``agent_core.recall.Recall.ranker``), as ``fusion`` says. The JSON is the
    same either way, on either archive backend."""

    def __init__(
        self,
        archive: ArchiveStore,
        *,
        like_scan_rows: int = LIKE_SCAN_ROWS,
        hits_per_session: int = HITS_PER_SESSION,
        semantic: SemanticRanker | None = None,
        fusion: Fusion = FUSION,
    ) -> None:
        self.archive = archive
        self.searcher = Searcher(
            archive,
            like_scan_rows=like_scan_rows,
            semantic=semantic,
            fusion=fusion,
        )
        self.hits_per_session = hits_per_session

    async def call(
        self,
        args: Mapping[str, Any],
        *,
        viewer: str | None,
        current_session_id: str | None = None,
        names: Sequence[str] = (),
    ) -> dict[str, Any]:
        """One call with ``args`` as ``Tool.invoke`` checked them (absent: not given);
        ``names``: what the viewer is called (``Searcher.discover``)."""
        limit = _capped(args.get("limit"), DEFAULT_LIMIT, 1, MAX_LIMIT)
        window = _capped(args.get("window"), DEFAULT_WINDOW, 1, MAX_WINDOW)
        around = args.get("around_message_id")
        around = None if around is None else _capped(around, 0, 0, 2**62)
        session_id: str | None = args.get("session_id")
        query: str | None = args.get("query")
        sort: Sort = args.get("sort") or "relevance"
        searcher = self.searcher
        try:
            if session_id and around is not None:
                scroll = await searcher.scroll(session_id, around, window, viewer=viewer)
                return {
                    "success": True,
                    "mode": "scroll",
                    "session": session_json(scroll.session),
                    "anchor_message_id": scroll.anchor,
                    "messages": [message_json(m) for m in scroll.messages],
                    "more_before": scroll.more_before,
                    "more_after": scroll.more_after,
                }
            if session_id:
                return _reading_json(await searcher.read(session_id, viewer=viewer))
        except (SessionNotFound, MessageNotInSession) as exc:
            mode = "scroll" if around is not None else "read"
            return {"success": False, "mode": mode, "error": str(exc)}
        if around is not None:
            return {
                "success": False,
                "mode": "scroll",
                "error": "around_message_id needs session_id",
            }
        if not query or not query.strip():
            listed = await searcher.browse(
                limit if "limit" in args else BROWSE_LIMIT,
                viewer=viewer,
                exclude_session=current_session_id,
            )
            items = []
            for entry in listed:
                item = session_json(entry.session)
                first = entry.first
                item["preview"] = (
                    message_json(first, limit=PREVIEW_CHARS)["content"] if first else ""
                )
                items.append(item)
            return {"success": True, "mode": "browse", "sessions": items}
        found = await searcher.discover(
            query,
            viewer=viewer,
            limit=limit,
            hits_per_session=self.hits_per_session,
            sort=sort,
            exclude_session=current_session_id,
            names=names,
        )
        return _discovery_json(found)


def _capped(value: int | None, default: int, low: int, high: int) -> int:
    return default if value is None else min(max(value, low), high)


def _reading_json(reading: Reading) -> dict[str, Any]:
    result: dict[str, Any] = {
        "success": True,
        "mode": "read",
        "session": session_json(reading.session),
        "messages": [message_json(m) for m in reading.messages],
    }
    if reading.omitted is not None:
        after, before = reading.omitted
        result["omitted"] = {"after_message_id": after, "before_message_id": before}
        result["hint"] = (
            f"Showing the first {READ_HEAD} and last {READ_TAIL} messages. To see the middle, call "
            f"session_search with session_id={reading.session.id!r} and around_message_id between "
            f"{after} and {before}."
        )
    return result


def _discovery_json(found: Discovery) -> dict[str, Any]:
    terms = found.parsed.all_terms()
    result: dict[str, Any] = {
        "success": True,
        "mode": "discover",
        "query": found.query,
        "results": [_result_json(r, terms) for r in found.results],
    }
    if found.note is not None:
        result["note"] = found.note
    return result


def _result_json(found: SessionResult, terms: Sequence[str]) -> dict[str, Any]:
    session = found.session
    group = session.chat_type != "dm"  # who said it matters only where several people talk
    shown = {match.message.id for match in found.matches}
    matches = []
    for match in found.matches:
        data = _brief(match.message, terms, MATCH_CHARS, speaker=group)
        data["when"] = when(match.message.created_at)
        if match.message.external_id:
            data["external_id"] = match.message.external_id
        # a neighbour already shown (a match, or the neighbour of another) is not repeated
        for side, neighbour in (("before", match.before), ("after", match.after)):
            if neighbour is not None and neighbour.id not in shown:
                shown.add(neighbour.id)
                data[side] = _brief(neighbour, terms, NEIGHBOUR_CHARS, speaker=group)
        matches.append(data)
    return {
        "session_id": session.id,
        "title": excerpt(session.title or "(untitled)", (), TITLE_CHARS),
        "platform": session.platform,
        "chat_type": session.chat_type,
        "when": when(session.last_active_at),
        "message_count": session.message_count,
        "matches": matches,
    }


def _brief(message: Message, terms: Sequence[str], width: int, *, speaker: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"id": message.id, "role": message.role}
    if speaker and message.speaker:
        data["speaker"] = message.speaker
    if message.tool_name:
        data["tool_name"] = message.tool_name
    data["content"] = excerpt(without_header(message.content), terms, width)
    if message.tool_calls:
        data["tool_calls"] = [
            {"name": c.get("function", {}).get("name", c.get("name"))} for c in message.tool_calls
        ]
    return data


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
