"""A session's live state, and its messages as the archive keeps them.

``AgentSettings`` are the agent's knobs; ``UNAVAILABLE`` and ``REJECTED`` the replies a
person gets when the model cannot answer. ``Conversation`` is one session's state in the
agent (its frozen system prompt and tools, the history, counters); ``TurnOutcome`` is what
a turn hands back. ``archived_rows`` turns chat messages into archive rows and
``chat_message`` an archived row back into a chat message (a resumed session continues with
exactly what was said).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_core.compress import CompressionSettings
from agent_core.models import ModelErrorKind, Usage
from agent_core.review import ReviewOutcome
from agent_core.tools import Approval, Toolbox
from memory import MemoryTurn
from memory.archive import Message, NewMessage
from memory.providers import ProviderTool, Subject

__all__ = [
    "REJECTED",
    "UNAVAILABLE",
    "AgentSettings",
    "Conversation",
    "TurnOutcome",
    "archived_rows",
    "chat_message",
    "user_message",
]


UNAVAILABLE = (
    "Sorry — I can't reach my language model right now, so I couldn't answer. Your message is"
    " saved; please try again in a minute."
)
REJECTED = (
    "Sorry — the language model refused that request, so I couldn't answer. Your message is"
    " saved. If this keeps happening, tell the operator of this bot."
)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    max_tool_iterations: int = 16
    review_enabled: bool = True
    review_interval_turns: int = 1
    review_model: str | None = None
    review_max_iterations: int = 4
    review_timeout_s: float = 120.0
    compression: CompressionSettings | None = None
    skill_approval: Approval = "non_admin"


@dataclass(slots=True)
class Conversation:
    """One session's live state; the system prompt and tools never change within it."""

    id: str
    person: str
    platform: str
    system: dict[str, str]
    toolbox: Toolbox
    history: list[dict[str, Any]] = field(default_factory=list)
    memory_turn: MemoryTurn = field(default_factory=MemoryTurn)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    review_usage: Usage = field(default_factory=Usage)
    review_task: asyncio.Task[ReviewOutcome] | None = None
    last_review: ReviewOutcome | None = None
    compressing: asyncio.Task[None] | None = None
    compressions: int = 0
    admin: bool = False  # an admin's session: skill writes apply without approval
    group: bool = False  # a group chat's session (what a memory provider is told)
    provider_tools: tuple[ProviderTool, ...] = ()  # the memory provider's, fixed at start
    archived: int = 0
    """Messages of this session in the archive as this process knows them (loaded on resume,
    counted on each append): another replica's turn shows as a count it did not make."""
    unannounced: list[str] = field(default_factory=list)
    """Memory writes a compression flush staged for approval: the next turn's outcome
    carries them, so they are shown with its reply like the turn's own."""
    names: tuple[str, ...] = ()
    """What the session's person is called (``memory.people.names_of`` of their display
    name; none for a group's own store): the gateway keeps it current. A memory provider
    is told them with the subject, and ``session_search`` hands them to its ranking by
    meaning, which reads a question that names the person as one about them."""

    @property
    def subject(self) -> Subject:
        """Whose memory the session is about, as a memory provider is told."""
        return Subject(self.person, self.group, self.names)


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    reply: str
    usage: Usage
    error: str | None = None
    review: asyncio.Task[ReviewOutcome] | None = None
    error_kind: ModelErrorKind | None = None  # what failed, for metrics (never a message)
    retries: int = 0
    staged: tuple[str, ...] = ()
    """Ids of the memory writes this turn staged for approval (``memory.write_approval``),
    in order; also when the turn failed after staging them."""


def archived_rows(
    messages: Sequence[dict[str, Any]],
    person: str | None,
    usage_at: Mapping[int, Usage] | None = None,
) -> list[NewMessage]:
    """Chat messages as archive rows: the user's are spoken by ``person``, a tool result is
    named after its call, an assistant message carries the usage of its own request."""
    names = {
        call["id"]: call["function"]["name"]
        for message in messages
        for call in message.get("tool_calls") or []
    }
    rows = []
    for index, message in enumerate(messages):
        role = message["role"]
        usage = (usage_at or {}).get(index)
        rows.append(
            NewMessage(
                role,
                message.get("content") or "",
                speaker=person if role == "user" else None,
                tool_calls=message.get("tool_calls"),
                tool_call_id=message.get("tool_call_id"),
                tool_name=names.get(message.get("tool_call_id") or ""),
                prompt_tokens=usage.prompt_tokens if usage else None,
                completion_tokens=usage.completion_tokens if usage else None,
                cached_tokens=usage.cached_tokens if usage else None,
            )
        )
    return rows


def chat_message(message: Message) -> dict[str, Any]:
    chat: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        chat["tool_calls"] = message.tool_calls
        chat["content"] = message.content or None
    if message.role == "tool":
        chat["tool_call_id"] = message.tool_call_id
    return chat


def user_message(text: str, speaker: str | None, now: datetime) -> dict[str, str]:
    """A turn's user message: per-turn facts (the time, who speaks in a group) travel here,
    in a header line, never in the system prompt."""
    header = f"[{now.strftime('%Y-%m-%d %H:%M UTC')}"
    header += f" · {speaker}]" if speaker else "]"
    return {"role": "user", "content": f"{header}\n{text}"}
