"""Skills in the agent: the tools, who may write, the frozen index, review proposals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_core.agent import Agent, AgentSettings, Conversation
from agent_core.models import ChatMessage, ModelReply, ToolCall, ToolSpec
from agent_core.models.scripted import ScriptedModel
from agent_core.review import REVIEW_INSTRUCTION
from agent_core.tools.base import Toolbox
from agent_core.tools.skills import SkillPolicy, skill_tools
from memory import MemoryStores
from memory.archive.database import Archive, SessionSpec, new_session_id
from memory.skills.store import SkillStore

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
SKILL = """---
name: rotate-logs
description: Rotate and compress the app's logs without losing lines
---
1. Send SIGHUP to the app after moving the file.
2. gzip the old file.
"""


def call(tool: str, /, **args: Any) -> ModelReply:
    return ModelReply(content=None, tool_calls=(ToolCall("c1", tool, json.dumps(args)),))


def make_agent(home: Path, archive: Archive, model: Any, **settings: Any) -> Agent:
    return Agent(
        model=model, archive=archive, stores=MemoryStores(home / "memories"), home=home,
        settings=AgentSettings(**settings), skills=SkillStore(home / "skills"), now=lambda: NOW,
    )  # fmt: skip


async def start(agent: Agent, key: str, *, admin: bool) -> Conversation:
    spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",), session_key=key)
    return await agent.start(spec, person="telegram-1", platform_label="Telegram", admin=admin)


async def invoke(toolbox: Toolbox, tool: str, /, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(await toolbox.invoke(tool, json.dumps(args)))
    return result


@pytest.mark.parametrize(
    ("approval", "admin", "from_review", "staged"),
    [
        ("non_admin", True, False, False),
        ("non_admin", False, False, True),
        ("non_admin", True, True, True),  # a review's proposal always waits under non_admin
        ("always", True, False, True),
        ("never", False, True, False),
    ],
)
async def test_who_may_write_skills(
    tmp_path: Path, approval: Any, admin: bool, from_review: bool, staged: bool
) -> None:
    store = SkillStore(tmp_path / "skills")
    policy = SkillPolicy(approval, admin, "telegram-1")
    toolbox = Toolbox(skill_tools(store, policy, from_review=from_review))
    result = await invoke(
        toolbox, "skill_manage", action="create", name="rotate-logs", content=SKILL
    )
    assert result["success"] is True
    assert bool(result.get("staged")) is staged
    assert (store.get("rotate-logs") is None) is staged
    if staged:
        [pending] = store.pending()
        assert pending.id == result["pending_id"]
        assert "not in effect yet" in result["message"]


async def test_view_list_and_refusals_go_back_to_the_model(tmp_path: Path) -> None:
    store = SkillStore(tmp_path / "skills")
    toolbox = Toolbox(skill_tools(store, SkillPolicy("never", True, "telegram-1")))
    assert (await invoke(toolbox, "skills_list"))["skills"] == []
    await invoke(toolbox, "skill_manage", action="create", name="rotate-logs", content=SKILL)
    listed = await invoke(toolbox, "skills_list")
    assert listed["skills"][0]["name"] == "rotate-logs"
    viewed = await invoke(toolbox, "skill_view", name="rotate-logs")
    assert "SIGHUP" in viewed["content"]
    escape = await invoke(toolbox, "skill_view", name="rotate-logs", file_path="../../etc/passwd")
    assert escape["success"] is False
    twice = await invoke(
        toolbox, "skill_manage", action="create", name="rotate-logs", content=SKILL
    )
    assert twice["success"] is False and "exist" in twice["error"]
    patch = await invoke(
        toolbox,
        "skill_manage",
        action="patch",
        name="rotate-logs",
        old_text="gzip",
        new_text="zstd",
    )
    assert patch["success"] is True and "zstd" in store.view("rotate-logs")


async def test_the_index_is_frozen_in_a_session_and_the_next_one_loads_the_skill(
    home: Path, archive: Archive
) -> None:
    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        last = messages[-1]
        if last["role"] == "tool":
            return ModelReply("done")
        text = str(last["content"])
        if "write it down" in text:
            return call("skill_manage", action="create", name="rotate-logs", content=SKILL)
        if "rotate the logs" in text:
            return call("skill_view", name="rotate-logs")
        return ModelReply("ok")

    model = ScriptedModel(respond=respond)
    agent = make_agent(home, archive, model, review_enabled=False)
    first = await start(agent, "telegram:dm:1", admin=True)
    await agent.turn(first, "hello")
    await agent.turn(first, "that worked, write it down")
    await agent.turn(first, "thanks")
    prompts = {r.messages[0]["content"] for r in model.requests}
    assert len(prompts) == 1 and "rotate-logs" not in prompts.pop()  # byte-identical
    second = await start(agent, "telegram:dm:1b", admin=False)
    assert "rotate-logs: Rotate and compress" in second.system["content"]
    before = len(model.requests)
    await agent.turn(second, "please rotate the logs")
    viewed = model.requests[before + 1].messages[-1]
    assert viewed["role"] == "tool" and "SIGHUP" in viewed["content"]


async def test_a_review_may_propose_a_skill_which_waits_for_an_admin(
    home: Path, archive: Archive
) -> None:
    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        last = messages[-1]
        if last["role"] == "tool":
            return ModelReply("nothing else")
        if REVIEW_INSTRUCTION in str(last["content"]):
            assert "skill_manage" in str(last["content"])
            return call("skill_manage", action="create", name="rotate-logs", content=SKILL)
        return ModelReply("ok")

    model = ScriptedModel(respond=respond)
    agent = make_agent(home, archive, model)
    conversation = await start(agent, "telegram:dm:1", admin=True)
    outcome = await agent.turn(conversation, "we rotated the logs together")
    assert outcome.review is not None
    review = await outcome.review
    assert review.skills and "not in effect" in review.skills[0]
    store = agent.skills
    assert store is not None and store.get("rotate-logs") is None
    [pending] = store.pending()
    assert "review" in pending.reason
    await agent.aclose()
