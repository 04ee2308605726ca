"""A model for tests and dry runs: replies come from a script, or from a function of the
request. Every request is recorded (deep-copied), so tests can assert what was sent."""

from __future__ import annotations

import copy
import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agent_core.models import ChatMessage, ModelReply, ToolSpec, Usage

__all__ = ["Request", "Responder", "ScriptedModel", "echo"]

Responder = Callable[
    [Sequence[ChatMessage], Sequence[ToolSpec]], ModelReply | Awaitable[ModelReply]
]


@dataclass(frozen=True, slots=True)
class Request:
    messages: list[ChatMessage]
    tools: list[ToolSpec]
    model: str | None


def echo(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
    """The dry-run model: repeats the last user message."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    text = str(last.get("content", "")) if last else ""
    header, newline, rest = text.partition("\n")
    if newline and header.startswith("["):  # the agent's [time · speaker] line
        text = rest
    return ModelReply(content=f"(dry run) you said: {text}", usage=Usage(len(text) // 4, 8, 0))


class ScriptedModel:
    """``ScriptedModel("hi", ModelReply(...))``; then ``respond`` (if given) for the rest."""

    def __init__(
        self,
        *replies: ModelReply | str,
        respond: Responder | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self._queue: deque[ModelReply] = deque()
        self._respond = respond
        self.requests: list[Request] = []
        self.push(*replies)

    def push(self, *replies: ModelReply | str) -> None:
        self._queue.extend(ModelReply(content=r) if isinstance(r, str) else r for r in replies)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        self.requests.append(
            Request(copy.deepcopy(list(messages)), copy.deepcopy(list(tools)), model)
        )
        if self._queue:
            return self._queue.popleft()
        if self._respond is None:
            raise AssertionError(f"ScriptedModel {self.name!r} has no reply left for this request")
        reply = self._respond(messages, tools)
        return await reply if inspect.isawaitable(reply) else reply
