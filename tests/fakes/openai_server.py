"""A loopback fake of an OpenAI-compatible Chat Completions server.

Tests start it on 127.0.0.1 and point the real ``openai`` SDK at it, so requests and
answers cross real HTTP and are parsed by the SDK's own code (models, SSE decoder, retry
loop, error mapping)::

    async with FakeOpenAI() as server, AsyncOpenAI(
        base_url=server.base_url, api_key="test", max_retries=0
    ) as client:
        server.script(Text("hi"), ToolCalls([Call("memory", {"action": "add"})]))
        ...
        assert server.requests[0].body["messages"][0]["role"] == "system"

Endpoints: ``POST /v1/chat/completions`` (JSON or, with ``"stream": true``, server-sent
events) and ``GET /v1/models``. Anything else answers 404 with an OpenAI-style error body.

Scripting: :meth:`FakeOpenAI.script` queues replies, consumed one per chat request in arrival
order; when the queue is empty :attr:`FakeOpenAI.default` answers. A reply is :class:`Text`,
:class:`ToolCalls`, :class:`Error`, :class:`Hang`, :class:`Dynamic`, or one of the two broken
answers below.

Broken endpoints. A proxy, a captive portal or a half-compatible server may answer 200 with
something that is not a chat completion. :class:`Raw` serves a body verbatim with the status
and content type given (an HTML page as ``text/html``, a truncated body as
``application/json``); :class:`Mangled` builds the faithful completion of a :class:`Text` or
:class:`ToolCalls` and sends, as ``application/json``, whatever its ``edit`` makes of it (no
``choices``, empty ``choices``, a number for ``content``…). A :class:`Text` may also carry a
``refusal`` (with ``content=None``, as OpenAI sends one), another ``finish_reason``
(``"length"``, ``"content_filter"``) or empty content.

Usage. Every successful answer carries ``usage`` (``prompt_tokens``, ``completion_tokens``,
``total_tokens``). Figures given in a reply's :class:`Usage` are used as they are; missing ones
are estimated deterministically from the *prompt text*, which is the compact JSON
(``separators=(",", ":")``, ``ensure_ascii=False``, keys in the order the client sent them) of
the request's ``tools`` (when present) followed by that of its ``messages``:

- ``prompt_tokens = len(prompt_text) // 4`` (at least 1);
- ``completion_tokens = len(content + every call's name and arguments) // 4`` (at least 1);
- ``cached_tokens = len(longest common prefix of prompt_text and an earlier prompt text) // 4``,
  imitating a provider's prefix cache. The earlier prompt is the previous *successfully
  answered* chat request (``cache_scope="previous"``, the default) or the best of all of them
  (``cache_scope="all"``, closer to a real cache holding several prefixes). Errors and hangs
  that never answered do not enter the cache.

``usage.prompt_tokens_details.cached_tokens`` is present when the reply gives
``cached_tokens`` or when no :class:`Usage` is given at all (then it is the estimate); a
:class:`Usage` without ``cached_tokens`` omits ``prompt_tokens_details``, like providers that
do not report caching.

Streaming follows OpenAI's wire format exactly as the SDK's accumulator expects: the first
chunk's delta carries ``role`` (and only that chunk: the SDK *concatenates* repeated strings),
content arrives in pieces of :attr:`FakeOpenAI.stream_chunk_chars` characters, each tool call
opens with ``index``/``id``/``type``/``function.name`` and an empty ``arguments`` and then
streams argument fragments under the same ``index``; a last choice chunk carries
``finish_reason``; with ``stream_options.include_usage`` every chunk has ``"usage": null`` and a
final chunk with ``"choices": []`` carries the usage; then ``data: [DONE]``.

Bounded: no task of its own outlives the ``async with``; leaving it wakes any :class:`Hang`,
closes the listening socket and every connection, and waits at most ``shutdown_timeout``
for in-flight handlers. A reply that itself fails (a :class:`Dynamic` function raising, a
non-reply returned) answers 500 with ``x-should-retry: false``, is kept in
:attr:`FakeOpenAI.handler_errors`, and is re-raised when the ``async with`` exits normally, so
a broken script cannot pass silently.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import itertools
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from aiohttp import web

from tests.fakes.loopback import LoopbackServer, serve

__all__ = [
    "Call",
    "Dynamic",
    "Error",
    "FakeOpenAI",
    "Hang",
    "Mangled",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Text",
    "ToolCalls",
    "Usage",
]

DEFAULT_MODEL = "fake-model"
_MAX_BODY_BYTES = 64 * 1024 * 1024
_MAX_RESOLVE_STEPS = 32


# -- replies -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Token figures for a reply; ``None`` fields are estimated (``cached_tokens``: omitted)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass(frozen=True)
class Text:
    """An assistant message with ``content`` (``None`` sends ``null``) and ``refusal``
    (``null`` unless given); ``finish_reason`` defaults to ``"stop"``."""

    content: str | None
    usage: Usage | None = None
    finish_reason: str = "stop"
    refusal: str | None = None


@dataclass(frozen=True)
class Call:
    """One function tool call. A ``str`` ``arguments`` is sent verbatim (even if not JSON);
    a mapping is JSON-encoded. ``id`` defaults to ``call_<n>``, n counting per server."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """An assistant message with ``tool_calls`` (and optional ``content``)."""

    calls: Sequence[Call]
    content: str | None = None
    usage: Usage | None = None
    finish_reason: str = "tool_calls"


@dataclass(frozen=True)
class Error:
    """An HTTP error answer.

    ``body`` is sent verbatim: a mapping as ``application/json``, a ``str`` as ``text/plain``
    (an HTML page from a proxy, say). Without ``body`` the OpenAI shape is built:
    ``{"error": {"message", "type", "param": null, "code"}}`` with defaults by status.
    ``headers`` are added to the answer (``retry-after``, ``retry-after-ms``,
    ``x-should-retry`` steer the SDK's retries).
    """

    status: int = 500
    body: Mapping[str, Any] | str | None = None
    headers: Mapping[str, str] | None = None
    message: str | None = None
    type: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class Raw:
    """A body sent verbatim, whatever the request asked for (``"stream": true`` included).

    A ``str`` or ``bytes`` body goes out as it is, with ``content_type`` (default
    ``text/plain``); any other value is JSON-encoded, with ``content_type`` defaulting to
    ``application/json``.
    """

    body: Any
    content_type: str | None = None
    status: int = 200
    headers: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Mangled:
    """The completion ``reply`` would have been (id, usage, choices…, as a dict), passed
    through ``edit``, whose result is sent as JSON with status 200. ``edit`` gets a copy it
    may change in place; returning ``None`` sends that copy."""

    reply: Text | ToolCalls
    edit: Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` before answering (to trip client timeouts).

    The answer is ``then`` when given; otherwise the *next* scripted reply, taken from the
    queue as the request arrives (so a retry sent during the wait gets the one after it), or
    the default when the queue is empty. If the client gives up first the answer is dropped.
    """

    seconds: float
    then: Reply | None = None


@dataclass(frozen=True)
class Dynamic:
    """``fn(request_json)`` computes the reply (may be async; may return any reply)."""

    fn: Callable[[dict[str, Any]], Reply | Awaitable[Reply]]


Reply: TypeAlias = Text | ToolCalls | Error | Raw | Mangled | Hang | Dynamic
_Final: TypeAlias = Text | ToolCalls | Error | Raw | Mangled
_REPLY_TYPES = (Text, ToolCalls, Error, Raw, Mangled, Hang, Dynamic)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received: ``headers`` with lower-case names, ``raw`` body bytes and
    ``body``, the parsed JSON (``None`` when absent or not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return tools if isinstance(tools, list) else None

    @property
    def retry_count(self) -> int:
        """The SDK's ``x-stainless-retry-count`` header (0 on a first attempt)."""
        return int(self.headers.get("x-stainless-retry-count", "0"))


# -- the server ----------------------------------------------------------------------------


class FakeOpenAI(LoopbackServer):
    """The fake server; ``async with FakeOpenAI() as server:`` runs it on an ephemeral port."""

    name = "the fake OpenAI server"

    def __init__(
        self,
        *,
        default: Reply | None = None,
        models: Sequence[str] = (DEFAULT_MODEL,),
        api_key: str | None = None,
        stream_chunk_chars: int = 4,
        stream_delay: float = 0.0,
        cache_scope: Literal["previous", "all"] = "previous",
        shutdown_timeout: float = 2.0,
    ) -> None:
        if stream_chunk_chars < 1:
            raise ValueError("stream_chunk_chars must be at least 1")
        self.default: Reply = default if default is not None else Text("ok")
        self.models = list(models)
        self.api_key = api_key  # when set, other bearer tokens get 401
        self.stream_chunk_chars = stream_chunk_chars
        self.stream_delay = stream_delay  # seconds slept between stream chunks
        self.cache_scope: Literal["previous", "all"] = cache_scope
        self.requests: list[RecordedRequest] = []  # POST /v1/chat/completions, in order
        self.raw_bodies: list[bytes] = []  # their raw bodies, same order
        self.all_requests: list[RecordedRequest] = []  # every request, any path
        self.handler_errors: list[BaseException] = []
        self._queue: deque[Reply] = deque()
        self._prompts: list[str] = []  # prompt texts of successfully answered requests
        self._call_ids = itertools.count(1)
        self._answer_ids = itertools.count(1)
        self._shutdown_timeout = shutdown_timeout
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("FakeOpenAI is already running")
        app = web.Application(client_max_size=_MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._list_models)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        runner, self._port = await serve(app, shutdown_timeout=self._shutdown_timeout)
        self._closing.clear()
        self._runner = runner

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._closing.set()  # wake every Hang so shutdown does not wait for it
        await runner.cleanup()

    @property
    def port(self) -> int:
        if self._port is None or self._runner is None:
            raise RuntimeError("FakeOpenAI is not running")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, what ``AsyncOpenAI(base_url=...)`` wants."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies, consumed one per chat request in arrival order."""
        for reply in replies:
            if not isinstance(reply, _REPLY_TYPES):
                raise TypeError(f"not a reply: {reply!r}")
        self._queue.extend(replies)

    def fail_next(
        self,
        n: int = 1,
        status: int = 500,
        *,
        retry_after: float | None = 0.01,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Make the next ``n`` chat requests fail with ``status``, ahead of the script.

        ``retry_after`` (seconds; ``None`` to omit) sets ``retry-after`` so SDK retries are
        quick; without it the SDK backs off 0.5 s, 1 s, ... per retry.
        """
        extra = dict(headers or {})
        if retry_after is not None:
            extra.setdefault("retry-after", format(retry_after, "g"))
        self._queue.extendleft(Error(status=status, headers=extra) for _ in range(n))

    @property
    def pending(self) -> int:
        """Scripted replies not consumed yet."""
        return len(self._queue)

    @property
    def request_count(self) -> int:
        """Chat completion requests received (retries included)."""
        return len(self.requests)

    def _next_reply(self) -> Reply:
        return self._queue.popleft() if self._queue else self.default

    # -- handlers ----------------------------------------------------------------------

    async def _record(self, request: web.Request) -> RecordedRequest:
        raw = await request.read()
        body: Any = None
        if raw:
            with contextlib.suppress(ValueError):
                body = json.loads(raw)
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            headers={name.lower(): value for name, value in request.headers.items()},
            raw=raw,
            body=body,
        )
        self.all_requests.append(recorded)
        return recorded

    def _unauthorized(self, recorded: RecordedRequest) -> web.Response | None:
        if self.api_key is None:
            return None
        if recorded.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        return self._error_response(
            Error(
                401,
                message="Incorrect API key provided.",
                type="invalid_request_error",
                code="invalid_api_key",
            )
        )

    async def _unknown(self, request: web.Request) -> web.Response:
        await self._record(request)
        return self._error_response(
            Error(404, message=f"Unknown request URL: {request.method} {request.path}.")
        )

    async def _list_models(self, request: web.Request) -> web.Response:
        recorded = await self._record(request)
        if (denied := self._unauthorized(recorded)) is not None:
            return denied
        data = [
            {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
            for name in self.models
        ]
        return self._json_response(200, {"object": "list", "data": data})

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        recorded = await self._record(request)
        self.requests.append(recorded)
        self.raw_bodies.append(recorded.raw)
        if (denied := self._unauthorized(recorded)) is not None:
            return denied
        problem = _invalid_chat_request(recorded.body)
        if problem is not None:
            return self._error_response(Error(400, message=problem, type="invalid_request_error"))
        body: dict[str, Any] = recorded.body

        try:
            reply = await self._resolve(self._next_reply(), body)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.handler_errors.append(exc)
            return self._error_response(
                Error(500, message=f"fake server: the scripted reply failed: {exc!r}"),
                extra_headers={"x-should-retry": "false"},
            )
        if isinstance(reply, Error):
            return self._error_response(reply)
        if isinstance(reply, Raw):
            return _raw_response(reply)
        edit: Callable[[dict[str, Any]], Any] | None = None
        if isinstance(reply, Mangled):
            edit = reply.edit
            reply = reply.reply

        prompt_text = _prompt_text(body)
        usage = self._usage(reply, prompt_text)
        self._prompts.append(prompt_text)
        answer_id = f"chatcmpl-fake-{next(self._answer_ids)}"
        calls = self._wire_calls(reply)
        model = str(body.get("model", DEFAULT_MODEL))
        if body.get("stream") is True and edit is None:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            return await self._stream(
                request,
                answer_id=answer_id,
                model=model,
                reply=reply,
                calls=calls,
                usage=usage if include_usage else None,
            )
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.content,
            "refusal": reply.refusal if isinstance(reply, Text) else None,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = calls
        payload = {
            "id": answer_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
        }
        if edit is not None:
            edited = copy.deepcopy(payload)
            changed = edit(edited)
            return self._json_response(200, edited if changed is None else changed)
        return self._json_response(200, payload)

    async def _resolve(self, reply: Reply, body: dict[str, Any]) -> _Final:
        for _ in range(_MAX_RESOLVE_STEPS):
            if isinstance(reply, Dynamic):
                produced: Any = reply.fn(copy.deepcopy(body))
                if inspect.isawaitable(produced):
                    produced = await produced
                if not isinstance(produced, _REPLY_TYPES):
                    raise TypeError(f"Dynamic function returned {produced!r}, not a reply")
                reply = produced
            elif isinstance(reply, Hang):
                following = reply.then if reply.then is not None else self._next_reply()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), timeout=reply.seconds)
                reply = following
            elif isinstance(reply, Text | ToolCalls | Error | Raw | Mangled):
                return reply
            else:
                raise TypeError(f"not a reply: {reply!r}")
        raise RuntimeError(f"replies nest more than {_MAX_RESOLVE_STEPS} deep")

    def _wire_calls(self, reply: Text | ToolCalls) -> list[dict[str, Any]]:
        if isinstance(reply, Text):
            return []
        wire = []
        for call in reply.calls:
            arguments = (
                call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(dict(call.arguments), ensure_ascii=False)
            )
            wire.append(
                {
                    "id": call.id if call.id is not None else f"call_{next(self._call_ids)}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }
            )
        return wire

    def _usage(self, reply: Text | ToolCalls, prompt_text: str) -> dict[str, Any]:
        given = reply.usage
        prompt = given.prompt_tokens if given and given.prompt_tokens is not None else None
        if prompt is None:
            prompt = max(1, len(prompt_text) // 4)
        completion = given.completion_tokens if given else None
        if completion is None:
            completion = max(1, len(_completion_text(reply)) // 4)
        cached = given.cached_tokens if given else self._cached_estimate(prompt_text)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        return usage

    def _cached_estimate(self, prompt_text: str) -> int:
        if not self._prompts:
            return 0
        earlier = self._prompts if self.cache_scope == "all" else self._prompts[-1:]
        return max(_common_prefix_len(prompt_text, other) for other in earlier) // 4

    async def _stream(
        self,
        request: web.Request,
        *,
        answer_id: str,
        model: str,
        reply: Text | ToolCalls,
        calls: list[dict[str, Any]],
        usage: dict[str, Any] | None,
    ) -> web.StreamResponse:
        created = int(time.time())

        def chunk(choices: list[dict[str, Any]], final_usage: Any = None) -> bytes:
            data: dict[str, Any] = {
                "id": answer_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "service_tier": "default",
                "system_fingerprint": "fp_fake",
                "choices": choices,
            }
            if usage is not None:
                data["usage"] = final_usage
            return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"

        def delta(values: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": values, "logprobs": None, "finish_reason": finish_reason}]

        size = self.stream_chunk_chars
        events: list[bytes] = []
        content = reply.content
        refusal = reply.refusal if isinstance(reply, Text) else None
        events.append(
            chunk(
                delta(
                    {
                        "role": "assistant",
                        "content": "" if content is not None else None,
                        "refusal": None,
                    }
                )
            )
        )
        for piece in _pieces(content or "", size):
            events.append(chunk(delta({"content": piece})))
        for piece in _pieces(refusal or "", size):
            events.append(chunk(delta({"refusal": piece})))
        for index, call in enumerate(calls):
            function = call["function"]
            opening = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": function["name"], "arguments": ""},
            }
            events.append(chunk(delta({"tool_calls": [opening]})))
            for piece in _pieces(function["arguments"], size):
                fragment = {"index": index, "function": {"arguments": piece}}
                events.append(chunk(delta({"tool_calls": [fragment]})))
        events.append(chunk(delta({}, reply.finish_reason)))
        if usage is not None:
            events.append(chunk([], usage))
        events.append(b"data: [DONE]\n\n")

        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "x-request-id": f"req_{answer_id}",
            },
        )
        await response.prepare(request)
        try:
            for position, event in enumerate(events):
                if position and self.stream_delay > 0:
                    await asyncio.sleep(self.stream_delay)
                await response.write(event)
            await response.write_eof()
        except ConnectionError:
            pass  # the client went away mid-stream; nothing left to tell it
        return response

    # -- answers -----------------------------------------------------------------------

    def _json_response(
        self, status: int, payload: Any, extra_headers: Mapping[str, str] | None = None
    ) -> web.Response:
        headers = {
            "Content-Type": "application/json",
            "x-request-id": f"req_fake_{len(self.all_requests)}",
        }
        headers.update(extra_headers or {})
        return web.Response(status=status, body=json.dumps(payload).encode(), headers=headers)

    def _error_response(
        self, error: Error, extra_headers: Mapping[str, str] | None = None
    ) -> web.Response:
        headers = {**(extra_headers or {}), **(error.headers or {})}
        if isinstance(error.body, str):
            headers.setdefault("Content-Type", "text/plain")
            return web.Response(status=error.status, body=error.body.encode(), headers=headers)
        if error.body is not None:
            return self._json_response(error.status, error.body, headers)
        default_type, default_code, default_message = _ERROR_DEFAULTS.get(
            error.status, ("api_error", None, f"HTTP {error.status} from the fake server.")
        )
        payload = {
            "error": {
                "message": error.message if error.message is not None else default_message,
                "type": error.type if error.type is not None else default_type,
                "param": None,
                "code": error.code if error.code is not None else default_code,
            }
        }
        return self._json_response(error.status, payload, headers)


_ERROR_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    408: ("timeout", None, "Request timed out."),
    409: ("invalid_request_error", "conflict", "Conflict."),
    422: ("invalid_request_error", None, "Unprocessable entity."),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again later.",
    ),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


# -- helpers -------------------------------------------------------------------------------


def _invalid_chat_request(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        return "every message must be an object with a 'role'"
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return "'tools' must be an array"
    return None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _prompt_text(body: Mapping[str, Any]) -> str:
    """What the usage estimates measure: tools' JSON (if any), then messages' JSON."""
    tools = body.get("tools")
    return (_compact(tools) if tools else "") + _compact(body["messages"])


def _raw_response(reply: Raw) -> web.Response:
    body = reply.body
    if isinstance(body, str | bytes):
        data = body.encode() if isinstance(body, str) else body
        content_type = "text/plain" if reply.content_type is None else reply.content_type
    else:
        data = json.dumps(body).encode()
        content_type = "application/json" if reply.content_type is None else reply.content_type
    headers = {**(reply.headers or {}), "Content-Type": content_type}
    return web.Response(status=reply.status, body=data, headers=headers)


def _completion_text(reply: Text | ToolCalls) -> str:
    if isinstance(reply, Text):
        return (reply.content or "") + (reply.refusal or "")
    parts = [reply.content or ""]
    for call in reply.calls:
        arguments = call.arguments if isinstance(call.arguments, str) else _compact(call.arguments)
        parts.extend((call.name, arguments))
    return "".join(parts)


def _common_prefix_len(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search on slice equality: C-speed comparisons
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]
