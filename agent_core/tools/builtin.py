"""The built-in tools, bound to one session's person.

Each factory closes over the person's own store or view of the archive: no argument names
a person, so the model cannot address anyone else's memory or history whatever it sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict

from agent_core.tools.base import Tool
from memory import MemoryStore, MemoryTurn
from memory.archive import SearchTool

__all__ = ["MemoryOperation", "memory_tool", "session_search_tool"]


class MemoryOperation(TypedDict):
    action: Literal["add", "replace", "remove"]
    content: NotRequired[str]
    old_text: NotRequired[str]


def memory_tool(store: MemoryStore, turn: Callable[[], MemoryTurn]) -> Tool:
    """The ``memory`` tool over ``store``; ``turn()`` gives the current turn's counter."""

    async def memory(
        *,
        action: Literal["add", "replace", "remove"] | None = None,
        target: Literal["memory", "user"] = "memory",
        content: str | None = None,
        old_text: str | None = None,
        operations: list[MemoryOperation] | None = None,
    ) -> dict[str, Any]:
        """Save durable facts to your bounded memory, which is shown to you at the start of
        every future session. target "user": who the person is (name, preferences, style);
        target "memory": your notes about their world (environment, conventions, lessons).
        Entries are short; the files have hard size limits.

        Use add for a new fact, replace to rewrite the one entry containing old_text, remove
        to delete it; or send operations=[...] to apply several at once (all or nothing).
        A success is final: do not repeat it. Over the limit you get the entries back:
        consolidate (merge with replace, remove stale ones) in the same turn, then retry.

        Args:
            action: add, replace or remove (or use operations)
            target: "memory" (your notes) or "user" (the user profile)
            content: the entry text, for add and replace
            old_text: a short unique part of the entry to replace or remove
            operations: several add/replace/remove steps applied together
        """
        args = {
            "action": action,
            "target": target,
            "content": content,
            "old_text": old_text,
            "operations": operations,
        }
        call = {key: value for key, value in args.items() if value is not None}
        return await asyncio.to_thread(store.call, call, turn())

    return Tool.from_function(memory)


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
