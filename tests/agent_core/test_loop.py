"""The bounded turn with real tools over real files, driven by a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.loop import BUDGET_NOTE, run_turn
from agent_core.models import ModelReply, ToolCall, Usage
from agent_core.models.scripted import ScriptedModel
from agent_core.tools.base import Toolbox
from agent_core.tools.builtin import memory_tool, session_search_tool
from memory import MemoryLimits, MemoryStore, MemoryTurn
from memory.archive.database import Archive
from memory.archive.search import SearchTool
from tests.memory.conftest import make_session, say

SYSTEM = {"role": "system", "content": "frozen"}


def calls(*pairs: tuple[str, dict[str, object]]) -> ModelReply:
    return ModelReply(
        content=None,
        tool_calls=tuple(
            ToolCall(f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(pairs)
        ),
        usage=Usage(100, 10, 80),
    )


def toolbox(tmp_path: Path, turn: MemoryTurn, archive: Archive | None = None) -> Toolbox:
    store = MemoryStore(tmp_path / "telegram-1", limits=MemoryLimits(300, 300))
    tools = [memory_tool(store, lambda: turn)]
    if archive is not None:
        tools.append(
            session_search_tool(
                SearchTool(archive), person="telegram-1", current_session=lambda: "now"
            )
        )
    return Toolbox(tools)


async def test_tool_calls_then_text(tmp_path: Path) -> None:
    model = ScriptedModel(
        calls(("memory", {"action": "add", "target": "user", "content": "Prefers tea"}),
              ("memory", {"action": "add", "content": "Uses Fedora"})),
        ModelReply(content="Noted both.", usage=Usage(150, 5, 120)),
    )  # fmt: skip
    box = toolbox(tmp_path, MemoryTurn())
    user = {"role": "user", "content": "I like tea and I run Fedora"}
    result = await run_turn(
        model, system=SYSTEM, history=[], user=user, toolbox=box, max_iterations=4
    )
    assert result.reply == "Noted both." and result.requests == 2 and result.stopped is None
    assert [m["role"] for m in result.messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert json.loads(result.messages[2]["content"])["success"] is True
    assert result.usage == Usage(250, 15, 200)
    assert result.tool_names() == ["memory", "memory"]
    second = model.requests[1]
    assert second.messages[0] == SYSTEM and second.messages[-1]["role"] == "tool"
    assert model.requests[0].tools == model.requests[1].tools == box.specs
    assert (tmp_path / "telegram-1" / "USER.md").read_text(encoding="utf-8") == "Prefers tea"


async def test_errors_and_unknown_tools_go_back_to_the_model(tmp_path: Path) -> None:
    model = ScriptedModel(
        ModelReply(content=None, tool_calls=(ToolCall("a", "shell", "{}"),
                                             ToolCall("b", "memory", "{oops"))),
        "Sorry, I cannot do that.",
    )  # fmt: skip
    result = await run_turn(
        model, system=SYSTEM, history=[], user={"role": "user", "content": "x"},
        toolbox=toolbox(tmp_path, MemoryTurn()), max_iterations=3,
    )  # fmt: skip
    tool_outputs = [json.loads(m["content"]) for m in result.messages if m["role"] == "tool"]
    assert "no tool named 'shell'" in tool_outputs[0]["error"]
    assert "not valid JSON" in tool_outputs[1]["error"]
    assert result.reply == "Sorry, I cannot do that."


async def test_the_budget_stops_the_loop_gracefully(tmp_path: Path) -> None:
    looping = calls(("memory", {"action": "remove", "old_text": "nothing"}))
    model = ScriptedModel(looping, looping, looping, "Here is what I have.")
    turn = MemoryTurn()
    result = await run_turn(
        model, system=SYSTEM, history=[], user={"role": "user", "content": "x"},
        toolbox=toolbox(tmp_path, turn), max_iterations=3,
    )  # fmt: skip
    assert result.stopped == "budget" and result.requests == 4
    assert result.reply == "Here is what I have."
    assert model.requests[-1].messages[-1] == {"role": "user", "content": BUDGET_NOTE}
    assert turn.failures == 3  # the consolidation counter saw every failure of this turn


async def test_a_model_that_keeps_calling_tools_gets_a_plain_apology(tmp_path: Path) -> None:
    looping = calls(("memory", {"action": "remove", "old_text": "nothing"}))
    model = ScriptedModel(looping, looping)
    result = await run_turn(
        model, system=SYSTEM, history=[], user={"role": "user", "content": "x"},
        toolbox=toolbox(tmp_path, MemoryTurn()), max_iterations=1,
    )  # fmt: skip
    assert result.reply.startswith("Sorry — I ran out of steps")
    assert result.messages[-1] == {"role": "assistant", "content": result.reply}


REFUSAL = "I'm sorry, but I can't help with that."
CUT_OFF = "(My answer was cut off here: it reached the model's length limit.)"


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (ModelReply(content=None, refusal=REFUSAL, finish_reason="stop"),
         f"The model refused to answer this. Its words: “{REFUSAL}”"),
        (ModelReply(content="", refusal=f"  {REFUSAL}\n", finish_reason="content_filter"),
         f"The model refused to answer this. Its words: “{REFUSAL}”"),
        (ModelReply(content=None, finish_reason="content_filter"),
         "The model refused to answer this: its content filter stopped the reply."),
        (ModelReply(content="The first half of", finish_reason="content_filter"),
         "The first half of\n\n(The model's content filter stopped my answer here.)"),
        (ModelReply(content="Step 1: unpack. Step 2: ", finish_reason="length"),
         f"Step 1: unpack. Step 2:\n\n{CUT_OFF}"),
        (ModelReply(content=None, finish_reason="length"),
         "(The model reached its length limit before it wrote any answer. Ask for something"
         " shorter, or in smaller steps.)"),
        (ModelReply(content="", finish_reason="stop"),
         "(The model sent an empty answer. Please try again, or ask in other words.)"),
        (ModelReply(content=" \n ", finish_reason=None),
         "(The model sent an empty answer. Please try again, or ask in other words.)"),
        (ModelReply(content="All good.", finish_reason="stop"), "All good."),
    ],
    ids=["refusal", "refusal-filtered", "filtered", "filtered-partial", "length",
         "length-empty", "empty", "blank", "plain"],
)  # fmt: skip
async def test_refusals_cut_off_and_empty_answers_are_said_plainly(
    tmp_path: Path, reply: ModelReply, shown: str
) -> None:
    result = await run_turn(
        ScriptedModel(reply), system=SYSTEM, history=[], user={"role": "user", "content": "x"},
        toolbox=toolbox(tmp_path, MemoryTurn()), max_iterations=2,
    )  # fmt: skip
    assert result.reply == shown
    # the history (and so the archive and the next request) holds what the person saw
    assert result.messages[-1] == {"role": "assistant", "content": shown}


async def test_tool_calls_cut_off_at_the_length_limit_are_not_run(tmp_path: Path) -> None:
    cut = ModelReply(
        content=None,
        tool_calls=(ToolCall("a", "memory", '{"action": "add", "content": "Prefers tea"}'),
                    ToolCall("b", "memory", '{"action": "add", "content": "Uses Fed')),
        finish_reason="length",
    )  # fmt: skip
    model = ScriptedModel(
        cut, calls(("memory", {"action": "add", "content": "Uses Fedora"})), "Noted."
    )
    result = await run_turn(
        model, system=SYSTEM, history=[], user={"role": "user", "content": "x"},
        toolbox=toolbox(tmp_path, MemoryTurn()), max_iterations=4,
    )  # fmt: skip
    assert result.reply == "Noted." and result.requests == 3
    refused = [json.loads(m["content"]) for m in result.messages[2:4]]
    assert [m["tool_call_id"] for m in result.messages[2:4]] == ["a", "b"]
    assert all(r["success"] is False for r in refused)
    assert "cut off at the model's length limit" in refused[0]["error"]
    # neither half-written call touched memory; the model's second try did
    assert (tmp_path / "telegram-1" / "MEMORY.md").read_text(encoding="utf-8") == "Uses Fedora"


async def test_after_the_budget_a_refusal_is_shown_and_an_empty_answer_is_the_apology(
    tmp_path: Path,
) -> None:
    looping = calls(("memory", {"action": "remove", "old_text": "nothing"}))
    for last, shown in [
        (ModelReply(content=None, refusal="No."), "The model refused to answer this. Its words:"),
        (ModelReply(content=""), "Sorry — I ran out of steps before I could finish that."),
    ]:  # fmt: skip
        result = await run_turn(
            ScriptedModel(looping, last), system=SYSTEM, history=[],
            user={"role": "user", "content": "x"}, toolbox=toolbox(tmp_path, MemoryTurn()),
            max_iterations=1,
        )  # fmt: skip
        assert result.stopped == "budget" and result.reply.startswith(shown)
        assert result.messages[-1] == {"role": "assistant", "content": result.reply}


async def test_session_search_is_bound_to_the_sessions_person(
    tmp_path: Path, archive: Archive
) -> None:
    await make_session(archive, "theirs", "telegram-2")
    await say(archive, "theirs", "telegram-2", "the vault code is 4471")
    await make_session(archive, "old", "telegram-1")
    await say(archive, "old", "telegram-1", "my vault is the blue one")
    model = ScriptedModel(
        calls(("session_search", {"query": "vault code"}),
              ("session_search", {"session_id": "theirs"})),
        "done",
    )  # fmt: skip
    result = await run_turn(
        model, system=SYSTEM, history=[], user={"role": "user", "content": "vault?"},
        toolbox=toolbox(tmp_path, MemoryTurn(), archive), max_iterations=3,
    )  # fmt: skip
    outputs = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert "blue one" in outputs[0] and "4471" not in "".join(outputs)
    assert json.loads(outputs[1])["success"] is False
