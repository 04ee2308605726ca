"""Live sessions: resumed from the archive, evicted when idle, never while still busy."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.agent import Agent, AgentSettings
from agent_core.models.scripted import ScriptedModel, echo
from agent_core.recall import Recall
from gateway.sessions import SessionKey, Sessions
from memory import MemoryStores
from memory.archive.database import Archive
from tests.fakes.memory_provider import RecordingProvider
from tests.gateway.harness import ChatAdapter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def agent(home: Path, archive: Archive) -> Agent:
    return Agent(
        model=ScriptedModel(respond=echo), archive=archive, stores=MemoryStores(home / "m"),
        home=home, settings=AgentSettings(review_enabled=False),
    )  # fmt: skip


async def test_idle_sessions_leave_memory_and_resume_from_the_archive(
    agent: Agent, archive: Archive
) -> None:
    clock = Clock()
    sessions = Sessions(agent, idle_s=60, clock=clock)
    chat = ChatAdapter()
    keys = []
    for user in ("1", "2", "3"):
        message = chat.message("hi", user=user)
        key = SessionKey.for_message(message)
        keys.append((key, message))
        conversation = await sessions.get(key, message)
        await agent.turn(conversation, "hi")
        clock.now += 25
    assert len(sessions) == 3
    # user 1 comes back just in time: used again, so it is the most recent now
    first = await sessions.get(*keys[0])
    clock.now += 50  # 2 (last used at 1025) and 3 (1050) are past 60 s; 1 (1075) is not
    await sessions.get(*keys[0])
    assert len(sessions) == 1 and sessions.peek(keys[0][0]) is first
    resumed = await sessions.get(*keys[1])  # back from the archive, same session
    latest = await archive.latest_session(str(keys[1][0]))
    assert latest is not None and resumed.id == latest.id
    assert [m["role"] for m in resumed.history] == ["user", "assistant"]


async def test_a_session_with_a_running_review_is_kept(agent: Agent) -> None:
    clock = Clock()
    sessions = Sessions(agent, idle_s=60, clock=clock)
    chat = ChatAdapter()
    message = chat.message("hi", user="1")
    key = SessionKey.for_message(message)
    conversation = await sessions.get(key, message)
    blocker = asyncio.get_running_loop().create_future()
    conversation.review_task = asyncio.ensure_future(blocker)
    clock.now += 120
    assert sessions.evict_idle() == 0 and sessions.peek(key) is conversation
    blocker.set_result(None)
    await asyncio.sleep(0)
    clock.now += 120
    assert sessions.evict_idle() == 1 and sessions.peek(key) is None


async def test_new_and_idle_eviction_tell_the_memory_provider(home: Path, archive: Archive) -> None:
    provider = RecordingProvider()
    seen: list[tuple[str, str, str, float]] = []
    agent = Agent(
        model=ScriptedModel(respond=echo), archive=archive, stores=MemoryStores(home / "m"),
        home=home, settings=AgentSettings(review_enabled=False),
        recall=Recall(provider, observe=lambda *call: seen.append(call)),
    )  # fmt: skip
    clock = Clock()
    sessions = Sessions(agent, idle_s=60, clock=clock)
    chat = ChatAdapter()
    ours, theirs = chat.message("hi", user="1"), chat.message("hi", user="2")
    for message in (ours, theirs):
        conversation = await sessions.get(SessionKey.for_message(message), message)
        await agent.turn(conversation, "we adopted a cat")
    await sessions.reset(SessionKey.for_message(ours))  # /new
    clock.now += 120
    await sessions.get(SessionKey.for_message(ours), ours)  # evicts the other, idle
    await agent.aclose()
    ends = provider.hooks("session_end")
    assert [(end.reason, end.subject.key) for end in ends] == [
        ("new", "telegram-1"),
        ("idle", "telegram-2"),
    ]
    assert ends[0].messages[0] == ("user", "we adopted a cat")
    assert ("session_end", "ok") in {(hook, outcome) for _, hook, outcome, _ in seen}


async def test_a_session_knows_what_its_person_is_called_and_a_chats_store_does_not(
    agent: Agent,
) -> None:
    """The sender's display name becomes the conversation's names (the whole name and its
    first word) when the session is theirs, is kept current on every message, and stays
    empty for a group's own store (whose person is the chat, not the speaker)."""
    sessions = Sessions(agent)
    chat = ChatAdapter()
    mine = chat.message("hi", user="1", name="Ada Lovelace")
    conversation = await sessions.get(SessionKey.for_message(mine), mine)
    assert conversation.names == ("Ada Lovelace", "Ada")
    assert conversation.subject.names == ("Ada Lovelace", "Ada")
    renamed = chat.message("hi again", user="1", name="Ada")
    again = await sessions.get(SessionKey.for_message(renamed), renamed)
    assert again is conversation and again.names == ("Ada",)
    group = chat.message("hi all", user="1", name="Ada", chat="-100", chat_type="group")
    shared = await sessions.get(SessionKey.for_message(group), group)
    assert shared.person != "telegram-1" and shared.names == ()
