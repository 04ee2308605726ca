"""Compression with memory flush, for sessions that outgrow the context window.

When a request's prompt reaches ``threshold`` of the context window, the agent (after the
reply is handed back) compresses the session:

1. **flush** — a review over the messages about to leave the context, memory tool only, so
   nothing worth keeping is lost;
2. **summarise** the middle of the conversation (the first ``keep_head`` messages and a tail
   of ``tail_share`` of the window stay verbatim; a tool call is never split from its
   results);
3. **continue** in a child session linked to its parent, whose system prompt is rebuilt with
   the fresh memory snapshot and the summary framed as reference only.

This module holds the pure parts (the split, the summary request); ``agent.py`` runs them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_core.models import ChatMessage, Model, Usage
from agent_core.tools import Toolbox
from memory.archive import Session, SessionSpec, new_session_id

__all__ = [
    "SUMMARY_INSTRUCTION",
    "CompressionSettings",
    "continuation",
    "message_tokens",
    "split_history",
    "summarise",
]

SUMMARY_INSTRUCTION = """\
[Context compression — the person does not see this message.] The conversation above is \
about to be shortened. Write a faithful summary of it for your own reference: what the \
person asked for and decided, facts and numbers you will need, open questions and what was \
left undone. Plain text, at most 300 words. Do not call tools."""


@dataclass(frozen=True, slots=True)
class CompressionSettings:
    context_window: int
    threshold: float = 0.75
    keep_head: int = 3
    tail_share: float = 0.25
    model: str | None = None

    def due(self, prompt_tokens: int) -> bool:
        return prompt_tokens >= self.threshold * self.context_window


def message_tokens(message: ChatMessage) -> int:
    """A rough token count (4 characters a token), enough to place the cuts."""
    return len(json.dumps(message, ensure_ascii=False)) // 4 + 4


def split_history(
    history: Sequence[dict[str, Any]], *, keep_head: int, tail_tokens: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(head, middle, tail)``; no boundary falls between a tool call and its results."""

    def clean_cut(index: int) -> int:
        # move a cut backwards off tool results, so they stay with their assistant message
        while 0 < index < len(history) and history[index].get("role") == "tool":
            index -= 1
        return index

    head_end = keep_head
    while head_end < len(history) and history[head_end].get("role") == "tool":
        head_end += 1  # the head keeps the results of a tool call it contains
    head_end = min(head_end, len(history))
    tail_start = len(history)
    budget = tail_tokens
    while tail_start > head_end and budget - message_tokens(history[tail_start - 1]) >= 0:
        budget -= message_tokens(history[tail_start - 1])
        tail_start -= 1
    tail_start = max(clean_cut(tail_start), head_end)
    return (
        list(history[:head_end]),
        list(history[head_end:tail_start]),
        list(history[tail_start:]),
    )


async def summarise(
    model: Model,
    *,
    system: ChatMessage,
    messages: Sequence[ChatMessage],
    toolbox: Toolbox,
    model_name: str | None = None,
) -> tuple[str, Usage]:
    """One request over the same cached prefix (system prompt and tools list)."""
    instruction = {"role": "user", "content": SUMMARY_INSTRUCTION}
    reply = await model.complete([system, *messages, instruction], toolbox.specs, model=model_name)
    text = (reply.content or "").strip()
    if not text or reply.tool_calls:
        text = "(no summary could be made; the earlier messages are in the archive)"
    return text, reply.usage


def continuation(parent: Session, system_prompt: str) -> SessionSpec:
    """The session a compressed ``parent`` goes on in: the same chat and people, a new id,
    ``parent`` as its parent, its own frozen prompt (with the summary)."""
    return SessionSpec(
        id=new_session_id(),
        platform=parent.platform,
        chat_id=parent.chat_id,
        chat_type=parent.chat_type,
        people=parent.people,
        thread_id=parent.thread_id,
        session_key=parent.session_key,
        parent_id=parent.id,
        title=parent.title,
        system_prompt=system_prompt,
    )
