"""Compression: flush memory, summarise the middle, continue in a child session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_core.agent import Agent, AgentSettings
from agent_core.compress import SUMMARY_INSTRUCTION, CompressionSettings, split_history
from agent_core.models import ModelReply, ToolCall, Usage
from agent_core.models.scripted import ScriptedModel
from agent_core.review import REVIEW_INSTRUCTION
from memory import MemoryStores
from memory.archive.database import Archive, SessionSpec, new_session_id


def test_split_keeps_head_and_tail_and_never_splits_a_tool_call() -> None:
    history: list[dict[str, Any]] = []
    for n in range(10):
        history.append({"role": "user", "content": f"q{n} " + "x" * 40})
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{n}",
                        "type": "function",
                        "function": {"name": "memory", "arguments": "{}"},
                    }
                ],
            }
        )
        history.append({"role": "tool", "tool_call_id": f"c{n}", "content": "r" * 40})
        history.append({"role": "assistant", "content": f"a{n}"})  # fmt: skip
    for tail_tokens in range(0, 400, 7):
        head, middle, tail = split_history(history, keep_head=3, tail_tokens=tail_tokens)
        assert head + middle + tail == history
        assert [m["role"] for m in head] == ["user", "assistant", "tool"]  # kept with its call
        assert not tail or tail[0]["role"] != "tool"
        assert (
            sum(len(json.dumps(m)) // 4 + 4 for m in tail) <= tail_tokens
            or tail[0]["role"] == "assistant"
        )


async def test_a_long_session_flushes_memory_then_continues_in_a_child(
    home: Path, archive: Archive
) -> None:
    def respond(messages: Any, tools: Any) -> ModelReply:
        last = messages[-1]
        if last["content"] == REVIEW_INSTRUCTION:
            return ModelReply(None, (ToolCall("f", "memory", json.dumps(
                {"action": "add", "content": "Project codename: Heron"})),))  # fmt: skip
        if last["role"] == "tool":
            return ModelReply(content="saved")
        if last["content"] == SUMMARY_INSTRUCTION:
            return ModelReply(content="They planned project Heron and chose Friday.")
        size = len(json.dumps(messages)) // 4
        return ModelReply(content=f"answer {len(messages)}", usage=Usage(size, 5, 0))

    model = ScriptedModel(respond=respond)
    settings = AgentSettings(
        review_enabled=False,
        compression=CompressionSettings(context_window=1500, threshold=0.75, tail_share=0.2),
    )
    a = Agent(model=model, archive=archive, stores=MemoryStores(home / "memories"), home=home,
              settings=settings)  # fmt: skip
    spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",), session_key="k")
    conversation = await a.start(spec, person="telegram-1", platform_label="telegram")
    parent = conversation.id
    for n in range(40):
        await a.turn(conversation, f"message number {n} about project Heron " + "z" * 60)
        if conversation.compressions:
            break
    await a.turn(conversation, "after")  # waits for the compression the last reply did not
    # the rows carried into the child are history: they are not turns spoken again
    assert len(await archive.turn_times("telegram-1", 0)) == n + 2
    assert conversation.compressions == 1 and conversation.id != parent
    # flush first, with the memory tool only, then the summary
    instructions = [r.messages[-1]["content"] for r in model.requests]
    flush_at = instructions.index(REVIEW_INSTRUCTION)
    assert instructions.index(SUMMARY_INSTRUCTION) > flush_at
    assert a.stores.for_person("telegram-1").entries("memory") == ["Project codename: Heron"]
    # the child: linked, its own rebuilt prompt with the fresh snapshot and the summary
    child = await archive.get_session(conversation.id, viewer="telegram-1")
    old = await archive.get_session(parent, viewer="telegram-1")
    assert child is not None and old is not None
    assert child.parent_id == parent and old.end_reason == "compressed"
    prompt = conversation.system["content"]
    assert "Project codename: Heron" in prompt and "They planned project Heron" in prompt
    assert await archive.system_prompt(child.id) == prompt
    assert model.requests[-1].messages[0]["content"] == prompt
    resumed = await a.resume("k", person="telegram-1")
    assert resumed is not None and resumed.id == child.id
    sent = model.requests[-1].messages
    assert sent[1]["content"].endswith("message number 0 about project Heron " + "z" * 60)
    assert len(sent) < len(model.requests[flush_at - 1].messages)
    await a.aclose()


async def test_writes_a_compression_flush_stages_are_shown_with_the_next_reply(
    home: Path, archive: Archive
) -> None:
    def respond(messages: Any, tools: Any) -> ModelReply:
        last = messages[-1]
        if last["content"] == REVIEW_INSTRUCTION:
            return ModelReply(None, (ToolCall("f", "memory", json.dumps(
                {"action": "add", "content": "Project codename: Heron"})),))  # fmt: skip
        if last["role"] == "tool":
            return ModelReply(content="saved")
        if last["content"] == SUMMARY_INSTRUCTION:
            return ModelReply(content="They planned project Heron.")
        return ModelReply(content="ok", usage=Usage(len(json.dumps(messages)) // 4, 5, 0))

    settings = AgentSettings(
        review_enabled=False,
        compression=CompressionSettings(context_window=1500, threshold=0.75, tail_share=0.2),
    )
    stores = MemoryStores(home / "memories", write_approval=True)
    a = Agent(model=ScriptedModel(respond=respond), archive=archive, stores=stores, home=home,
              settings=settings)  # fmt: skip
    spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",), session_key="k")
    conversation = await a.start(spec, person="telegram-1", platform_label="telegram")
    outcomes = []
    for n in range(40):
        outcomes.append(await a.turn(conversation, f"message {n} about Heron " + "z" * 60))
        if conversation.compressing is not None:
            break
    after = await a.turn(conversation, "after")  # the flush staged its write meanwhile
    [pending] = stores.for_person("telegram-1").pending()
    assert after.staged == (pending.id,)
    assert all(not o.staged for o in outcomes)
    assert (await a.turn(conversation, "again")).staged == ()  # shown once
    await a.aclose()
