"""The Honcho provider over the wire: the real ``honcho-ai`` SDK against the loopback fake
(tests/fakes/honcho_server.py), alone and inside the agent's ``Recall``."""

from __future__ import annotations

import logging
import re
import time
import traceback
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("honcho", reason="the honcho extra (honcho-ai) is not installed")

from agent_core.recall import Recall, RecallSettings
from agent_core.tools import Tool
from memory.providers import Exchange, Provider, ProviderError, SessionEnd, Subject
from memory.providers.honcho import (
    ASSISTANT_PEER,
    HonchoProvider,
    honcho_name,
    session_name,
)
from tests.fakes.honcho_server import FakeHoncho
from tests.memory.providers.conftest import API_KEY

ANA = Subject("telegram-5001")
BEN = Subject("telegram-5002")
GROUP = Subject("telegram-chat--100123", group=True)
AT = 1_700_000_000.0


def turn(subject: Subject, user: str, reply: str = "Noted.", session: str = "s1") -> Exchange:
    return Exchange(subject=subject, session_id=session, user=user, reply=reply, at=AT)


@pytest.fixture
def make(honcho_server: FakeHoncho) -> Callable[..., HonchoProvider]:
    def build(**overrides: Any) -> HonchoProvider:
        settings: dict[str, Any] = {"base_url": honcho_server.base_url, "api_key": API_KEY}
        return HonchoProvider(**{**settings, "timeout_s": 2.0, **overrides})

    return build


@pytest.fixture
async def provider(make: Callable[..., HonchoProvider]) -> AsyncIterator[HonchoProvider]:
    honcho = make()
    yield honcho
    await honcho.aclose()


def test_it_is_a_provider(provider: HonchoProvider) -> None:
    implementation: Provider = provider  # mypy checks the protocol
    assert implementation.name == "honcho"


# -- the hooks, over the wire ------------------------------------------------------------


async def test_a_synced_turn_is_found_by_prefetch_and_shows_in_the_context(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    assert await provider.prefetch(ANA, "how are my bees?") == ""
    await provider.sync_turn(turn(ANA, "I keep two bee hives on my roof in Lyon", "How lovely!"))

    recalled = await provider.prefetch(ANA, "Any news about the bee hives?")
    assert recalled == "- I keep two bee hives on my roof in Lyon"
    context = await provider.context(ANA)
    assert "I keep two bee hives on my roof in Lyon" in context
    assert "How lovely!" not in context  # the bot is not modelled

    # on the wire: one Honcho session for (s1, Ana), her message by her peer, the reply by
    # the bot's, both dated when the reply was made
    sent = [r.body for r in honcho_server.requests if r.path.endswith("/messages")]
    assert [m["peer_id"] for m in sent[0]["messages"]] == ["telegram-5001", ASSISTANT_PEER]
    assert {m["created_at"] for m in sent[0]["messages"]} == {"2023-11-14T22:13:20Z"}
    assert ("mnemo", "s1_s_telegram-5001") in honcho_server.sessions
    assert honcho_server.peers[("mnemo", ASSISTANT_PEER)]["configuration"] == {"observe_me": False}


async def test_the_context_puts_the_peer_card_before_the_representation(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    await provider.sync_turn(turn(ANA, "I switched to decaf last week"))
    honcho_server.cards[("mnemo", "telegram-5001")] = ["Name: Ana", "Lives in Lyon"]
    assert (await provider.context(ANA)).splitlines() == [
        "- Name: Ana",
        "- Lives in Lyon",
        "Explicit observations:",
        "- I switched to decaf last week",
    ]


async def test_workspace_session_and_peers_are_made_sure_of_once(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    for n in range(3):
        await provider.sync_turn(turn(ANA, f"message {n} about trains"))
        await provider.prefetch(ANA, "trains")
    posts = honcho_server.paths("POST")
    assert posts.count("/v3/workspaces") == 1
    assert posts.count("/v3/workspaces/mnemo/sessions") == 1
    assert posts.count("/v3/workspaces/mnemo/peers") == 2  # the bot's, then Ana's
    assert posts.count("/v3/workspaces/mnemo/sessions/s1_s_telegram-5001/messages") == 3
    assert honcho_server.said_by("telegram-5001") == [f"message {n} about trains" for n in range(3)]


async def test_session_end_and_memory_writes_send_nothing(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    await provider.sync_turn(turn(ANA, "hello"))
    before = len(honcho_server.requests)
    await provider.on_memory_write(ANA, "add", "user", "Likes night trains")
    await provider.on_session_end(SessionEnd(ANA, "s1", "new", (("user", "hello"),)))
    assert len(honcho_server.requests) == before
    # the session is forgotten here, so a later turn of it makes sure of it again
    await provider.sync_turn(turn(ANA, "hello again"))
    assert honcho_server.paths("POST")[before:] == [
        "/v3/workspaces/mnemo/sessions",
        "/v3/workspaces/mnemo/sessions/s1_s_telegram-5001/messages",
    ]


async def test_the_recall_tool_searches_the_persons_messages(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    await provider.sync_turn(turn(ANA, "My sister Clara lives in Porto"))
    (function,) = provider.tools(ANA)
    tool = Tool.from_function(function)
    assert tool.name == "recall" and tool.parameters["required"] == ["query"]
    assert await tool.invoke('{"query": "where does Clara live"}') == (
        '{"success": true, "found": ["My sister Clara lives in Porto"]}'
    )
    honcho_server.fail(503)
    failed = await function(query="Clara")
    assert failed == {"success": False, "error": "honcho recall failed: HTTP 503"}


async def test_a_blank_message_asks_nothing(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    assert await provider.prefetch(ANA, "  \n ") == ""
    assert honcho_server.requests == []


# -- privacy ------------------------------------------------------------------------------


async def test_two_subjects_never_see_each_others_data(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    # the same session, as in a group chat kept per person, and the same words
    await provider.sync_turn(turn(ANA, "My bank PIN hint is the bees", session="g1"))
    await provider.sync_turn(turn(BEN, "I am scared of bees", session="g1"))
    await provider.sync_turn(turn(GROUP, "The group plans a bees excursion", session="g2"))

    assert await provider.prefetch(ANA, "bees") == "- My bank PIN hint is the bees"
    assert await provider.prefetch(BEN, "bees") == "- I am scared of bees"
    assert await provider.prefetch(GROUP, "bees") == "- The group plans a bees excursion"
    assert "PIN" not in await provider.context(BEN)
    assert "scared" not in await provider.context(ANA)
    (recall,) = provider.tools(BEN)
    assert await recall(query="bees PIN hint") == {
        "success": True,
        "found": ["I am scared of bees"],
    }
    # each person's turns sit in a Honcho session of their own, with only them and the bot
    assert {key[1]: set(s["peers"]) for key, s in honcho_server.sessions.items()} == {
        "g1_s_telegram-5001": {"telegram-5001", ASSISTANT_PEER},
        "g1_s_telegram-5002": {"telegram-5002", ASSISTANT_PEER},
        "g2_s_telegram-chat--100123": {"telegram-chat--100123", ASSISTANT_PEER},
    }


async def test_a_message_of_another_peer_in_a_search_answer_is_dropped(
    provider: HonchoProvider, honcho_server: FakeHoncho
) -> None:
    await provider.sync_turn(turn(ANA, "bees everywhere"))
    await provider.sync_turn(turn(BEN, "bees nowhere"))
    honcho_server.leaky_search = True  # a server that got the scoping wrong
    assert await provider.prefetch(ANA, "bees") == "- bees everywhere"
    (recall,) = provider.tools(BEN)
    assert await recall(query="bees") == {"success": True, "found": ["bees nowhere"]}


# -- ids ----------------------------------------------------------------------------------


def _decoded(name: str) -> str:
    """The key ``honcho_name`` made ``name`` from (for names it did not hash)."""
    out, i = bytearray(), 0
    while i < len(name):
        if name[i] == "_":
            out.append(int(name[i + 1 : i + 3], 16))
            i += 3
        else:
            out += name[i].encode()
            i += 1
    return out.decode()


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("telegram-5001", "telegram-5001"),
        ("telegram-chat--100123", "telegram-chat--100123"),
        ("discord-42.alt", "discord-42_2ealt"),
        ("a_2e", "a_5f2e"),
        ("a.", "a_2e"),
        ("zoë", "zo_c3_ab"),
        ("s0123456789abcdef0123", "s0123456789abcdef0123"),
    ],
)
def test_keys_become_honcho_names(key: str, name: str) -> None:
    assert honcho_name(key) == name


@given(st.text(max_size=42))  # at most 504 characters escaped: none is hashed
def test_names_are_valid_and_tell_keys_apart(key: str) -> None:
    name = honcho_name(key)
    assert re.fullmatch(r"[A-Za-z0-9_-]*", name)
    assert _decoded(name) == key  # so no two keys share a name


def test_a_long_key_is_hashed_within_the_limit() -> None:
    keys = ["x" * 600, "x" * 599 + "y", "." * 200]
    names = [honcho_name(k) for k in keys]
    assert all(len(n) <= 512 and re.fullmatch(r"[A-Za-z0-9_-]+", n) for n in names)
    assert len(set(names)) == 3 and "_h" in names[0]


def test_the_bot_and_sessions_have_names_no_key_maps_to() -> None:
    assert _decoded_or_none(ASSISTANT_PEER) is None
    assert session_name("s1", "a_s_b") != session_name("s1_s_a", "b")


def _decoded_or_none(name: str) -> str | None:
    try:
        return _decoded(name)
    except ValueError:
        return None


def test_a_workspace_must_be_a_honcho_name() -> None:
    with pytest.raises(ValueError, match="invalid Honcho workspace"):
        HonchoProvider(base_url="http://127.0.0.1:9", workspace="my workspace")


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("breakage", "reason"),
    [
        ("500", "HTTP 500"),
        ("401", "HTTP 401, the API key was refused"),
        ("malformed", "the answer was not JSON"),
        ("slow", "no answer within 0.3 s"),
        ("down", "no connection"),
    ],
)
async def test_a_failure_is_a_provider_error_without_the_key(
    make: Callable[..., HonchoProvider],
    honcho_server: FakeHoncho,
    caplog: pytest.LogCaptureFixture,
    breakage: str,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    honcho = make(timeout_s=0.3)
    await honcho.sync_turn(turn(ANA, "a first turn, before anything breaks"))
    if breakage == "500":
        honcho_server.fail(500)
    elif breakage == "401":
        honcho_server.api_key = "another-key"
    elif breakage == "malformed":
        honcho_server.malformed()
    elif breakage == "slow":
        honcho_server.slow(5.0)
    else:
        await honcho_server.close()
    before, started = len(honcho_server.requests), time.monotonic()
    with pytest.raises(ProviderError) as raised:
        await honcho.prefetch(ANA, "first turn")
    assert time.monotonic() - started < 2.0  # no waiting past the timeout
    assert len(honcho_server.requests) - before == (breakage != "down")  # and no retry
    await honcho.aclose()
    assert str(raised.value) == f"honcho prefetch failed: {reason}"
    told = "".join(traceback.format_exception(raised.value)) + caplog.text
    assert API_KEY not in told


async def test_the_key_goes_only_in_the_bearer_header(
    provider: HonchoProvider, honcho_server: FakeHoncho, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await provider.sync_turn(turn(ANA, "hello there"))
    await provider.prefetch(ANA, "hello")
    await provider.context(ANA)
    assert len(honcho_server.requests) == 7
    for request in honcho_server.requests:
        assert request.headers["authorization"] == f"Bearer {API_KEY}"
        assert API_KEY not in repr((request.path, request.query, request.body))
    assert API_KEY not in caplog.text


async def test_nothing_leaves_loopback(
    make: Callable[..., HonchoProvider], honcho_server: FakeHoncho, hosts: list[str]
) -> None:
    honcho = make()
    await honcho.sync_turn(turn(ANA, "hello there"))
    await honcho.prefetch(ANA, "hello")
    await honcho.context(ANA)
    await honcho.aclose()
    assert hosts and set(hosts) == {"127.0.0.1"}


async def test_a_refused_key_fails_every_hook(make: Callable[..., HonchoProvider]) -> None:
    honcho = make(api_key="wrong-key")
    for call in (
        honcho.context(ANA),
        honcho.prefetch(ANA, "x"),
        honcho.sync_turn(turn(ANA, "x")),
    ):
        with pytest.raises(ProviderError, match="the API key was refused"):
            await call
    await honcho.aclose()


# -- inside the agent's Recall ---------------------------------------------------------------


async def test_inside_recall_a_broken_or_slow_server_costs_a_turn_nothing(
    make: Callable[..., HonchoProvider], honcho_server: FakeHoncho
) -> None:
    seen: list[tuple[str, str, str, float]] = []
    honcho = make(timeout_s=5.0)  # the SDK's own timeout is not what bounds the hook
    recall = Recall(
        honcho,
        RecallSettings(prefetch_timeout_ms=200, timeout_s=0.5),
        lambda *call: seen.append(call),
    )
    await recall.sync_turn(turn(ANA, "I restore old bicycles"))
    assert "I restore old bicycles" in await recall.prefetch(ANA, "old bicycles")

    honcho_server.slow(3.0)
    started = time.monotonic()
    assert await recall.prefetch(ANA, "old bicycles") == ""
    assert await recall.context(ANA) == ""
    assert time.monotonic() - started < 1.5  # 0.2 s + 0.5 s, not the server's 3 s
    honcho_server.heal()
    honcho_server.fail(500)
    assert await recall.prefetch(ANA, "old bicycles") == ""
    await recall.sync_turn(turn(ANA, "lost"))
    honcho_server.heal()
    assert await recall.prefetch(ANA, "bicycles") != ""
    await honcho.aclose()

    assert [(hook, outcome) for _, hook, outcome, _ in seen] == [
        ("sync_turn", "ok"),
        ("prefetch", "ok"),
        ("prefetch", "timeout"),
        ("context", "timeout"),
        ("prefetch", "error"),
        ("sync_turn", "error"),
        ("prefetch", "ok"),
    ]
    assert {name for name, *_ in seen} == {"honcho"}
