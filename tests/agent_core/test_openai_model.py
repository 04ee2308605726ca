"""OpenAIModel over real HTTP: the real openai SDK against the loopback fake server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_core.agent import Agent, AgentSettings
from agent_core.compress import SUMMARY_INSTRUCTION, CompressionSettings
from agent_core.models import ModelRejected, ModelUnavailable, Usage
from agent_core.models.openai import OpenAIModel, retry_after_seconds
from agent_core.review import REVIEW_INSTRUCTION
from memory import MemoryLimits, MemoryStores
from memory.archive import Archive, SessionSpec, new_session_id
from tests.fakes.openai_server import Call, Dynamic, Error, FakeOpenAI, Hang, Text, ToolCalls
from tests.fakes.openai_server import Usage as WireUsage


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


def model_for(server: FakeOpenAI, delays: list[float], **kw: object) -> OpenAIModel:
    async def record(seconds: float) -> None:
        delays.append(seconds)

    return OpenAIModel(
        name="fake-model", base_url=server.base_url, api_key="sk-test",
        sleep=record, rng=lambda: 1.0, **kw,  # type: ignore[arg-type]
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
