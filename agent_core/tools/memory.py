"""The ``memory`` tool, bound to one session's person, and its JSON.

``memory_tool`` closes over the person's own store: no argument names a person, so the model
cannot address anyone else's memory whatever it sends. The store answers with typed outcomes
(``memory.curated.outcomes``); ``outcome_json`` is the one place they become the JSON the
model (and ``mnemo memory apply``) reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

from agent_core.tools.base import Tool
from memory import MemoryStore, MemoryTurn
from memory.curated import Change, Done, Outcome, Refused, Saved, Staged

__all__ = ["SAVED_NOTE", "UNNEEDED_NOTE", "MemoryOperation", "memory_tool", "outcome_json"]

SAVED_NOTE = "Saved to disk. This write is complete: do not repeat it."
UNNEEDED_NOTE = "No write was needed: do not repeat this call."


class MemoryOperation(TypedDict):
    action: Literal["add", "replace", "remove"]
    content: NotRequired[str]
    old_text: NotRequired[str]


#: Told of each write the tool applied: (action, target, entry: the new text, or for a
#: remove the text that identified the entry).
OnWrite = Callable[[str, str, str], None]


def memory_tool(
    store: MemoryStore, turn: Callable[[], MemoryTurn], *, on_write: OnWrite | None = None
) -> Tool:
    """The ``memory`` tool over ``store``; ``turn()`` gives the current turn's counter;
    ``on_write`` hears of every write applied (not of staged or refused ones)."""

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
        outcome = await asyncio.to_thread(store.call, call, turn())
        if on_write is not None and isinstance(outcome, Saved) and outcome.wrote:
            steps: list[Mapping[str, Any]] = (
                list(operations)
                if operations
                else [{"action": action, "content": content, "old_text": old_text}]
            )
            for step in steps:
                entry = step.get("content") or step.get("old_text") or ""
                on_write(str(step.get("action") or ""), outcome.target, str(entry))
        return outcome_json(outcome)

    return Tool.from_function(memory)


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """The memory tool's result for ``outcome`` (keys in this order, for stable bytes)."""
    if isinstance(outcome, Saved):
        result: dict[str, Any] = {
            "success": True,
            "done": True,
            "target": outcome.target,
            "usage": outcome.usage,
            "entry_count": outcome.entry_count,
            "message": outcome.message,
        }
        if len(outcome.changes) == 1:
            result.update(_change_json(outcome.changes[0]))
        elif outcome.changes:
            result["changes"] = [_change_json(change) for change in outcome.changes]
        result["note"] = SAVED_NOTE if outcome.wrote else UNNEEDED_NOTE
        return result
    if isinstance(outcome, Staged):
        return {
            "success": True,
            "done": True,
            "staged": True,
            "pending_id": outcome.pending_id,
            "target": outcome.target,
            "message": outcome.message,
        }
    if isinstance(outcome, Done):
        done: dict[str, Any] = {"success": True, "message": outcome.message}
        if outcome.usage is not None:
            done["usage"] = outcome.usage
        return done
    return _refused_json(outcome)


def _refused_json(refused: Refused) -> dict[str, Any]:
    if refused.final:
        return {"success": False, "done": True, "error": refused.error}
    result: dict[str, Any] = {"success": False, "error": refused.error}
    extra: dict[str, Any] = {
        "current_entries": refused.current_entries,
        "usage": refused.usage,
        "drift_backup": refused.drift_backup,
        "matches": refused.matches,
        "blocked": refused.blocked,
    }
    for key, value in extra.items():
        if value is not None:
            result[key] = list(value) if isinstance(value, tuple) else value
    return result


def _change_json(change: Change) -> dict[str, str]:
    if change.new is None:
        return {"removed": change.old}
    return {"replaced": change.old, "with": change.new}
