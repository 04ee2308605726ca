"""The model behind a narrow protocol: ``Model.complete(messages, tools) -> ModelReply``.

``openai.py`` is the only module that imports the ``openai`` SDK; ``scripted.py`` is a model
for tests and dry runs whose replies are a script or a function of the request.

Errors (``kind`` names each for metrics and logs; the person gets an apology either way)::

    ModelError
    ├── ModelUnavailable       retries exhausted (rate limited, 5xx, connection, timeout)
    ├── ModelInvalidResponse   retries exhausted, and the last answer was a 2xx that is not a
    │                          chat completion (a proxy's HTML page, invalid JSON, no or empty
    │                          ``choices``, wrong types)
    └── ModelRejected          the endpoint refused the request (4xx other than 429)

A ``Model`` returns a ``ModelReply`` or raises a ``ModelError``: nothing else, whatever the
endpoint sends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "ChatMessage",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelInvalidResponse",
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


ModelErrorKind = Literal["unavailable", "invalid_response", "rejected"]
"""The fixed words ``mnemo_model_errors_total{kind}`` counts."""


class ModelError(Exception):
    """The model could not answer; ``attempts`` says how many requests were made and
    ``reason`` what went wrong with the last one (the message says both)."""

    kind: ModelErrorKind = "unavailable"

    def __init__(self, message: str, *, attempts: int = 1, reason: str | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.reason = message if reason is None else reason


class ModelUnavailable(ModelError):
    """Rate limited, server errors, connection failures or timeouts, after every retry."""

    kind: ModelErrorKind = "unavailable"


class ModelInvalidResponse(ModelError):
    """The endpoint answered, but not with a chat completion, on the last try.

    ``content_type`` and ``excerpt`` (the body's first 200 characters, on one line, with
    credentials redacted and control characters escaped) are what the operator needs to
    find the culprit (a proxy, a wrong ``base_url``); the message carries both."""

    kind: ModelErrorKind = "invalid_response"

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 1,
        reason: str | None = None,
        content_type: str = "",
        excerpt: str = "",
    ) -> None:
        super().__init__(message, attempts=attempts, reason=reason)
        self.content_type = content_type
        self.excerpt = excerpt


class ModelRejected(ModelError):
    """The endpoint refused the request itself (bad request, authentication, not found)."""

    kind: ModelErrorKind = "rejected"


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
    """One answer. ``refusal`` is the model's own refusal text (OpenAI sends it instead of
    ``content``); ``finish_reason`` is the endpoint's word: ``stop``, ``tool_calls``,
    ``length`` (cut off at the token limit), ``content_filter``, or another server's own."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str | None = None
    attempts: int = 1
    refusal: str | None = None

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
