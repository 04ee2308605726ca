"""OpenAIModel over real HTTP: the real openai SDK against the loopback fake server."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict, Unpack

import pytest

from agent_core.agent import Agent, AgentSettings
from agent_core.compress import SUMMARY_INSTRUCTION, CompressionSettings
from agent_core.models import (
    ModelError,
    ModelInvalidResponse,
    ModelRejected,
    ModelUnavailable,
    Usage,
)
from agent_core.models.openai import OpenAIModel, retry_after_seconds
from agent_core.review import REVIEW_INSTRUCTION
from memory import MemoryLimits, MemoryStores
from memory.archive.database import Archive, SessionSpec, new_session_id
from tests.fakes.openai_server import (
    Call,
    Dynamic,
    Error,
    FakeOpenAI,
    Hang,
    Mangled,
    Raw,
    Reply,
    Text,
    ToolCalls,
)
from tests.fakes.openai_server import Usage as WireUsage


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


class Retries(TypedDict, total=False):
    """``OpenAIModel``'s timeout and retry keywords."""

    timeout_s: float
    max_retries: int
    backoff_s: float
    max_backoff_s: float


def model_for(server: FakeOpenAI, delays: list[float], **kw: Unpack[Retries]) -> OpenAIModel:
    async def record(seconds: float) -> None:
        delays.append(seconds)

    return OpenAIModel(
        name="fake-model", base_url=server.base_url, api_key="sk-test",
        sleep=record, rng=lambda: 1.0, **kw,
    )  # fmt: skip


async def test_text_and_usage_with_cached_tokens(server: FakeOpenAI) -> None:
    server.script(Text("hello", usage=WireUsage(120, 4, 100)))
    async with model_for(server, []) as model:
        reply = await model.complete([{"role": "user", "content": "hi"}], [])
    assert reply.content == "hello" and reply.tool_calls == ()
    assert reply.usage == Usage(120, 4, 100) and reply.finish_reason == "stop"
    sent = server.requests[0]
    assert sent.body["model"] == "fake-model" and "tools" not in sent.body
    assert sent.headers["authorization"] == "Bearer sk-test"


async def test_tool_calls_come_back_parsed(server: FakeOpenAI) -> None:
    server.script(
        ToolCalls([Call("memory", {"action": "add", "content": "x"}), Call("noop", "{bad")])
    )
    tools = [{"type": "function", "function": {"name": "memory", "parameters": {"type": "object"}}}]
    async with model_for(server, []) as model:
        reply = await model.complete([{"role": "user", "content": "hi"}], tools)
    assert [c.name for c in reply.tool_calls] == ["memory", "noop"]
    assert json.loads(reply.tool_calls[0].arguments) == {"action": "add", "content": "x"}
    assert reply.tool_calls[1].arguments == "{bad"  # handed on raw; the tool reports it
    assert server.requests[0].body["tools"] == tools


async def test_429_and_5xx_are_retried_with_backoff_honouring_retry_after(
    server: FakeOpenAI,
) -> None:
    server.script(
        Error(429, headers={"retry-after": "1.5"}),
        Error(503),
        Error(500, headers={"retry-after-ms": "250"}),
        Text("finally"),
    )
    delays: list[float] = []
    async with model_for(server, delays, max_retries=4, backoff_s=0.5) as model:
        reply = await model.complete([{"role": "user", "content": "hi"}], [])
    assert reply.content == "finally" and reply.attempts == 4
    assert delays == [1.5, 1.0, 0.25]  # Retry-After, then 0.5·2¹ (jitter at its top), then -ms
    assert server.request_count == 4


async def test_timeouts_are_retried_then_fail_with_a_clear_typed_error(server: FakeOpenAI) -> None:
    server.script(*[Hang(5, then=Text("too late")) for _ in range(3)])
    delays: list[float] = []
    async with model_for(server, delays, max_retries=2, timeout_s=0.2) as model:
        with pytest.raises(
            ModelUnavailable, match="after 3 attempts: the request timed out"
        ) as info:
            await model.complete([{"role": "user", "content": "hi"}], [])
    assert info.value.attempts == 3 and len(delays) == 2


async def test_client_errors_are_not_retried(server: FakeOpenAI) -> None:
    server.script(Error(400, message="messages: bad role"))
    async with model_for(server, [], max_retries=3) as model:
        with pytest.raises(ModelRejected, match=r"\(400\): messages: bad role"):
            await model.complete([{"role": "user", "content": "hi"}], [])
    assert server.request_count == 1


# -- a 2xx that is not a chat completion ----------------------------------------------------

LOGIN_PAGE = (
    "<!DOCTYPE html>\n<html>\n<head><title>Sign in</title></head><body>Proxy login</body></html>"
)


def _message_of(payload: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = payload["choices"][0]["message"]
    return message


BROKEN: dict[str, tuple[Reply, str]] = {
    "html page": (
        Raw(LOGIN_PAGE, "text/html; charset=utf-8"),
        "the endpoint answered, but not with an OpenAI chat completion"
        " (got text/html; charset=utf-8: <!DOCTYPE html> <html> <head><title>Sign in</title>",
    ),
    "invalid json": (
        Raw('{"id": "chatcmpl-1", "choices": [{"message": {"content": "hel', "application/json"),
        "chat completion: invalid JSON (got application/json: {\"id\": \"chatcmpl-1\"",
    ),
    "no choices": (
        Mangled(Text("hi"), lambda p: p.pop("choices") and None),
        'chat completion: no `choices` (got application/json: {"id": "chatcmpl-fake-',
    ),
    "empty choices": (
        Mangled(Text("hi"), lambda p: {**p, "choices": []}),
        "chat completion: `choices` is empty (got application/json:",
    ),
    "choices not a list": (
        Mangled(Text("hi"), lambda p: {**p, "choices": {"0": p["choices"][0]}}),
        "`choices` is a object, not a list",
    ),
    "message missing": (
        Mangled(Text("hi"), lambda p: p["choices"][0].pop("message") and None),
        "`choices[0].message` is a null, not an object",
    ),
    "content a number": (
        Mangled(Text("hi"), lambda p: _message_of(p).update(content=42)),
        "`content` is a number, not a string",
    ),
    "tool calls not a list": (
        Mangled(Text("hi"), lambda p: _message_of(p).update(tool_calls="memory")),
        "`message.tool_calls` is a string, not a list",
    ),
    "tool call without a name": (
        Mangled(ToolCalls([Call("memory", {})]),
                lambda p: _message_of(p)["tool_calls"][0]["function"].pop("name") and None),
        "`tool_calls[0].function.name` is not a name",
    ),
    "finish reason a number": (
        Mangled(Text("hi"), lambda p: p["choices"][0].update(finish_reason=1)),
        "`finish_reason` is a number, not a string",
    ),
    "a json list": (Raw([{"choices": []}]), "a JSON list, not an object"),
    "json null": (Raw("null", "application/json"), "a JSON null, not an object"),
    "empty body": (Raw("", "application/json"),
                   "invalid JSON (got application/json: (empty body))"),
}  # fmt: skip


@pytest.mark.parametrize("mode", list(BROKEN))
async def test_a_2xx_that_is_not_a_chat_completion_is_retried_then_a_typed_error(
    server: FakeOpenAI, mode: str
) -> None:
    reply, expected = BROKEN[mode]
    server.default = reply
    delays: list[float] = []
    async with model_for(server, delays, max_retries=2, backoff_s=0.5) as model:
        with pytest.raises(ModelInvalidResponse) as info:
            await model.complete([{"role": "user", "content": "hi"}], [])
    error = info.value
    assert isinstance(error, ModelError) and error.kind == "invalid_response"
    assert error.attempts == 3 and server.request_count == 3
    assert delays == [0.5, 1.0]  # the same back-off as a 5xx
    assert str(error).startswith("no usable answer from the model after 3 attempts: ")
    assert expected in str(error) and expected in error.reason
    assert str(error).endswith(error.reason)
    assert error.content_type in str(error) and error.excerpt in str(error)
    assert "\n" not in str(error)


async def test_invalid_answers_and_5xx_share_one_retry_budget(server: FakeOpenAI) -> None:
    page = Raw(LOGIN_PAGE, "text/html", headers={"retry-after": "2"})
    server.script(Error(503), page, Text("finally"))
    delays: list[float] = []
    async with model_for(server, delays, max_retries=2) as model:
        reply = await model.complete([{"role": "user", "content": "hi"}], [])
        assert reply.content == "finally" and reply.attempts == 3
        assert delays == [0.5, 2.0]  # back-off, then the proxy's Retry-After
        # the kind is the last attempt's: a page last is invalid, a 503 last unavailable
        server.script(Error(503), Error(503), page)
        with pytest.raises(ModelInvalidResponse):
            await model.complete([{"role": "user", "content": "hi"}], [], max_tokens=5)
        server.script(page, page, Error(503))
        with pytest.raises(ModelUnavailable) as info:
            await model.complete([{"role": "user", "content": "hi"}], [])
    assert info.value.kind == "unavailable" and "server error (503)" in str(info.value)
    assert server.request_count == 9


async def test_the_excerpt_is_one_safe_line_without_secrets(
    server: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    own_key = "local-proxy-key-123"  # not credential-shaped: redacted because it is ours
    openai_key = "sk-proj-" + "A1b2C3d4E5" * 4
    padding = "x" * (200 - len("<p>") - 10)
    body = (
        f"<p>\x1b[31mDenied\x1b[0m\u202e for key {own_key}\r\n\tAuthorization: Bearer"
        f" {openai_key}</p><!-- {padding}{openai_key} -->"
    )
    server.default = Raw(body, "text/html")
    async with OpenAIModel(name="m", base_url=server.base_url, api_key=own_key,
                           max_retries=1, sleep=lambda s: _none([], s)) as model:  # fmt: skip
        with caplog.at_level(logging.WARNING), pytest.raises(ModelInvalidResponse) as info:
            await model.complete([{"role": "user", "content": "hi"}], [])
    error = info.value
    assert own_key not in str(error) and "sk-proj" not in str(error)
    assert error.excerpt.startswith(
        "<p><U+001B>[31mDenied<U+001B>[0m<U+202E> for key [redacted] Authorization: Bearer"
        " [redacted]</p><!-- xxx"
    )
    # cut at 200 characters (the key across the cut is redacted whole, not half shown)
    assert error.excerpt.endswith("…") and "A1b2" not in error.excerpt
    assert all(c.isprintable() for c in str(error))
    [retry] = [r.getMessage() for r in caplog.records if "retry 1/1" in r.getMessage()]
    assert "got text/html: <p><U+001B>[31mDenied" in retry and own_key not in retry


async def test_a_lenient_reading_of_what_compatible_servers_send(server: FakeOpenAI) -> None:
    def bare(payload: dict[str, Any]) -> dict[str, Any]:  # no id, created, object or usage
        message = _message_of(payload)
        return {
            "choices": [
                {
                    "message": {
                        **message,
                        "content": [
                            {"type": "thinking", "thinking": "hmm"},
                            {"type": "text", "text": "Hello"},
                            {"type": "text", "text": " there"},
                        ],
                    },
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": "12", "completion_tokens": None},
        }

    def loose_calls(payload: dict[str, Any]) -> None:
        call = _message_of(payload)["tool_calls"][0]
        call.pop("id")
        call["function"]["arguments"] = {"action": "add"}
        _message_of(payload)["tool_calls"].append({"type": "custom", "custom": {"name": "x"}})

    server.script(Mangled(Text("-"), bare), Mangled(ToolCalls([Call("memory", {})]), loose_calls),
                  Text(None, refusal="I can't help with that."), Raw(json.dumps(
                      {"choices": [{"message": {"content": "plain"}}]}), "text/plain"))  # fmt: skip
    async with model_for(server, []) as model:
        ask = [{"role": "user", "content": "hi"}]
        first = await model.complete(ask, [])
        assert (first.content, first.model, first.usage) == ("Hello there", None, Usage())
        second = await model.complete(ask, [])
        assert [(c.id, c.name, json.loads(c.arguments)) for c in second.tool_calls] == [
            ("call_0", "memory", {"action": "add"})
        ]
        third = await model.complete(ask, [])
        assert (third.content, third.refusal) == (None, "I can't help with that.")
        fourth = await model.complete(ask, [])
        assert fourth.content == "plain" and fourth.finish_reason is None
    assert server.request_count == 4  # none of these was retried


async def test_an_html_error_page_is_one_safe_line_too(server: FakeOpenAI) -> None:
    page = "<html>\n<body>\n<h1>502 Bad Gateway</h1>\nkey sk-live-" + "Z9" * 15 + "\n</body></html>"
    server.script(Error(502, body=page), Error(403, body=page))
    async with model_for(server, [], max_retries=0) as model:
        with pytest.raises(ModelUnavailable) as down:
            await model.complete([{"role": "user", "content": "hi"}], [])
        with pytest.raises(ModelRejected) as refused:
            await model.complete([{"role": "user", "content": "hi"}], [])
    for error in (down.value, refused.value):
        assert "\n" not in str(error) and "Z9Z9" not in str(error)
        assert "got text/plain: <html> <body> <h1>502 Bad Gateway</h1> key [redacted]" in str(error)
    assert str(down.value).startswith("the model did not answer after 1 attempt: server error")
    assert str(refused.value).startswith("the model endpoint refused the request (403): got")


async def test_connection_refused_is_unavailable() -> None:
    async with FakeOpenAI() as gone:
        url = gone.base_url
    delays: list[float] = []
    async with OpenAIModel(
        name="m", base_url=url, api_key=None, max_retries=1, sleep=lambda s: _none(delays, s)
    ) as model:
        with pytest.raises(ModelUnavailable, match="cannot connect"):
            await model.complete([{"role": "user", "content": "hi"}], [])


async def _none(delays: list[float], seconds: float) -> None:
    delays.append(seconds)


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert (
        retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:05 GMT"}, now=1445412475) == 10
    )
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


async def test_a_session_over_the_wire_sends_one_prefix(
    server: FakeOpenAI, home: Path, archive: Archive
) -> None:
    """20 turns, memory writes every few turns, through the real SDK: every request carries
    a byte-identical system message and tools list, and the fake's prefix cache hits."""

    def respond(body: dict[str, object]) -> Text | ToolCalls:
        messages = body["messages"]
        assert isinstance(messages, list)
        last = messages[-1]
        if last["role"] == "user" and "remember" in last["content"]:
            return ToolCalls([Call("memory", {"action": "add", "content": last["content"][-9:]})])
        return Text("ok")

    server.default = Dynamic(respond)
    stores = MemoryStores(home / "memories", limits=MemoryLimits(2000, 1000))
    async with model_for(server, []) as model:
        agent = Agent(model=model, archive=archive, stores=stores, home=home,
                      settings=AgentSettings(review_enabled=False))  # fmt: skip
        spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",))
        conversation = await agent.start(spec, person="telegram-1", platform_label="telegram")
        for n in range(20):
            text = f"please remember item {n:04d}" if n % 5 == 0 else f"message {n}"
            assert (await agent.turn(conversation, text)).reply == "ok"
    bodies = [json.loads(raw) for raw in server.raw_bodies]
    systems = {json.dumps(b["messages"][0]) for b in bodies}
    tools = {json.dumps(b["tools"]) for b in bodies}
    assert len(bodies) == 24 and len(systems) == 1 and len(tools) == 1
    assert stores.for_person("telegram-1").entries("memory") == [
        f"item {n:04d}" for n in (0, 5, 10, 15)
    ]
    cached = [m.cached_tokens for m in await archive.messages(conversation.id, viewer=None)
              if m.role == "assistant"]  # fmt: skip
    assert all(c and c > 0 for c in cached[1:])


async def test_over_the_wire_a_dead_endpoint_gives_a_clear_reply_and_keeps_the_message(
    server: FakeOpenAI, home: Path, archive: Archive
) -> None:
    server.default = Error(503)
    stores = MemoryStores(home / "memories")
    async with model_for(server, [], max_retries=2) as model:
        agent = Agent(model=model, archive=archive, stores=stores, home=home,
                      settings=AgentSettings(review_enabled=False))  # fmt: skip
        spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",))
        conversation = await agent.start(spec, person="telegram-1", platform_label="telegram")
        outcome = await agent.turn(conversation, "is anyone there?")
    assert "can't reach my language model" in outcome.reply
    assert outcome.error is not None and "after 3 attempts" in outcome.error
    assert server.request_count == 3
    stored = await archive.messages(conversation.id, viewer="telegram-1")
    assert [m.role for m in stored] == ["user"]


async def test_over_the_wire_compression_flushes_then_summarises_into_a_child(
    server: FakeOpenAI, home: Path, archive: Archive
) -> None:
    def respond(body: dict[str, Any]) -> Text | ToolCalls:
        last = body["messages"][-1]
        if last["content"] == REVIEW_INSTRUCTION:
            return ToolCalls([Call("memory", {"action": "add", "content": "Codename: Heron"})])
        if last["role"] == "tool":
            return Text("saved")
        if last["content"] == SUMMARY_INSTRUCTION:
            return Text("Summary: project Heron, launch on Friday.")
        return Text("ok")  # usage estimated by the fake from the prompt size

    server.default = Dynamic(respond)
    settings = AgentSettings(
        review_enabled=False,
        compression=CompressionSettings(context_window=1500, threshold=0.75, tail_share=0.2),
    )
    stores = MemoryStores(home / "memories")
    async with model_for(server, []) as model:
        agent = Agent(model=model, archive=archive, stores=stores, home=home, settings=settings)
        spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",))
        conversation = await agent.start(spec, person="telegram-1", platform_label="telegram")
        first = conversation.id
        for n in range(60):
            await agent.turn(conversation, f"note {n}: the Heron launch plan " + "y" * 80)
            if conversation.compressions:
                break
        await agent.turn(conversation, "what was the plan?")
        await agent.aclose()
    contents = [r.body["messages"][-1]["content"] for r in server.requests]
    assert contents.index(REVIEW_INSTRUCTION) < contents.index(SUMMARY_INSTRUCTION)
    assert stores.for_person("telegram-1").entries("memory") == ["Codename: Heron"]
    child = await archive.get_session(conversation.id, viewer="telegram-1")
    assert child is not None and child.root_id == first and child.parent_id is not None
    last_system = server.requests[-1].body["messages"][0]["content"]
    assert "Codename: Heron" in last_system and "Summary: project Heron" in last_system


# -- a broken endpoint, the agent's side ------------------------------------------------------


def _agent(model: OpenAIModel, home: Path, archive: Archive,
           **settings: Any) -> Agent:  # fmt: skip
    stores = MemoryStores(home / "memories")
    return Agent(model=model, archive=archive, stores=stores, home=home,
                 settings=AgentSettings(**settings))  # fmt: skip


async def _start(agent: Agent) -> Any:
    spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",))
    return await agent.start(spec, person="telegram-1", platform_label="telegram")


async def test_over_the_wire_a_broken_endpoint_is_the_apology_and_loses_nothing(
    server: FakeOpenAI, home: Path, archive: Archive, caplog: pytest.LogCaptureFixture
) -> None:
    server.default = Raw(LOGIN_PAGE, "text/html")
    delays: list[float] = []
    async with model_for(server, delays, max_retries=2) as model:
        agent = _agent(model, home, archive, review_enabled=False)
        conversation = await _start(agent)
        with caplog.at_level(logging.WARNING):
            outcome = await agent.turn(conversation, "the meeting moved to 3pm")
        assert outcome.reply == (
            "Sorry — I can't reach my language model right now, so I couldn't answer. Your"
            " message is saved; please try again in a minute."
        )
        assert outcome.error_kind == "invalid_response" and outcome.retries == 2
        assert server.request_count == 3 and len(delays) == 2
        [line] = [
            r.getMessage() for r in caplog.records if "failed (invalid_response)" in r.getMessage()
        ]
        assert f"turn in session {conversation.id} failed (invalid_response): " in line
        assert "(got text/html: <!DOCTYPE html> <html> <head><title>Sign in</title>" in line
        stored = await archive.messages(conversation.id, viewer="telegram-1")
        assert [m.role for m in stored] == ["user"]
        server.default = Text("Noted: 3pm.")  # the endpoint is fixed
        assert (await agent.turn(conversation, "did you get that?")).reply == "Noted: 3pm."
    assert "the meeting moved to 3pm" in str(server.requests[-1].body["messages"])


async def test_over_the_wire_refusals_cut_offs_and_empty_answers(
    server: FakeOpenAI, home: Path, archive: Archive
) -> None:
    server.script(
        Text(None, refusal="I can't help with that."),
        Text("A long list: one, two, thr", finish_reason="length"),
        Text("", finish_reason="content_filter"),
        Text(""),
        Text("fine"),
    )
    async with model_for(server, []) as model:
        agent = _agent(model, home, archive, review_enabled=False)
        conversation = await _start(agent)
        replies = [(await agent.turn(conversation, f"q{n}")).reply for n in range(5)]
    assert replies == [
        "The model refused to answer this. Its words: “I can't help with that.”",
        "A long list: one, two, thr\n\n"
        "(My answer was cut off here: it reached the model's length limit.)",
        "The model refused to answer this: its content filter stopped the reply.",
        "(The model sent an empty answer. Please try again, or ask in other words.)",
        "fine",
    ]
    stored = await archive.messages(conversation.id, viewer="telegram-1")
    assert [m.content for m in stored if m.role == "assistant"] == replies
    # what the model is shown of its earlier answers is what the person saw
    sent = [m for m in server.requests[-1].body["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in sent] == replies[:4]


async def test_over_the_wire_a_broken_review_or_compression_stays_in_the_background(
    server: FakeOpenAI, home: Path, archive: Archive, caplog: pytest.LogCaptureFixture
) -> None:
    def respond(body: dict[str, Any]) -> Text | Raw:
        last = body["messages"][-1]["content"]
        if last in (REVIEW_INSTRUCTION, SUMMARY_INSTRUCTION):
            return Raw('{"detail": "upstream timeout"}', "application/json")
        return Text("ok")

    server.default = Dynamic(respond)
    settings = {"compression": CompressionSettings(context_window=600, tail_share=0.1)}
    async with model_for(server, [], max_retries=0) as model:
        agent = _agent(model, home, archive, **settings)
        conversation = await _start(agent)
        first = conversation.id
        with caplog.at_level(logging.WARNING):
            for n in range(8):
                outcome = await agent.turn(conversation, f"note {n}: " + "y" * 120)
                assert outcome.reply == "ok" and outcome.error is None
            await agent.aclose()
    failures = [r.getMessage() for r in caplog.records if "background task" in r.getMessage()]
    assert any(f.startswith(f"background task review:{first}:") for f in failures)
    assert any(f.startswith(f"background task compress:{first}") for f in failures)
    assert all("no `choices` (got application/json: {\"detail\": \"upstream timeout\"})" in f
               for f in failures)  # fmt: skip
    assert conversation.id == first and conversation.compressions == 0
    assert conversation.last_review is None
