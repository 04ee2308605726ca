"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, vLLM, Ollama,
llama.cpp server) through the ``openai`` SDK — the only module that imports it.

The SDK's own retries are off (``max_retries=0``): this module retries 429, 5xx,
connection errors and timeouts itself, with exponential back-off and full jitter, and
honours ``Retry-After`` / ``retry-after-ms`` (capped) — so the policy is ours, visible, and
testable. Other 4xx answers are not retried. After the last try a ``ModelUnavailable`` says
what happened; the caller turns it into a short message for the person.

A 2xx answer is read from the raw response and checked here, not trusted to the SDK: left
to itself the SDK returns an HTML page as a ``str``, raises a bare ``JSONDecodeError`` for a
truncated body and builds a completion without ``choices`` unchecked
(``tests/fakes/test_openai_server.py`` pins this down). Anything that is not a chat
completion (``_completion``) is retried like a 5xx, within the same budget and back-off,
and after the last try raises ``ModelInvalidResponse`` with the content type and the first
200 characters of the body — on one line, control characters escaped, credentials (and this
client's own key, which a proxy may echo) redacted, because that text travels into logs,
``mnemo doctor`` and the terminal.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import time
import unicodedata
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import openai

from agent_core.models import (
    ChatMessage,
    ModelInvalidResponse,
    ModelRejected,
    ModelReply,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
    Usage,
)
from memory.scan import INVISIBLE_CHARS, pattern

__all__ = ["OpenAIModel", "retry_after_seconds"]

log = logging.getLogger(__name__)
MAX_RETRY_AFTER_S = 60.0
EXCERPT_CHARS = 200
NOT_A_COMPLETION = "the endpoint answered, but not with an OpenAI chat completion"
REDACTED = "[redacted]"
_CREDENTIALS = pattern("hardcoded-secret").regex


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
        self._secrets = (api_key,) if api_key and len(api_key) >= 6 else ()
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
        invalid: _NotACompletion | None = None  # what the last attempt got, if a 2xx
        for attempt in range(self.max_retries + 1):
            requested: float | None = None
            invalid = None
            try:
                raw = await self._client.chat.completions.with_raw_response.create(**request)
            except openai.RateLimitError as exc:
                requested = retry_after_seconds(exc.response.headers)
                last = f"rate limited (429): {self._message(exc)}"
            except openai.APITimeoutError:
                last = "the request timed out"
            except openai.APIConnectionError as exc:
                last = f"cannot connect: {exc}"
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise ModelRejected(
                        f"the model endpoint refused the request ({exc.status_code}):"
                        f" {self._message(exc)}",
                        attempts=attempt + 1,
                    ) from exc
                requested = retry_after_seconds(exc.response.headers)
                last = f"server error ({exc.status_code}): {self._message(exc)}"
            else:
                content_type = raw.headers.get("content-type", "")
                try:
                    return _reply(raw.content, content_type, attempt + 1)
                except _NotACompletion as exc:
                    invalid = exc.seen(content_type, raw.content, self._secrets)
                    requested = retry_after_seconds(raw.headers)
                    last = invalid.describe()
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
        attempts = self.max_retries + 1
        tries = f"{attempts} attempt{'' if attempts == 1 else 's'}"
        if invalid is not None:
            raise ModelInvalidResponse(
                f"no usable answer from the model after {tries}: {last}",
                attempts=attempts,
                reason=last,
                content_type=invalid.content_type,
                excerpt=invalid.excerpt,
            )
        raise ModelUnavailable(
            f"the model did not answer after {tries}: {last}",
            attempts=attempts,
            reason=last,
        )

    def _message(self, exc: openai.APIStatusError) -> str:
        """The error's message, or what a body that is not JSON (a proxy's error page, as
        often as not) begins with: one safe line."""
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict) and isinstance(inner.get("message"), str):
                return _excerpt(str(inner["message"]).encode(), self._secrets, limit=300)
        if isinstance(body, str) and body.strip():
            content_type = exc.response.headers.get("content-type", "")
            got = _excerpt(content_type.encode(), self._secrets, limit=100) or "no content type"
            return f"got {got}: {_excerpt(body.encode(), self._secrets)}"
        return _excerpt(str(exc.message).encode(), self._secrets, limit=300)


# -- reading a 2xx answer ------------------------------------------------------------------


class _NotACompletion(Exception):
    """A 2xx answer that is not a chat completion; ``problem`` says what is wrong with it
    (empty when the content type already says it: a page that is not JSON at all)."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.content_type = ""
        self.excerpt = ""

    def seen(self, content_type: str, body: bytes, secrets: Sequence[str]) -> _NotACompletion:
        self.content_type = _excerpt(content_type.encode(), secrets, limit=100) or "no content type"
        self.excerpt = _excerpt(body, secrets) or "(empty body)"
        return self

    def describe(self) -> str:
        problem = f": {self.problem}" if self.problem else ""
        return f"{NOT_A_COMPLETION}{problem} (got {self.content_type}: {self.excerpt})"


def _excerpt(body: bytes, secrets: Sequence[str] = (), *, limit: int = EXCERPT_CHARS) -> str:
    """The first ``limit`` characters of ``body`` as one safe line: credentials and
    ``secrets`` redacted (before the cut, so a key across it is caught whole), whitespace
    runs as one space, control and invisible characters as ``<U+XXXX>``."""
    text = body[: limit * 40].decode("utf-8", errors="replace")
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    text = " ".join(_CREDENTIALS.sub(REDACTED, text).split())
    cut = text[:limit] + ("…" if len(text) > limit else "")
    return "".join(
        f"<U+{ord(c):04X}>"
        if c in INVISIBLE_CHARS or unicodedata.category(c) in ("Cc", "Cf")
        else c
        for c in cut
    )


def _reply(body: bytes, content_type: str, attempts: int) -> ModelReply:
    """The ``ModelReply`` in a chat completion body, or ``_NotACompletion`` saying why not.

    Whatever the content type says, a body that is a chat completion is taken. Only what we
    use is checked, so a server's extra or missing bookkeeping fields (``id``, ``created``,
    ``object``) never fail a turn; ``usage`` is read leniently for the same reason (a figure
    that is not a number counts as 0). ``content`` may also be a list of parts, as some
    servers send it: the text parts are joined."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, depth
        looks_json = "json" in content_type.lower() or body.lstrip()[:1] in (b"{", b"[")
        raise _NotACompletion("invalid JSON" if looks_json else "") from exc
    if not isinstance(data, dict):
        raise _NotACompletion(f"a JSON {_json_type(data)}, not an object")
    if "choices" not in data:
        raise _NotACompletion("no `choices`")
    choices = data["choices"]
    if not isinstance(choices, list):
        raise _NotACompletion(f"`choices` is a {_json_type(choices)}, not a list")
    if not choices:
        raise _NotACompletion("`choices` is empty")
    choice = _object(choices[0], "choices[0]")
    message = _object(choice.get("message"), "choices[0].message")
    content = _content(message.get("content"))
    refusal = _text(message, "refusal")
    finish_reason = _text(choice, "finish_reason")
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise _NotACompletion(f"`message.tool_calls` is a {_json_type(calls)}, not a list")
    tool_calls = tuple(
        call for n, item in enumerate(calls or []) if (call := _tool_call(item, n)) is not None
    )
    model = data.get("model")
    return ModelReply(
        content=content,
        tool_calls=tool_calls,
        usage=_usage(data.get("usage")),
        finish_reason=finish_reason,
        model=model if isinstance(model, str) else None,
        attempts=attempts,
        refusal=refusal,
    )


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"


def _content(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, dict) for part in value):
        texts = [part.get("text") for part in value if part.get("type") == "text"]
        if all(isinstance(text, str) for text in texts):
            return "".join(str(text) for text in texts)
    raise _NotACompletion(f"`content` is a {_json_type(value)}, not a string")


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _NotACompletion(f"`{where}` is a {_json_type(value)}, not an object")
    return value


def _text(container: dict[str, Any], key: str) -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise _NotACompletion(f"`{key}` is a {_json_type(value)}, not a string")
    return value


def _tool_call(item: object, index: int) -> ToolCall | None:
    """One function call; a call of another type (a custom tool) has no ``function``
    and is left out, as before."""
    call = _object(item, f"tool_calls[{index}]")
    if call.get("function") is None and call.get("type") not in (None, "function"):
        return None
    function = _object(call.get("function"), f"tool_calls[{index}].function")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise _NotACompletion(f"`tool_calls[{index}].function.name` is not a name")
    arguments = function.get("arguments")
    if isinstance(arguments, dict):  # some servers send the object itself
        arguments = json.dumps(arguments, ensure_ascii=False)
    if arguments is not None and not isinstance(arguments, str):
        raise _NotACompletion(f"`tool_calls[{index}].function.arguments` is not a string")
    call_id = call.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise _NotACompletion(f"`tool_calls[{index}].id` is not a string")
    return ToolCall(call_id or f"call_{index}", name, arguments or "")


def _usage(usage: object) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("prompt_tokens_details")
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        cached_tokens=_count(details.get("cached_tokens")) if isinstance(details, dict) else 0,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
