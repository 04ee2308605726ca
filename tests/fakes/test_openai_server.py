"""The fake OpenAI server, checked through the real ``openai`` SDK over real HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.fakes.openai_server import (
    Call,
    Dynamic,
    Error,
    FakeOpenAI,
    Hang,
    Mangled,
    Raw,
    Text,
    ToolCalls,
    Usage,
)

SYSTEM = "You are mnemo. Memory snapshot: §user likes tea"
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "memory",
            "description": "Edit curated memory.",
            "parameters": {
                "type": "object",
                "properties": {"action": {"type": "string"}, "content": {"type": "string"}},
                "required": ["action"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "session_search",
            "description": "Search past sessions.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    },
]
MEMORY_ARGS = {"action": "add", "target": "user", "content": "Prefers metric units — «mm»"}
SEARCH_ARGS = {"query": "VPN config"}


def _messages(*user_turns: str) -> list[Any]:
    return [{"role": "system", "content": SYSTEM}] + [
        {"role": "user", "content": turn} for turn in user_turns
    ]


def _client(server: FakeOpenAI, *, max_retries: int = 0, timeout: float = 10.0) -> AsyncOpenAI:
    # Strict validation makes the SDK check every answer against its pydantic models.
    return AsyncOpenAI(
        base_url=server.base_url,
        api_key="test",
        max_retries=max_retries,
        timeout=timeout,
        _strict_response_validation=True,
    )


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def client(server: FakeOpenAI) -> AsyncIterator[AsyncOpenAI]:
    async with _client(server) as opened:
        yield opened


# -- plain answers ---------------------------------------------------------------------------


async def test_text_round_trip_with_usage(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    usage = Usage(prompt_tokens=120, completion_tokens=7, cached_tokens=96)
    server.script(Text("hello", usage=usage))

    completion = await client.chat.completions.create(model="m-1", messages=_messages("hi"))

    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert completion.object == "chat.completion"
    assert completion.model == "m-1"
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == "hello"
    assert choice.message.tool_calls is None
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 120
    assert completion.usage.completion_tokens == 7
    assert completion.usage.total_tokens == 127
    assert completion.usage.prompt_tokens_details is not None
    assert completion.usage.prompt_tokens_details.cached_tokens == 96


async def test_usage_without_cached_tokens_omits_the_details(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(Text("x", usage=Usage(prompt_tokens=10, completion_tokens=2)))
    completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.usage is not None
    assert completion.usage.prompt_tokens_details is None
    assert completion.usage.total_tokens == 12


async def test_estimated_usage_imitates_prefix_caching(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    first = _messages("what did I say about tea?")
    await client.chat.completions.create(model="m", messages=first, tools=TOOLS)
    second = [*first, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and?"}]
    completion = await client.chat.completions.create(model="m", messages=second, tools=TOOLS)

    def prompt_text(messages: list[Any]) -> str:
        def compact(value: Any) -> str:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

        return compact(TOOLS) + compact(messages)

    first_text, second_text = prompt_text(first), prompt_text(second)
    # The two prompts share everything up to the closing bracket of the first message list.
    shared = len(first_text) - 1
    assert second_text[:shared] == first_text[:shared] != second_text[: shared + 1]
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == len(second_text) // 4
    assert completion.usage.completion_tokens == 1  # max(1, len("ok") // 4)
    assert completion.usage.prompt_tokens_details is not None
    assert completion.usage.prompt_tokens_details.cached_tokens == shared // 4

    # A different system prompt breaks the prefix right after the tools.
    changed = [{"role": "system", "content": "another prompt"}, *second[1:]]
    completion = await client.chat.completions.create(model="m", messages=changed, tools=TOOLS)
    assert completion.usage is not None and completion.usage.prompt_tokens_details is not None
    tools_json = json.dumps(TOOLS, ensure_ascii=False, separators=(",", ":"))
    shared_prefix = tools_json + '[{"role":"system","content":"'
    assert prompt_text(changed).startswith(shared_prefix + "another")
    assert completion.usage.prompt_tokens_details.cached_tokens == len(shared_prefix) // 4


async def test_cache_scope_all_remembers_older_prefixes() -> None:
    async with FakeOpenAI(cache_scope="all") as server, _client(server) as client:
        conversation = _messages("a long enough question about the weather")
        await client.chat.completions.create(model="m", messages=conversation)
        # An unrelated request in between (a background review, say).
        await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "zzz"}]
        )
        completion = await client.chat.completions.create(model="m", messages=conversation)
        assert completion.usage is not None and completion.usage.prompt_tokens_details is not None
        assert (
            completion.usage.prompt_tokens_details.cached_tokens == completion.usage.prompt_tokens
        )


async def test_tool_calls_are_parsed_by_the_sdk(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    server.script(
        ToolCalls(
            [Call("memory", MEMORY_ARGS), Call("session_search", SEARCH_ARGS)],
            usage=Usage(prompt_tokens=50, completion_tokens=20, cached_tokens=0),
        ),
        ToolCalls([Call("memory", '{"broken": ', id="call_custom")], content="thinking"),
    )

    completion = await client.chat.completions.create(
        model="m", messages=_messages("remember"), tools=TOOLS, tool_choice="auto"
    )

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls
    assert calls is not None and len(calls) == 2
    assert [call.id for call in calls] == ["call_1", "call_2"]
    assert [call.type for call in calls] == ["function", "function"]
    assert calls[0].type == "function" and calls[1].type == "function"
    assert calls[0].function.name == "memory"
    assert json.loads(calls[0].function.arguments) == MEMORY_ARGS
    assert calls[1].function.name == "session_search"
    assert json.loads(calls[1].function.arguments) == SEARCH_ARGS
    assert completion.usage is not None and completion.usage.total_tokens == 70

    completion = await client.chat.completions.create(
        model="m", messages=_messages("again"), tools=TOOLS
    )
    message = completion.choices[0].message
    assert message.content == "thinking"
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.id == "call_custom"
    assert call.function.arguments == '{"broken": '  # sent verbatim


# -- streaming ---------------------------------------------------------------------------------


async def test_streaming_text_with_usage_chunk(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    server.script(Text("Hello there, streaming world!", usage=Usage(cached_tokens=3)))

    stream = await client.chat.completions.create(
        model="m",
        messages=_messages("hi"),
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces: list[str] = []
    roles: list[str] = []
    finish_reasons: list[str] = []
    usages = []
    async for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        if chunk.usage is not None:
            assert chunk.choices == []
            usages.append(chunk.usage)
        for choice in chunk.choices:
            if choice.delta.role:
                roles.append(choice.delta.role)
            if choice.delta.content:
                pieces.append(choice.delta.content)
            if choice.finish_reason:
                finish_reasons.append(choice.finish_reason)

    assert "".join(pieces) == "Hello there, streaming world!"
    assert len(pieces) >= 3
    assert roles == ["assistant"]
    assert finish_reasons == ["stop"]
    assert len(usages) == 1
    assert usages[0].prompt_tokens_details is not None
    assert usages[0].prompt_tokens_details.cached_tokens == 3
    assert usages[0].total_tokens == usages[0].prompt_tokens + usages[0].completion_tokens


async def test_streaming_without_include_usage_has_no_usage(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    stream = await client.chat.completions.create(model="m", messages=_messages("hi"), stream=True)
    chunks = [chunk async for chunk in stream]
    assert all(chunk.usage is None for chunk in chunks)
    assert all(chunk.choices for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "ok"


async def test_streaming_tool_calls_rebuilt_from_deltas(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(ToolCalls([Call("memory", MEMORY_ARGS), Call("session_search", SEARCH_ARGS)]))

    stream = await client.chat.completions.create(
        model="m",
        messages=_messages("remember"),
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    calls: dict[int, dict[str, str]] = {}
    fragments = 0
    finish = None
    usage = None
    async for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                slot = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] += delta.id or ""
                if delta.function is not None:
                    slot["name"] += delta.function.name or ""
                    slot["arguments"] += delta.function.arguments or ""
                    fragments += 1

    assert finish == "tool_calls"
    assert sorted(calls) == [0, 1]
    assert calls[0]["id"] == "call_1" and calls[1]["id"] == "call_2"
    assert calls[0]["name"] == "memory" and calls[1]["name"] == "session_search"
    assert json.loads(calls[0]["arguments"]) == MEMORY_ARGS
    assert json.loads(calls[1]["arguments"]) == SEARCH_ARGS
    assert fragments > 4  # arguments really arrive in fragments
    assert usage is not None and usage.prompt_tokens_details is not None


async def test_streaming_accumulated_by_the_sdk_helper(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    # The SDK's own accumulator (used by .stream()) concatenates repeated strings and
    # merges list entries by index, so it is a strict check of the delta format.
    server.script(
        ToolCalls(
            [Call("memory", MEMORY_ARGS), Call("session_search", SEARCH_ARGS)], content="Hm."
        ),
        Text("Done — saved it."),
    )
    async with client.chat.completions.stream(
        model="m",
        messages=_messages("remember"),
        tools=TOOLS,
        stream_options={"include_usage": True},
    ) as stream:
        kinds = {event.type async for event in stream}
        final = await stream.get_final_completion()
    assert {"content.delta", "tool_calls.function.arguments.done", "chunk"} <= kinds
    message = final.choices[0].message
    assert message.role == "assistant"
    assert message.content == "Hm."
    assert message.tool_calls is not None
    assert [c.id for c in message.tool_calls] == ["call_1", "call_2"]
    assert [c.function.name for c in message.tool_calls] == ["memory", "session_search"]
    assert json.loads(message.tool_calls[0].function.arguments) == MEMORY_ARGS
    assert json.loads(message.tool_calls[1].function.arguments) == SEARCH_ARGS
    assert final.choices[0].finish_reason == "tool_calls"
    assert final.usage is not None and final.usage.prompt_tokens > 0

    async with client.chat.completions.stream(model="m", messages=_messages("and?")) as stream:
        final = await stream.get_final_completion()
    assert final.choices[0].message.content == "Done — saved it."
    assert final.choices[0].message.tool_calls is None
    assert final.usage is None  # include_usage was not asked for


async def test_answers_have_exact_content_types(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    raw = await client.chat.completions.with_raw_response.create(
        model="m", messages=_messages("hi")
    )
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["x-request-id"]
    assert raw.parse().choices[0].message.content == "ok"

    server.script(Error(429))
    with pytest.raises(openai.RateLimitError) as caught:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert caught.value.response.headers["content-type"] == "application/json"

    async with client.chat.completions.with_streaming_response.create(
        model="m", messages=_messages("hi"), stream=True
    ) as response:
        assert response.headers["content-type"] == "text/event-stream"
        body = (await response.read()).decode()
    assert body.endswith("data: [DONE]\n\n")


# -- broken endpoints and unusual answers ------------------------------------------------------

LOGIN_PAGE = "<!doctype html>\n<html><body><h1>Sign in to the proxy</h1></body></html>"


def _no_choices(payload: dict[str, Any]) -> None:
    del payload["choices"]


def _number_content(payload: dict[str, Any]) -> None:
    payload["choices"][0]["message"]["content"] = 42


async def test_raw_bodies_are_served_verbatim_with_their_content_type(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    cases: list[tuple[Raw, str, bytes]] = [
        (Raw(LOGIN_PAGE, "text/html; charset=utf-8"), "text/html; charset=utf-8",
         LOGIN_PAGE.encode()),
        (Raw('{"id": "x", "choices": [', "application/json"), "application/json",
         b'{"id": "x", "choices": ['),
        (Raw({"object": "list", "data": []}), "application/json",
         b'{"object": "list", "data": []}'),
        (Raw(b"\x00\xffbinary"), "text/plain", b"\x00\xffbinary"),
        (Raw("gone", status=410, headers={"x-proxy": "squid"}), "text/plain", b"gone"),
    ]  # fmt: skip
    server.script(*(raw for raw, _, _ in cases))
    for raw, content_type, body in cases:
        if raw.status != 200:
            with pytest.raises(openai.APIStatusError) as caught:
                await client.chat.completions.create(model="m", messages=_messages("hi"))
            response = caught.value.response
        else:
            answer = await client.chat.completions.with_raw_response.create(
                model="m", messages=_messages("hi"), stream=False
            )
            response = answer.http_response
        assert response.status_code == raw.status
        assert response.headers["content-type"] == content_type
        assert response.content == body
    assert response.headers["x-proxy"] == "squid"
    # a raw body ignores "stream": a broken proxy does not speak SSE either
    server.script(Raw(LOGIN_PAGE, "text/html"))
    async with client.chat.completions.with_streaming_response.create(
        model="m", messages=_messages("hi"), stream=True
    ) as streamed:
        assert streamed.headers["content-type"] == "text/html"
        assert (await streamed.read()).decode() == LOGIN_PAGE


async def test_mangled_completions_start_from_the_faithful_one(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(
        Mangled(Text("hi"), _no_choices),
        Mangled(Text("hi"), lambda payload: {**payload, "choices": []}),
        Mangled(Text("hi"), _number_content),
    )
    bodies = []
    for _ in range(3):
        answer = await client.chat.completions.with_raw_response.create(
            model="m-1", messages=_messages("hi")
        )
        assert answer.headers["content-type"] == "application/json"
        bodies.append(json.loads(answer.content))
    assert "choices" not in bodies[0]
    assert bodies[0]["object"] == "chat.completion" and bodies[0]["model"] == "m-1"
    assert bodies[0]["usage"]["prompt_tokens"] > 0 and bodies[0]["id"].startswith("chatcmpl-")
    assert bodies[1]["choices"] == []
    assert bodies[2]["choices"][0]["message"]["content"] == 42
    assert bodies[2]["choices"][0]["finish_reason"] == "stop"


async def test_what_the_sdk_makes_of_a_broken_body(server: FakeOpenAI) -> None:
    """Found by experiment (openai 3.x), and what agent_core/models/openai.py guards against:
    without strict validation (the SDK's default) a non-JSON 200 comes back as a *str*, an
    invalid JSON body raises a plain ``json.JSONDecodeError`` (no ``openai`` error at all),
    and a JSON object of the wrong shape is built unchecked (``choices`` None, or a number
    for ``content``). Strict validation raises ``APIResponseValidationError`` instead."""
    server.script(
        Raw(LOGIN_PAGE, "text/html"),
        Raw('{"choices": [', "application/json"),
        Mangled(Text("hi"), _no_choices),
        Mangled(Text("hi"), _number_content),
        Raw("null", "application/json"),
    )
    async with AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0) as loose:
        # Each is typed ChatCompletion (and its fields str, list): the SDK's annotation is
        # what this test shows to be wrong, so the results are read as what they are.
        page: object = await loose.chat.completions.create(model="m", messages=_messages("hi"))
        assert page == LOGIN_PAGE
        with pytest.raises(json.JSONDecodeError):
            await loose.chat.completions.create(model="m", messages=_messages("hi"))
        shapeless: Any = await loose.chat.completions.create(model="m", messages=_messages("hi"))
        assert shapeless.choices is None
        numeric: Any = await loose.chat.completions.create(model="m", messages=_messages("hi"))
        assert numeric.choices[0].message.content == 42
        nothing: object = await loose.chat.completions.create(model="m", messages=_messages("hi"))
        assert nothing is None
    server.script(Raw(LOGIN_PAGE, "text/html"), Mangled(Text("hi"), _no_choices))
    async with _client(server) as strict:
        for _ in range(2):
            with pytest.raises(openai.APIResponseValidationError):
                await strict.chat.completions.create(model="m", messages=_messages("hi"))


async def test_refusals_and_other_finish_reasons_are_valid_completions(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(
        Text(None, refusal="I can't help with that."),
        Text("Partial answ", finish_reason="length"),
        Text("", finish_reason="content_filter"),
        Text(""),
    )
    seen = []
    for _ in range(4):  # strict validation: every one is a well-formed chat completion
        completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
        choice = completion.choices[0]
        seen.append((choice.message.content, choice.message.refusal, choice.finish_reason))
    assert seen == [
        (None, "I can't help with that.", "stop"),
        ("Partial answ", None, "length"),
        ("", None, "content_filter"),
        ("", None, "stop"),
    ]
    server.script(Text(None, refusal="No."))
    stream = await client.chat.completions.create(model="m", messages=_messages("hi"), stream=True)
    chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.refusal or "" for c in chunks) == "No."
    assert all(not c.choices[0].delta.content for c in chunks)


# -- errors, retries, timeouts -----------------------------------------------------------------


async def test_429_raises_rate_limit_error_without_retries(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(Error(429, headers={"retry-after": "0.01"}))
    with pytest.raises(openai.RateLimitError) as caught:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    error = caught.value
    assert error.status_code == 429
    assert error.code == "rate_limit_exceeded"
    assert error.type == "requests"
    # The SDK unwraps {"error": {...}} into .body.
    assert isinstance(error.body, dict) and error.body["code"] == "rate_limit_exceeded"
    assert error.response.headers["retry-after"] == "0.01"
    assert server.request_count == 1


async def test_429_is_retried_by_the_sdk(server: FakeOpenAI) -> None:
    server.script(
        Error(429, headers={"retry-after": "0.01"}),
        Error(429, headers={"retry-after-ms": "10"}),
        Text("finally"),
    )
    async with _client(server, max_retries=2) as client:
        completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.choices[0].message.content == "finally"
    assert server.request_count == 3
    assert [r.retry_count for r in server.requests] == [0, 1, 2]
    assert len(set(server.raw_bodies)) == 1  # every attempt sent the same bytes


async def test_retries_run_out(server: FakeOpenAI) -> None:
    server.fail_next(3, status=429)
    async with _client(server, max_retries=2) as client:
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert server.request_count == 3


async def test_retry_after_beyond_two_minutes_is_not_retried(server: FakeOpenAI) -> None:
    server.script(Error(429, headers={"retry-after": "121"}))
    async with _client(server, max_retries=2) as client:
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert server.request_count == 1


async def test_x_should_retry_false_is_obeyed(server: FakeOpenAI) -> None:
    server.script(Error(503, headers={"x-should-retry": "false"}))
    async with _client(server, max_retries=2) as client:
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert server.request_count == 1


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_5xx_raises_internal_server_error(
    server: FakeOpenAI, client: AsyncOpenAI, status: int
) -> None:
    server.script(Error(status))
    with pytest.raises(openai.InternalServerError) as caught:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert caught.value.status_code == status
    assert caught.value.type == "server_error"


async def test_fail_next_goes_ahead_of_the_script(server: FakeOpenAI) -> None:
    server.script(Text("after the failures"))
    server.fail_next(2)
    assert server.pending == 3
    async with _client(server, max_retries=2) as client:
        completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.choices[0].message.content == "after the failures"
    assert server.request_count == 3
    assert server.pending == 0


async def test_custom_error_bodies(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    server.script(
        Error(400, message="context_length_exceeded", code="context_length_exceeded"),
        Error(404, body={"detail": "no such route"}),
        Error(502, body="<html>bad gateway</html>"),
    )
    with pytest.raises(openai.BadRequestError) as bad:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert bad.value.code == "context_length_exceeded"
    assert "context_length_exceeded" in str(bad.value)

    with pytest.raises(openai.NotFoundError) as missing:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert missing.value.body == {"detail": "no such route"}

    with pytest.raises(openai.InternalServerError) as gateway:
        await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert gateway.value.body == "<html>bad gateway</html>"


async def test_hang_trips_the_client_timeout(server: FakeOpenAI) -> None:
    server.script(Hang(5))
    async with _client(server, timeout=0.2) as client:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(model="m", messages=_messages("hi"))
        assert time.monotonic() - started < 2
    assert server.request_count == 1


async def test_timeouts_are_retried_by_the_sdk(server: FakeOpenAI) -> None:
    server.script(Hang(5, then=Text("too late")), Text("second attempt"))
    async with _client(server, max_retries=1, timeout=0.2) as client:
        completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.choices[0].message.content == "second attempt"
    assert server.request_count == 2


async def test_short_hang_answers_with_the_next_reply(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    server.script(Hang(0.05), Text("after a pause"), Text("later"))
    completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.choices[0].message.content == "after a pause"
    assert server.pending == 1


async def test_api_key_is_checked_when_configured() -> None:
    async with FakeOpenAI(api_key="right") as server, _client(server) as client:
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="m", messages=_messages("hi"))
        assert server.requests[0].headers["authorization"] == "Bearer test"


async def test_invalid_requests_get_400(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    server.script(Text("never used"))
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(model="m", messages=[])
    assert server.pending == 1  # a rejected request consumes no reply


# -- recording, default, dynamic, models ---------------------------------------------------------


async def test_requests_are_recorded_exactly(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    await client.chat.completions.create(
        model="m", messages=_messages("one"), tools=TOOLS, temperature=0.2, max_tokens=50
    )
    await client.chat.completions.create(
        model="m", messages=_messages("one", "two"), tools=TOOLS, temperature=0.2
    )

    assert server.request_count == 2 == len(server.raw_bodies)
    first, second = server.requests
    assert first.method == "POST" and first.path == "/v1/chat/completions"
    assert first.body == json.loads(server.raw_bodies[0])
    assert first.raw == server.raw_bodies[0]
    assert first.body["temperature"] == 0.2 and first.body["max_tokens"] == 50
    assert first.headers["authorization"] == "Bearer test"
    assert first.headers["content-type"] == "application/json"
    # System prompt and tools are byte-identical across requests (what prefix caches need).
    assert json.dumps(first.messages[0]) == json.dumps(second.messages[0])
    assert json.dumps(first.tools) == json.dumps(second.tools) == json.dumps(TOOLS)
    assert first.messages[0]["content"] == SYSTEM  # non-ASCII survived the trip
    assert second.messages[-1] == {"role": "user", "content": "two"}


async def test_default_reply_when_the_script_is_empty(
    server: FakeOpenAI, client: AsyncOpenAI
) -> None:
    completion = await client.chat.completions.create(model="m", messages=_messages("hi"))
    assert completion.choices[0].message.content == "ok"
    server.default = Text("custom default")
    server.script(Text("scripted"))
    contents = [
        (await client.chat.completions.create(model="m", messages=_messages("hi")))
        .choices[0]
        .message.content
        for _ in range(3)
    ]
    assert contents == ["scripted", "custom default", "custom default"]


async def test_dynamic_replies_see_the_request(server: FakeOpenAI, client: AsyncOpenAI) -> None:
    seen: list[dict[str, Any]] = []

    def echo(request: dict[str, Any]) -> Text:
        seen.append(request)
        return Text(f"you said: {request['messages'][-1]['content']}")

    async def call_if_asked(request: dict[str, Any]) -> Text | ToolCalls:
        await asyncio.sleep(0)
        if "search" in request["messages"][-1]["content"]:
            return ToolCalls([Call("session_search", {"query": "x"})])
        return Text("no tool")

    server.script(Dynamic(echo), Dynamic(call_if_asked), Dynamic(call_if_asked))
    completion = await client.chat.completions.create(model="m", messages=_messages("ping"))
    assert completion.choices[0].message.content == "you said: ping"
    assert seen[0]["model"] == "m"

    completion = await client.chat.completions.create(model="m", messages=_messages("search!"))
    assert completion.choices[0].message.tool_calls is not None
    completion = await client.chat.completions.create(model="m", messages=_messages("plain"))
    assert completion.choices[0].message.content == "no tool"


async def test_a_failing_dynamic_reply_is_reported() -> None:
    def broken(request: dict[str, Any]) -> Text:
        raise KeyError("oops")

    async def run() -> None:
        async with FakeOpenAI() as server, _client(server, max_retries=2) as client:
            server.script(Dynamic(broken))
            with pytest.raises(openai.InternalServerError):
                await client.chat.completions.create(model="m", messages=_messages("hi"))
            assert server.request_count == 1  # x-should-retry: false stopped the retries
            assert isinstance(server.handler_errors[0], KeyError)

    with pytest.raises(RuntimeError, match="failed to answer"):
        await run()


async def test_models_endpoint_and_unknown_paths() -> None:
    async with FakeOpenAI(models=["a", "b"]) as server, _client(server) as client:
        page = await client.models.list()
        assert [model.id for model in page.data] == ["a", "b"]
        with pytest.raises(openai.NotFoundError):
            await client.embeddings.create(model="e", input="x")
        assert [r.path for r in server.all_requests] == ["/v1/models", "/v1/embeddings"]
        assert server.requests == []


# -- lifecycle -------------------------------------------------------------------------------


async def test_exit_is_prompt_and_leaves_nothing_running() -> None:
    before = asyncio.all_tasks()
    async with FakeOpenAI() as server, _client(server, timeout=30) as client:
        arrived = asyncio.Event()

        def hang(request: dict[str, Any]) -> Hang:
            arrived.set()
            return Hang(30, then=Text("woken by shutdown"))

        server.script(Dynamic(hang))
        pending = asyncio.ensure_future(
            client.chat.completions.create(model="m", messages=_messages("hi"))
        )
        await asyncio.wait_for(arrived.wait(), timeout=5)
        started = time.monotonic()
        await server.close()  # wakes the hang; the answer still goes out
        assert time.monotonic() - started < 2
        completion = await pending
        assert completion.choices[0].message.content == "woken by shutdown"
        with pytest.raises(RuntimeError, match="not running"):
            _ = server.base_url
    await asyncio.sleep(0)
    assert asyncio.all_tasks() == before
    with pytest.raises(ConnectionRefusedError):  # the port is closed
        await asyncio.open_connection("127.0.0.1", server._port or 0)


async def test_stream_delay_and_client_abandoning_a_stream(server: FakeOpenAI) -> None:
    server.stream_delay = 0.01
    server.script(Text("x" * 200))
    async with _client(server) as client:
        stream = await client.chat.completions.create(
            model="m", messages=_messages("hi"), stream=True
        )
        async for _chunk in stream:
            break
        await stream.close()
        completion = await client.chat.completions.create(model="m", messages=_messages("again"))
    assert completion.choices[0].message.content == "ok"
