"""The agent over real files and a real archive, driven by a scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_core.agent import Agent, AgentSettings, Conversation
from agent_core.models import ChatMessage, ModelReply, ModelUnavailable, ToolCall, ToolSpec, Usage
from agent_core.models.scripted import ScriptedModel
from agent_core.review import REVIEW_INSTRUCTION
from memory import MemoryLimits, MemoryStores
from memory.archive.database import Archive, SessionSpec, new_session_id

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)


def call(name: str, **args: Any) -> ModelReply:
    return ModelReply(content=None, tool_calls=(ToolCall("c1", name, json.dumps(args)),))


def agent(home: Path, archive: Archive, model: Any, **settings: Any) -> Agent:
    stores = MemoryStores(home / "memories", limits=MemoryLimits(2000, 1000))
    return Agent(
        model=model, archive=archive, stores=stores, home=home,
        settings=AgentSettings(**settings), now=lambda: NOW,
    )  # fmt: skip


async def start(a: Agent, person: str = "telegram-1", key: str = "telegram:dm:1") -> Conversation:
    spec = SessionSpec(new_session_id(), "telegram", "1", "dm", (person,), session_key=key)
    return await a.start(spec, person=person, platform_label="telegram (private chat)")


def is_review(messages: Any, tools: Any) -> bool:
    return messages[-1]["content"] == REVIEW_INSTRUCTION


async def test_twenty_turns_with_memory_writes_keep_the_prefix_byte_identical(
    home: Path, archive: Archive
) -> None:
    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        last = messages[-1]
        if last["role"] == "user" and "remember" in str(last["content"]):
            n = str(last["content"]).rsplit(" ", 1)[-1]
            return call("memory", action="add", content=f"Fact number {n}")
        return ModelReply(content="ok", usage=Usage(100, 5, 90))

    model = ScriptedModel(respond=respond)
    a = agent(home, archive, model, review_enabled=False)
    conversation = await start(a)
    for n in range(20):
        text = f"please remember {n}" if n % 4 == 0 else f"hello {n}"
        outcome = await a.turn(conversation, text)
        assert outcome.reply == "ok"
    systems = {json.dumps(r.messages[0], sort_keys=True) for r in model.requests}
    tools = {json.dumps(r.tools, sort_keys=True) for r in model.requests}
    assert len(model.requests) == 25 and len(systems) == 1 and len(tools) == 1
    assert "Fact number" not in model.requests[-1].messages[0]["content"]
    # the writes are on disk at once, and the next session's prompt carries them
    store = a.stores.for_person("telegram-1")
    assert store.entries("memory") == [f"Fact number {n}" for n in (0, 4, 8, 12, 16)]
    following = await start(a, key="telegram:dm:1b")
    assert "Fact number 16" in following.system["content"]
    # per-turn facts are in the user message, not the prompt
    assert model.requests[0].messages[-1]["content"] == "[2026-11-30 09:30 UTC]\nplease remember 0"


async def test_the_review_writes_after_the_reply_and_may_only_use_memory(
    home: Path, archive: Archive
) -> None:
    release = asyncio.Event()

    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        if not is_review(messages, tools) and messages[-1]["role"] == "user":
            return ModelReply(content="Nice to meet you, Sam.")
        if is_review(messages, tools):
            await release.wait()  # the review is still thinking when the reply is returned
            return ModelReply(
                content=None,
                tool_calls=(
                    ToolCall("r1", "session_search", json.dumps({"query": "x"})),
                    ToolCall("r2", "memory", json.dumps(
                        {"action": "add", "target": "user", "content": "Name: Sam"})),
                ),
            )  # fmt: skip
        return ModelReply(content="saved")

    model = ScriptedModel(respond=respond)
    a = agent(home, archive, model)
    conversation = await start(a)
    outcome = await a.turn(conversation, "I'm Sam")
    assert outcome.reply == "Nice to meet you, Sam." and outcome.review is not None
    store = a.stores.for_person("telegram-1")
    assert store.entries("user") == []  # nothing written before the reply was handed back
    release.set()
    result = await outcome.review
    assert store.entries("user") == ["Name: Sam"]
    assert (
        result.refused == ["session_search"] and result.summary() == "memory: add user: Name: Sam"
    )
    review_request = next(r for r in model.requests if is_review(r.messages, r.tools))
    assert review_request.messages[0] == model.requests[0].messages[0]  # same cached prefix
    assert review_request.tools == model.requests[0].tools
    await a.aclose()


async def test_a_person_cannot_address_another_persons_store(home: Path, archive: Archive) -> None:
    model = ScriptedModel(
        call("memory", action="add", content="x", person="telegram-2"),
        call("memory", action="add", target="../telegram-2", content="x"),
        "done",
    )
    a = agent(home, archive, model, review_enabled=False)
    await a.turn(await start(a), "hi")
    outputs = [
        json.loads(m["content"]) for r in model.requests for m in r.messages if m["role"] == "tool"
    ]
    assert "unknown argument(s) ['person']" in outputs[0]["error"]
    assert "must be one of" in outputs[-1]["error"]
    assert a.stores.people() == []


async def test_a_restart_resumes_the_session_with_the_same_prompt(
    home: Path, archive: Archive
) -> None:
    first = ScriptedModel(call("memory", action="add", content="Uses vim"), "noted", "sure")
    a = agent(home, archive, first, review_enabled=False)
    conversation = await start(a)
    await a.turn(conversation, "I use vim")
    await a.turn(conversation, "and tabs")
    second = ScriptedModel("welcome back")
    b = agent(home, archive, second, review_enabled=False)
    resumed = await b.resume("telegram:dm:1", person="telegram-1")
    assert resumed is not None and resumed.id == conversation.id
    assert resumed.system == conversation.system
    assert resumed.turns == 2
    await b.turn(resumed, "still there?")
    sent = second.requests[0].messages
    # the history from the archive is exactly what was sent before the restart, plus the reply
    assert sent[:-1] == [*first.requests[-1].messages, {"role": "assistant", "content": "sure"}]
    assert sent[-1]["content"].endswith("still there?")
    assert await b.resume("telegram:dm:1", person="telegram-9") is None


async def test_a_failed_model_still_archives_the_message(home: Path, archive: Archive) -> None:
    async def down(messages: Any, tools: Any) -> ModelReply:
        raise ModelUnavailable("the model did not answer after 3 attempts: timed out", attempts=3)

    a = agent(home, archive, ScriptedModel(respond=down), review_enabled=False)
    conversation = await start(a)
    outcome = await a.turn(conversation, "are you there?")
    assert outcome.error is not None and "can't reach my language model" in outcome.reply
    stored = await archive.messages(conversation.id, viewer="telegram-1")
    assert [m.role for m in stored] == ["user"] and stored[0].content.endswith("are you there?")


async def test_a_turn_cancelled_mid_request_keeps_the_message(home: Path, archive: Archive) -> None:
    asked = asyncio.Event()

    async def slow(messages: Any, tools: Any) -> ModelReply:
        asked.set()
        await asyncio.Event().wait()  # never answers: only a cancel ends this request
        raise AssertionError("unreachable")

    model = ScriptedModel(respond=slow)
    a = agent(home, archive, model, review_enabled=False)
    conversation = await start(a)
    turn = asyncio.create_task(a.turn(conversation, "a long question"))
    await asked.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    stored = await archive.messages(conversation.id, viewer="telegram-1")
    assert [m.role for m in stored] == ["user"] and stored[0].content.endswith("a long question")
    assert stored[0].speaker == "telegram-1"
    # the next turn sees it, exactly as a resumed session would
    model.push("here now")
    assert (await a.turn(conversation, "still there?")).reply == "here now"
    sent = [m["content"] for m in model.requests[-1].messages[1:]]
    assert sent[0].endswith("a long question") and sent[1].endswith("still there?")
    resumed = await a.resume("telegram:dm:1", person="telegram-1")
    assert resumed is not None and resumed.history == conversation.history


async def test_usage_is_recorded_per_request(home: Path, archive: Archive) -> None:
    model = ScriptedModel(
        ModelReply(content=None, tool_calls=(ToolCall("a", "session_search", "{}"),),
                   usage=Usage(1000, 20, 900)),
        ModelReply(content="done", usage=Usage(1100, 30, 1000)),
    )  # fmt: skip
    a = agent(home, archive, model, review_enabled=False)
    conversation = await start(a)
    outcome = await a.turn(conversation, "x")
    assert outcome.usage == Usage(2100, 50, 1900) == conversation.usage
    stored = await archive.messages(conversation.id, viewer=None)
    assert [(m.role, m.cached_tokens) for m in stored] == [
        ("user", None), ("assistant", 900), ("tool", None), ("assistant", 1000)
    ]  # fmt: skip
    assert stored[2].tool_name == "session_search"


@pytest.mark.parametrize("interval", [1, 3])
async def test_review_interval_and_one_at_a_time(
    home: Path, archive: Archive, interval: int
) -> None:
    gate = asyncio.Event()

    async def respond(messages: Any, tools: Any) -> ModelReply:
        if is_review(messages, tools):
            await gate.wait()
            return ModelReply(content="nothing to save")
        return ModelReply(content="ok")

    a = agent(home, archive, ScriptedModel(respond=respond), review_interval_turns=interval)
    conversation = await start(a)
    started = [(await a.turn(conversation, f"t{n}")).review is not None for n in range(6)]
    if interval == 1:
        assert started == [True, False, False, False, False, False]  # the first is still running
    else:
        assert started == [False, False, True, False, False, False]
    gate.set()
    await a.aclose()
    assert (
        conversation.last_review is not None
        and conversation.last_review.answer == "nothing to save"
    )


async def test_a_review_counts_its_failures_apart_from_the_next_turn(
    home: Path, archive: Archive
) -> None:
    gate = asyncio.Event()

    async def respond(messages: Any, tools: Any) -> ModelReply:
        if is_review(messages, tools) or (
            messages[-1]["role"] == "tool" and is_review(messages[:-2], tools)
        ):
            await gate.wait()
            return call("memory", action="remove", old_text="nothing like this")
        if messages[-1]["role"] == "tool":
            return ModelReply(content="done")
        return call("memory", action="remove", old_text="nothing like this either")

    a = agent(home, archive, ScriptedModel(respond=respond), review_max_iterations=2)
    conversation = await start(a)
    first = await a.turn(conversation, "one")
    assert first.review is not None
    await a.turn(conversation, "two")  # runs while the review waits
    assert conversation.memory_turn.failures == 1  # only this turn's own failure
    gate.set()
    await a.aclose()
    assert conversation.memory_turn.failures == 1


async def test_with_write_approval_the_review_only_stages(home: Path, archive: Archive) -> None:
    async def respond(messages: Any, tools: Any) -> ModelReply:
        if is_review(messages, tools):
            return call("memory", action="add", target="user", content="Likes jazz")
        if messages[-1]["role"] == "tool":
            return ModelReply(content="staged it")
        return ModelReply(content="Jazz it is.")

    stores = MemoryStores(home / "memories", write_approval=True)
    a = Agent(model=ScriptedModel(respond=respond), archive=archive, stores=stores, home=home)
    outcome = await a.turn(await start(a), "I love jazz")
    assert outcome.review is not None
    result = await outcome.review
    store = stores.for_person("telegram-1")
    assert result.staged == [p.id for p in store.pending()] and result.saved == []
    assert result.summary() == "memory: 1 write(s) waiting for approval"
    assert store.entries("user") == []
    store.approve(result.staged[0])
    assert store.entries("user") == ["Likes jazz"]
    await a.aclose()


async def test_a_turn_reports_what_it_staged_even_when_it_then_fails(
    home: Path, archive: Archive
) -> None:
    async def respond(messages: Any, tools: Any) -> ModelReply:
        text = str(messages[-1]["content"])
        if messages[-1]["role"] == "tool":
            if "break" in str(messages[-3]["content"]):
                raise ModelUnavailable("the endpoint went away", attempts=1)
            return ModelReply(content="noted")
        if "hello" in text:
            return ModelReply(content="hi")
        fact = text.rsplit(" ", 1)[-1]
        return call("memory", action="add", target="user", content=f"Likes {fact}")

    stores = MemoryStores(home / "memories", write_approval=True)
    settings = AgentSettings(review_enabled=False)
    model = ScriptedModel(respond=respond)
    a = Agent(model=model, archive=archive, stores=stores, home=home, settings=settings)
    conversation = await start(a)
    first = await a.turn(conversation, "remember jazz")
    waiting = stores.for_person("telegram-1").pending()
    assert first.staged == (waiting[0].id,) and first.reply == "noted"
    assert (await a.turn(conversation, "hello")).staged == ()  # only this turn's own
    broken = await a.turn(conversation, "break then remember tea")
    assert broken.error is not None
    assert broken.staged == (stores.for_person("telegram-1").pending()[1].id,)
    await a.aclose()
