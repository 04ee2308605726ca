"""The local memory provider through the gateway: a real model of sentences, a real archive,
the in-process chat adapter and a scripted chat model (skipped, saying so, without `pip
install 'mnemo[local]'`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agent_core.card import CARD_INSTRUCTION, ModelCardWriter
from agent_core.models import ChatMessage, ModelReply, ToolSpec
from agent_core.models.scripted import ScriptedModel
from agent_core.recall import FENCE
from gateway.service import Gateway
from memory.archive.database import Archive
from memory.providers import Subject
from tests.gateway.harness import InChat
from tests.gateway.rig import ADMIN, Rig, config, responder

pytest.importorskip("onnxruntime", reason="the local provider's extra: pip install 'mnemo[local]'")

from memory.providers.local import Embedder, LocalProvider

CARD = "Works on a thesis about river ecology; prefers bullet points."


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    model = Embedder()
    model.load()
    return model


def with_cards() -> ScriptedModel:
    """The rig's echo model, which also writes person cards when asked."""
    echo = responder()

    async def answer(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        if str(messages[0]["content"]).startswith(CARD_INSTRUCTION[:40]):
            return ModelReply(CARD)
        return await echo(messages, tools)

    return ScriptedModel(respond=answer)


@pytest.fixture
async def local(
    home: Path, archive: Archive, embedder: Embedder
) -> AsyncIterator[tuple[Rig, Gateway, LocalProvider]]:
    rig = Rig(home, archive, config())
    rig.model = with_cards()
    provider = LocalProvider(archive, embedder=embedder, writer=ModelCardWriter(rig.model))
    await provider.start()
    gateway = rig.build(provider)
    async with gateway:
        yield rig, gateway, provider
    await provider.aclose()


async def wait_indexed(provider: LocalProvider, count: int) -> None:
    for _ in range(300):
        if (await provider.vectors.counts())[0] >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"not indexed: {await provider.vectors.counts()}")


async def two_pet_owners(rig: Rig) -> None:
    """Ana (1) tells of her kitten, Ben (2) of his cat, each in a DM, each answered."""
    await rig.adapter.say("I adopted a grey kitten called Miso", user="1")
    await rig.adapter.wait_sent(1, chat="1")
    await rig.adapter.say("My cat Pixel sleeps on my keyboard", user="2")
    await rig.adapter.wait_sent(1, chat="2")


async def test_a_later_session_recalls_by_meaning_in_the_user_message_only(
    local: tuple[Rig, Gateway, LocalProvider],
) -> None:
    rig, _, provider = local
    await two_pet_owners(rig)
    await rig.adapter.say("/new", user="1")
    await rig.adapter.wait_sent(2, chat="1")
    await wait_indexed(provider, 4)
    for _ in range(300):  # the card is written in the background after /new
        if await provider.card(Subject("telegram-1")) is not None:
            break
        await asyncio.sleep(0.02)
    asked = len(rig.model.requests)
    await rig.adapter.say("Which animal do I live with?", user="1")
    await rig.adapter.wait_sent(3, chat="1")
    request = rig.model.requests[asked]
    user = request.messages[-1]["content"]
    assert f'<{FENCE} source="local">' in user and "Miso" in user
    assert "Pixel" not in str(request.messages)  # person 2's cat never reaches person 1
    system = request.messages[0]["content"]
    assert FENCE not in system and "Miso" not in system
    # the card person 1's first session left is in the new session's frozen prompt
    assert CARD in system


async def test_memory_card_and_provider_commands(local: tuple[Rig, Gateway, LocalProvider]) -> None:
    rig, _, _ = local
    await rig.adapter.say("/memory card", user="1")
    await rig.adapter.wait_sent(1, chat="1")
    assert "No card yet for your memory" in rig.adapter.texts("1")[0]
    await rig.adapter.say("I am writing a thesis on rivers", user="1")
    await rig.adapter.wait_sent(2, chat="1")
    await rig.adapter.say("/new", user="1")
    await rig.adapter.wait_sent(3, chat="1")
    for _ in range(100):  # the card is written in the background
        await rig.adapter.say("/memory card", user="1")
        await rig.adapter.wait_sent(4, chat="1")
        if CARD in rig.adapter.texts("1")[-1]:
            break
        rig.adapter.sent.pop()
        await asyncio.sleep(0.02)
    assert rig.adapter.texts("1")[-1] == f"The card of your memory:\n{CARD}"
    await rig.adapter.say("/memory card", user="2")
    await rig.adapter.wait_sent(1, chat="2")
    assert CARD not in rig.adapter.texts("2")[0]
    await rig.adapter.say("/memory provider", user="2")
    await rig.adapter.wait_sent(2, chat="2")
    assert "for the admins" in rig.adapter.texts("2")[1]
    await rig.adapter.say("/memory provider", user=ADMIN)
    await rig.adapter.wait_sent(1, chat=ADMIN)
    status = rig.adapter.texts(ADMIN)[0]
    assert status.startswith("Memory provider local:") and "indexer: running" in status


async def test_a_group_recalls_its_own_history_and_never_a_members_private_one(
    local: tuple[Rig, Gateway, LocalProvider],
) -> None:
    rig, _, provider = local
    group: InChat = {"chat": "-100", "chat_type": "group"}
    await rig.adapter.say("I adopted a grey kitten called Miso", user="1")
    await rig.adapter.wait_sent(1, chat="1")
    await rig.adapter.say(
        "The team offsite will be in Lisbon this year", user="2", mention=True, **group
    )
    await rig.adapter.wait_sent(1, chat="-100")
    await rig.adapter.say("/new", user=ADMIN, mention=True, **group)
    await rig.adapter.wait_sent(2, chat="-100")
    await wait_indexed(provider, 4)
    asked = len(rig.model.requests)
    await rig.adapter.say("Where is our team offsite this year?", user="1", mention=True, **group)
    await rig.adapter.wait_sent(3, chat="-100")
    assert "Lisbon" in str(rig.model.requests[asked].messages)  # the group's own history
    # member 1's private chat never: not even the closest candidates the group may see
    group_subject = Subject("telegram-chat--100", group=True)
    found = await provider.search(group_subject, "my grey kitten", limit=20, min_similarity=0.0)
    assert found and not any("Miso" in item.text for item in found)


async def test_session_search_finds_by_meaning_within_the_askers_scope_only(
    local: tuple[Rig, Gateway, LocalProvider],
) -> None:
    """The gateway wires the provider's ranking into session_search: in her DM Ana finds her
    kitten with no word of it; in the group (memory.group_scope: chat) neither her kitten
    nor Ben's cat, though both are closer in meaning than anything the group said."""
    rig, _, provider = local
    group: InChat = {"chat": "-100", "chat_type": "group"}
    await two_pet_owners(rig)
    await rig.adapter.say("The offsite is in Lisbon", user="2", mention=True, **group)
    await rig.adapter.wait_sent(1, chat="-100")
    await rig.adapter.say("/new", user="1")
    await rig.adapter.wait_sent(2, chat="1")
    await wait_indexed(provider, 6)
    await rig.adapter.say("search: which pet lives with me", user="1")
    await rig.adapter.wait_sent(3, chat="1")
    await rig.adapter.say("search: which pet lives with me", user="1", mention=True, **group)
    await rig.adapter.wait_sent(2, chat="-100")
    in_dm, in_group = rig.tool_results()[-2:]
    assert "Miso" in in_dm and "Pixel" not in in_dm
    assert "Miso" not in in_group and "Pixel" not in in_group


async def test_slash_search_finds_by_meaning_too_and_only_the_askers_own(
    local: tuple[Rig, Gateway, LocalProvider],
) -> None:
    """/search fuses the same ranking by meaning as session_search: Ana finds her kitten
    with no word of it, never Ben's cat (closer in meaning than anything else he said)."""
    rig, _, provider = local
    await two_pet_owners(rig)
    await wait_indexed(provider, 4)
    await rig.adapter.say("/search which pet lives with me", user="1")
    await rig.adapter.wait_sent(2, chat="1")
    answer = rig.adapter.texts("1")[-1]
    assert "Miso" in answer and "Pixel" not in answer
