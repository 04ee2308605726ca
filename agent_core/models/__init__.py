"""The model behind a narrow protocol: ``Model.complete(messages, tools) -> ModelReply``.

``openai.py`` is the only module that imports the ``openai`` SDK; ``scripted.py`` is a model
for tests and dry runs whose replies are a script or a function of the request.

Errors::

    ModelError
    ├── ModelUnavailable   retries exhausted (rate limited, 5xx, connection, timeout)
    └── ModelRejected      the endpoint refused the request (4xx other than 429)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ChatMessage",
    "Model",
    "ModelError",
    "ModelRejected",
    "ModelReply",
    "ModelUnavailable",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

ChatMessage = Mapping[str, Any]
"""One Chat Completions message (``role``, ``content``, ``tool_calls``, ``tool_call_id``)."""
ToolSpec = Mapping[str, Any]
"""One Chat Completions tool: ``{"type": "function", "function": {name, description, …}}``."""


class ModelError(Exception):
    """The model could not answer; ``attempts`` says how many requests were made."""

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class ModelUnavailable(ModelError):
    """Rate limited, server errors, connection failures or timeouts, after every retry."""


class ModelRejected(ModelError):
    """The endpoint refused the request itself (bad request, authentication, not found)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the raw JSON text the model produced (may be invalid)

    def as_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True, slots=True)
class ModelReply:
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str | None = None
    attempts: int = 1

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message() for call in self.tool_calls]
        return message


@runtime_checkable
class Model(Protocol):
    """Anything that completes a chat: the OpenAI-compatible client, or a script."""

    name: str

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        """One request; ``model`` overrides the configured model name for this call,
        ``max_tokens`` caps the answer (``mnemo doctor`` asks for one token)."""
        ...
