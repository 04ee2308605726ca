"""The mem0 provider over the wire: the real ``mem0ai`` SDK (``AsyncMemoryClient``) against
the loopback fake (tests/fakes/mem0_server.py), alone and inside the agent's ``Recall``."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_core.recall import Recall, RecallSettings
from agent_core.tools import Tool
from memory.providers import Exchange, Provider, ProviderError, SessionEnd, Subject
from memory.providers.mem0 import Mem0Provider
from tests.fakes.mem0_server import FakeMem0
from tests.memory.providers.conftest import API_KEY

# Not importorskip("mem0"): importing mem0 here, before the provider turns its telemetry off
# and its folder private, is what the provider exists to avoid.
if importlib.util.find_spec("mem0") is None:
    pytest.skip("the mem0 extra (mem0ai) is not installed", allow_module_level=True)

ANA = Subject("telegram-5001")
BEN = Subject("telegram-5002")
GROUP = Subject("telegram-chat--100123", group=True)
AT = 1_700_000_000.0
KEY_CHECK = "/v1/ping/"
#: As the environment had it when this module was collected, before mem0 was imported.
GIVEN_MEM0_DIR = os.environ.get("MEM0_DIR")


def turn(subject: Subject, user: str, reply: str = "Noted.", session: str = "s1") -> Exchange:
    return Exchange(subject=subject, session_id=session, user=user, reply=reply, at=AT)


@pytest.fixture
def make(mem0_server: FakeMem0) -> Callable[..., Mem0Provider]:
    def build(**overrides: Any) -> Mem0Provider:
        settings: dict[str, Any] = {"base_url": mem0_server.base_url, "api_key": API_KEY}
        return Mem0Provider(**{**settings, "timeout_s": 2.0, **overrides})

    return build


@pytest.fixture
async def provider(make: Callable[..., Mem0Provider]) -> AsyncIterator[Mem0Provider]:
    mem0 = make()
    yield mem0
    await mem0.aclose()


def test_it_is_a_provider(provider: Mem0Provider) -> None:
    implementation: Provider = provider  # mypy checks the protocol
    assert implementation.name == "mem0"


# -- the hooks, over the wire ------------------------------------------------------------


async def test_a_synced_turn_is_found_by_prefetch_and_shows_in_the_context(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    assert await provider.prefetch(ANA, "how are my bees?") == ""
    await provider.sync_turn(turn(ANA, "I keep two bee hives on my roof in Lyon", "How lovely!"))

    assert await provider.prefetch(ANA, "Any news about the bee hives?") == (
        "- I keep two bee hives on my roof in Lyon"
    )
    assert await provider.context(ANA) == "- I keep two bee hives on my roof in Lyon"

    # on the wire: the key checked once, then the v3 endpoints with the subject as user_id
    assert mem0_server.paths() == [
        KEY_CHECK,
        "/v3/memories/search/",
        "/v3/memories/add/",
        "/v3/memories/search/",
        "/v3/memories/",
    ]
    add = next(r.body for r in mem0_server.requests if r.path == "/v3/memories/add/")
    assert add == {
        "messages": [
            {"role": "user", "content": "I keep two bee hives on my roof in Lyon"},
            {"role": "assistant", "content": "How lovely!"},
        ],
        "user_id": "telegram-5001",
        "metadata": {"session_id": "s1"},
        "timestamp": 1_700_000_000,
    }
    search = next(r.body for r in mem0_server.requests if r.path == "/v3/memories/search/")
    assert search == {
        "query": "how are my bees?",
        "filters": {"user_id": "telegram-5001"},
        "top_k": 5,
    }
    listing = mem0_server.requests[-1]
    assert listing.body == {"filters": {"user_id": "telegram-5001"}}
    assert listing.query == {"page": "1", "page_size": "20"}


async def test_the_context_lists_the_newest_memories_first(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    for text in ("I moved to Lyon", "I adopted a cat called Miso", "I  started\nrunning"):
        await provider.sync_turn(turn(ANA, text))
    assert (await provider.context(ANA)).splitlines() == [
        "- I started running",
        "- I adopted a cat called Miso",
        "- I moved to Lyon",
    ]


async def test_session_end_and_memory_writes_send_nothing(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    await provider.sync_turn(turn(ANA, "hello"))
    before = len(mem0_server.requests)
    await provider.on_memory_write(ANA, "add", "user", "Likes night trains")
    await provider.on_session_end(SessionEnd(ANA, "s1", "idle", (("user", "hello"),)))
    assert len(mem0_server.requests) == before


async def test_the_recall_tool_searches_the_persons_memories(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    await provider.sync_turn(turn(ANA, "My sister Clara lives in Porto"))
    (function,) = provider.tools(ANA)
    tool = Tool.from_function(function)
    assert tool.name == "recall" and tool.parameters["required"] == ["query"]
    assert await tool.invoke('{"query": "where does Clara live"}') == (
        '{"success": true, "found": ["My sister Clara lives in Porto"]}'
    )
    mem0_server.fail(503)
    assert await function(query="Clara") == {
        "success": False,
        "error": "mem0 recall failed: HTTP 503",
    }


async def test_a_blank_message_asks_nothing(provider: Mem0Provider, mem0_server: FakeMem0) -> None:
    assert await provider.prefetch(ANA, " \t\n") == ""
    assert mem0_server.requests == []  # not even the key check


# -- privacy ------------------------------------------------------------------------------


async def test_two_subjects_never_see_each_others_data(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    await provider.sync_turn(turn(ANA, "My bank PIN hint is the bees", session="g1"))
    await provider.sync_turn(turn(BEN, "I am scared of bees", session="g1"))
    await provider.sync_turn(turn(GROUP, "The group plans a bees excursion", session="g2"))

    assert await provider.prefetch(ANA, "bees") == "- My bank PIN hint is the bees"
    assert await provider.prefetch(BEN, "bees PIN hint") == "- I am scared of bees"
    assert await provider.prefetch(GROUP, "bees") == "- The group plans a bees excursion"
    assert await provider.context(BEN) == "- I am scared of bees"
    (recall,) = provider.tools(ANA)
    assert await recall(query="scared of bees") == {
        "success": True,
        "found": ["My bank PIN hint is the bees"],
    }
    assert mem0_server.memories_of("telegram-5002") == ["I am scared of bees"]


async def test_a_memory_of_another_user_in_a_search_answer_is_dropped(
    provider: Mem0Provider, mem0_server: FakeMem0
) -> None:
    await provider.sync_turn(turn(ANA, "bees everywhere"))
    await provider.sync_turn(turn(BEN, "bees nowhere"))
    mem0_server.leaky_search = True  # a server that got the scoping wrong
    assert await provider.prefetch(ANA, "bees") == "- bees everywhere"
    assert await provider.prefetch(BEN, "bees") == "- bees nowhere"


# -- the key, telemetry, the network --------------------------------------------------------


async def test_the_key_goes_only_in_the_token_header(
    provider: Mem0Provider, mem0_server: FakeMem0, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await provider.sync_turn(turn(ANA, "hello there"))
    await provider.prefetch(ANA, "hello")
    await provider.context(ANA)
    assert len(mem0_server.requests) == 4  # the key check (by requests) and three calls
    for request in mem0_server.requests:
        assert request.headers["authorization"] == f"Token {API_KEY}"
        assert API_KEY not in repr((request.path, request.query, request.body))
    assert API_KEY not in caplog.text


async def test_nothing_leaves_loopback_and_telemetry_is_off(
    make: Callable[..., Mem0Provider], mem0_server: FakeMem0, hosts: list[str]
) -> None:
    mem0 = make()
    await mem0.sync_turn(turn(ANA, "hello there"))
    await mem0.prefetch(ANA, "hello")
    await mem0.context(ANA)
    await mem0.prefetch(ANA, "x")
    await mem0.aclose()
    assert hosts and set(hosts) == {"127.0.0.1"}

    telemetry = sys.modules["mem0.memory.telemetry"]
    assert os.environ["MEM0_TELEMETRY"] == "False"
    assert telemetry.MEM0_TELEMETRY is False and telemetry.client_telemetry.posthog is None
    # the SDK's folder (for an anonymous id) is a private temporary one, unless one was given
    folder = Path(sys.modules["mem0.memory.setup"].mem0_dir)
    if GIVEN_MEM0_DIR:
        assert folder == Path(GIVEN_MEM0_DIR)
    else:
        assert folder.parent == Path(tempfile.gettempdir())
        assert folder.name.startswith("mnemo-mem0-") and _private(folder)


def _private(folder: Path) -> bool:
    return folder.stat().st_mode & 0o077 == 0


def test_constructing_needs_a_key_and_sends_nothing(
    monkeypatch: pytest.MonkeyPatch, hosts: list[str]
) -> None:
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    with pytest.raises(ValueError, match="mem0 needs an API key"):
        Mem0Provider(base_url="http://127.0.0.1:9")
    monkeypatch.setenv("MEM0_API_KEY", API_KEY)
    Mem0Provider(base_url="http://127.0.0.1:9")  # the key is checked at the first hook
    assert hosts == []


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
    make: Callable[..., Mem0Provider],
    mem0_server: FakeMem0,
    caplog: pytest.LogCaptureFixture,
    breakage: str,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    mem0 = make(timeout_s=0.3)
    await mem0.sync_turn(turn(ANA, "a first turn, before anything breaks"))
    if breakage == "500":
        mem0_server.fail(500)
    elif breakage == "401":
        mem0_server.api_key = "another-key"
    elif breakage == "malformed":
        mem0_server.malformed()
    elif breakage == "slow":
        mem0_server.slow(5.0)
    else:
        await mem0_server.close()
    before, started = len(mem0_server.requests), time.monotonic()
    with pytest.raises(ProviderError) as raised:
        await mem0.prefetch(ANA, "first turn")
    assert time.monotonic() - started < 2.0
    assert len(mem0_server.requests) - before == (breakage != "down")
    await mem0.aclose()
    assert str(raised.value) == f"mem0 prefetch failed: {reason}"
    told = "".join(traceback.format_exception(raised.value)) + caplog.text
    assert API_KEY not in told


@pytest.mark.parametrize(
    ("breakage", "reason"),
    [
        ("401", "HTTP 401, the API key was refused"),
        ("500", "HTTP 500"),
        ("malformed", "the answer was not JSON"),
        ("down", "no connection"),
    ],
)
async def test_a_failed_key_check_is_a_provider_error_and_is_tried_again(
    make: Callable[..., Mem0Provider],
    mem0_server: FakeMem0,
    caplog: pytest.LogCaptureFixture,
    breakage: str,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    base_url = "http://127.0.0.1:9" if breakage == "down" else mem0_server.base_url  # discard
    mem0 = make(base_url=base_url, api_key="wrong-key" if breakage == "401" else API_KEY)
    if breakage == "500":
        mem0_server.fail(500, path=KEY_CHECK)
    elif breakage == "malformed":
        mem0_server.malformed(path=KEY_CHECK)
    with pytest.raises(ProviderError) as raised:
        await mem0.context(ANA)
    assert str(raised.value) == f"mem0 context failed at the key check (GET /v1/ping/): {reason}"
    assert "wrong-key" not in "".join(traceback.format_exception(raised.value)) + caplog.text
    if breakage in ("500", "malformed"):  # the same provider checks again, and goes on
        mem0_server.heal()
        assert await mem0.context(ANA) == ""
        assert mem0_server.paths().count(KEY_CHECK) == 2
    await mem0.aclose()


async def test_a_slow_key_check_costs_a_hook_its_timeout_and_counts_when_it_comes(
    make: Callable[..., Mem0Provider], mem0_server: FakeMem0
) -> None:
    mem0 = make(timeout_s=0.3)
    mem0_server.slow(1.5, path=KEY_CHECK, times=1)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"at the key check .*: no answer within 0\.3 s"):
        await mem0.prefetch(ANA, "bees")
    assert time.monotonic() - started < 1.2  # the event loop was never blocked by it
    while True:  # the check answers late, in its thread; the hooks wait for it meanwhile
        try:
            assert await mem0.prefetch(ANA, "bees") == ""
            break
        except ProviderError:
            assert time.monotonic() - started < 10
    assert mem0_server.paths().count(KEY_CHECK) == 1  # it counted: not asked again
    await mem0.aclose()


# -- inside the agent's Recall ---------------------------------------------------------------


async def test_inside_recall_a_broken_or_slow_server_costs_a_turn_nothing(
    make: Callable[..., Mem0Provider], mem0_server: FakeMem0
) -> None:
    seen: list[tuple[str, str, str, float]] = []
    mem0 = make(timeout_s=5.0)  # the SDK's own timeout is not what bounds the hook
    recall = Recall(
        mem0,
        RecallSettings(prefetch_timeout_ms=200, timeout_s=0.5),
        lambda *call: seen.append(call),
    )
    await recall.sync_turn(turn(ANA, "I restore old bicycles"))
    assert "I restore old bicycles" in await recall.prefetch(ANA, "old bicycles")

    mem0_server.slow(3.0)
    started = time.monotonic()
    assert await recall.prefetch(ANA, "old bicycles") == ""
    assert await recall.context(ANA) == ""
    assert time.monotonic() - started < 1.5  # 0.2 s + 0.5 s, not the server's 3 s
    mem0_server.heal()
    mem0_server.fail(500)
    assert await recall.prefetch(ANA, "old bicycles") == ""
    await recall.sync_turn(turn(ANA, "lost"))
    mem0_server.heal()
    assert await recall.prefetch(ANA, "bicycles") != ""
    await mem0.aclose()

    assert [(hook, outcome) for _, hook, outcome, _ in seen] == [
        ("sync_turn", "ok"),
        ("prefetch", "ok"),
        ("prefetch", "timeout"),
        ("context", "timeout"),
        ("prefetch", "error"),
        ("sync_turn", "error"),
        ("prefetch", "ok"),
    ]
    assert mem0_server.memories_of("telegram-5001") == ["I restore old bicycles"]
