"""The ``session_search`` tool, bound to one session's person.

The factory closes over the person's own view of the archive: no argument names a person,
so the model cannot address anyone else's history whatever it sends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from agent_core.tools.base import Tool
from memory.archive import SearchTool

__all__ = ["session_search_tool"]


def session_search_tool(
    search: SearchTool, *, person: str, current_session: Callable[[], str | None]
) -> Tool:
    """The ``session_search`` tool, always scoped to ``person``."""

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
        With query: the best matching sessions, the best one with context. Without query:
        the most recent sessions. With session_id: that session (first and last messages);
        add around_message_id to read the messages around one of them.

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
        return await search.call(call, viewer=person, current_session_id=current_session())

    return Tool.from_function(session_search)
