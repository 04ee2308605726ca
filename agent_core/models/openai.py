"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, vLLM, Ollama,
llama.cpp server) through the ``openai`` SDK — the only module that imports it.

The SDK's own retries are off (``max_retries=0``): this module retries 429, 5xx,
connection errors and timeouts itself, with exponential back-off and full jitter, and
honours ``Retry-After`` / ``retry-after-ms`` (capped) — so the policy is ours, visible, and
testable. Other 4xx answers are not retried. After the last try a ``ModelUnavailable`` says
what happened; the caller turns it into a short message for the person.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import openai

from agent_core.models import (
    ChatMessage,
    ModelRejected,
    ModelReply,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = ["OpenAIModel", "retry_after_seconds"]

log = logging.getLogger(__name__)
MAX_RETRY_AFTER_S = 60.0


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date); None when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class OpenAIModel:
    """``Model`` over ``AsyncOpenAI``; ``close()`` (or ``async with``) releases the client."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.name = name
        self.max_retries = max_retries
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._sleep = sleep
        self._rng = rng
        # A local endpoint may need no key; the SDK insists on a string.
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=0,
        )

    async def close(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _backoff(self, attempt: int, requested: float | None) -> float:
        if requested is not None:
            return min(requested, MAX_RETRY_AFTER_S)
        ceiling = min(self._max_backoff_s, self._backoff_s * 2.0**attempt)
        return float(ceiling * (0.5 + 0.5 * self._rng()))  # jitter: spread retries of many sessions

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        model: str | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        request: dict[str, Any] = {"model": model or self.name, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        last = "no attempt was made"
        for attempt in range(self.max_retries + 1):
            requested: float | None = None
            try:
                response = await self._client.chat.completions.create(**request)
            except openai.RateLimitError as exc:
                requested = retry_after_seconds(exc.response.headers)
                last = f"rate limited (429): {_message(exc)}"
            except openai.APITimeoutError:
                last = "the request timed out"
            except openai.APIConnectionError as exc:
                last = f"cannot connect: {exc}"
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise ModelRejected(
                        f"the model endpoint refused the request ({exc.status_code}):"
                        f" {_message(exc)}",
                        attempts=attempt + 1,
                    ) from exc
                requested = retry_after_seconds(exc.response.headers)
                last = f"server error ({exc.status_code}): {_message(exc)}"
            else:
                return _reply(response, attempt + 1)
            if attempt < self.max_retries:
                delay = self._backoff(attempt, requested)
                log.warning(
                    "model request failed (%s); retry %d/%d in %.2fs",
                    last,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                await self._sleep(delay)
        raise ModelUnavailable(
            f"the model did not answer after {self.max_retries + 1} attempts: {last}",
            attempts=self.max_retries + 1,
        )


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def _reply(response: Any, attempts: int) -> ModelReply:
    choice = response.choices[0]
    message = choice.message
    calls = tuple(
        ToolCall(call.id, call.function.name, call.function.arguments or "")
        for call in (message.tool_calls or [])
        if getattr(call, "function", None) is not None
    )
    usage = Usage()
    if response.usage is not None:
        details = getattr(response.usage, "prompt_tokens_details", None)
        usage = Usage(
            prompt_tokens=response.usage.prompt_tokens or 0,
            completion_tokens=response.usage.completion_tokens or 0,
            cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
        )
    return ModelReply(
        content=message.content,
        tool_calls=calls,
        usage=usage,
        finish_reason=choice.finish_reason,
        model=response.model,
        attempts=attempts,
    )
