"""Two gateways as two replicas of one bot, each with its own home, archive and platform
link, sharing one Redis: an update delivered to both is answered once, a flood wait one
replica was given holds for the other, and /healthz and /metrics report the backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.base import RateLimited
from gateway.config import Config
from gateway.coordination.redis import RedisCoordinator
from memory.archive.database import Archive
from tests.gateway.coordination.conftest import closed_port
from tests.gateway.rig import Rig, config
from tests.services import RedisTarget


@dataclass
class Pair:
    a: Rig
    b: Rig


async def _rig(
    tmp_path: Path, name: str, coordinator: RedisCoordinator, cfg: Config | None = None
) -> Rig:
    """A replica with its own archive; the home (pairing, memory) is shared, as the
    storage backend would share it."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    archive = await Archive.open(tmp_path / f"{name}.db")
    return Rig(home, archive, cfg or config(), coordinator=coordinator)


@pytest.fixture
def cfg(request: pytest.FixtureRequest) -> Config:
    """The replicas' config: ``config()``, or what a test parametrises (indirect)."""
    chosen: Config = getattr(request, "param", config())
    return chosen


@pytest.fixture
async def pair(tmp_path: Path, redis_target: RedisTarget, cfg: Config) -> AsyncIterator[Pair]:
    shared = [
        RedisCoordinator.connect(redis_target.url, namespace=redis_target.prefix) for _ in range(2)
    ]
    rigs = Pair(
        await _rig(tmp_path, "a", shared[0], cfg), await _rig(tmp_path, "b", shared[1], cfg)
    )
    for rig in (rigs.a, rigs.b):
        await rig.gateway.start()
    try:
        yield rigs
    finally:
        for rig, coordinator in zip((rigs.a, rigs.b), shared, strict=True):
            await rig.gateway.stop()
            await rig.archive.close()
            await coordinator.aclose()


async def test_an_update_delivered_to_both_replicas_is_answered_once(pair: Pair) -> None:
    for n in range(5):
        update = pair.a.adapter.message(f"hello {n}", update_id=f"u{n}")
        await asyncio.gather(pair.a.adapter.deliver(update), pair.b.adapter.deliver(update))
    await asyncio.sleep(0.3)
    for rig in (pair.a, pair.b):
        await rig.gateway.router.drain(5)
    said = "\n".join(pair.a.adapter.texts() + pair.b.adapter.texts())  # turns may merge
    assert [said.count(f"hello {n}") for n in range(5)] == [1] * 5
    dropped = sum(r.gateway.metrics.value("mnemo_redeliveries_total") for r in (pair.a, pair.b))
    assert dropped == 5


async def test_a_flood_wait_one_replica_got_holds_for_the_other(pair: Pair) -> None:
    """Two people in one group: two sessions (two leases), one chat, one flood limit."""
    pair.a.adapter.failures["-100"] = [RateLimited("flood control", 0.6)]
    began = asyncio.get_running_loop().time()
    await pair.a.adapter.say(
        "first", user="1", chat="-100", chat_type="group", mention=True, update_id="u1"
    )
    await asyncio.sleep(0.15)  # a was told to wait; b's reply comes in meanwhile
    await pair.b.adapter.say(
        "second", user="2", chat="-100", chat_type="group", mention=True, update_id="u2"
    )
    await pair.b.adapter.wait_sent(1, within=5)
    await pair.a.adapter.wait_sent(1, within=5)
    assert pair.b.adapter.sent[0].at - began >= 0.55  # not before a's flood wait ran out
    assert pair.a.adapter.texts() == ["echo: first"]
    assert pair.b.adapter.texts() == ["echo: second"]


async def test_health_and_metrics_report_the_backend(pair: Pair) -> None:
    gateway = pair.a.gateway
    assert await gateway.health() == (True, ["storage: sqlite", "coordination: redis"])
    await gateway.refresh_metrics()
    assert gateway.metrics.value("mnemo_coordination_up", backend="redis") == 1
    await pair.a.adapter.say("hi", update_id="u1")
    await pair.a.adapter.wait_sent(1)
    assert gateway.metrics.value("mnemo_lease_wait_seconds_count") >= 1


async def test_a_replica_whose_redis_is_gone_is_unhealthy(tmp_path: Path) -> None:
    down = RedisCoordinator.connect(
        f"redis://:hunter2@127.0.0.1:{closed_port()}/0", namespace="x:", timeout_s=0.5
    )
    rig = await _rig(tmp_path, "a", down)
    await rig.gateway.start()
    try:
        ok, lines = await rig.gateway.health()
        assert not ok
        assert lines == [
            "coordination: redis: Redis did not answer (ping: ConnectionError)",
            "storage: sqlite",
        ]
        await rig.gateway.refresh_metrics()
        assert rig.gateway.metrics.value("mnemo_coordination_up", backend="redis") == 0
        assert rig.gateway.metrics.value("mnemo_coordination_errors_total", op="ping") == 2
    finally:
        await rig.gateway.stop()
        await rig.archive.close()
        await down.aclose()


@pytest.mark.parametrize(
    "cfg", [config(limits={"turns_per_hour": 1, "tokens_per_day": 0})], indirect=True
)
async def test_a_person_over_budget_is_told_once_by_all_replicas(pair: Pair, cfg: Config) -> None:
    for n, rig in enumerate((pair.a, pair.b)):  # one turn in each replica's archive
        await rig.adapter.say(f"turn {n}", update_id=f"t{n}")
        await rig.adapter.wait_sent(1)
    for n, rig in enumerate((pair.a, pair.b, pair.a, pair.b)):  # over budget on both
        await rig.adapter.say(f"more {n}", update_id=f"m{n}")
    await asyncio.sleep(0.3)
    told = [t for t in pair.a.adapter.texts() + pair.b.adapter.texts() if "limit" in t]
    assert len(told) == 1
    limit = cfg.gateway.limits.turns_per_hour
    assert told[0].startswith(f"You've reached this bot's limit of {limit} messages an hour")


async def test_a_stranger_is_told_their_code_once_by_all_replicas(pair: Pair) -> None:
    for n, rig in enumerate((pair.a, pair.b, pair.a, pair.b)):
        await rig.adapter.say("hello?", user="55", update_id=f"s{n}")
    await asyncio.sleep(0.3)
    to_stranger = pair.a.adapter.texts("55") + pair.b.adapter.texts("55")
    assert len(to_stranger) == 1
    assert "pairing code" in to_stranger[0]
