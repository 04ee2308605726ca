"""Replicas sharing one PostgreSQL ledger: the chats of a replica that dies go on with the
others — each update it left unanswered is told once that its answer was lost, each reply
it stored but never sent is delivered (``gateway.replicas``, ``gateway.ledger_postgres``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from redis.asyncio import Redis

from gateway.config import Paths
from gateway.config.storage import StorageConfig
from gateway.coordination.redis import RedisCoordinator
from gateway.ledger import Inbound, Outgoing
from gateway.ledger_postgres import PgLedger
from gateway.replies import RESTARTED
from gateway.storage import open_storage
from memory.archive.database import Archive
from tests.gateway.rig import Rig, config
from tests.services import RedisTarget, postgres_schema

DEAD_AFTER_S = 0.6


@pytest.fixture
async def pool(postgres_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(postgres_dsn, min_size=1, max_size=8) as opened:
        yield opened


async def _survivor(tmp_path: Path, name: str, pool: asyncpg.Pool) -> tuple[Rig, Archive]:
    home = tmp_path / name
    home.mkdir()
    archive = await Archive.open(home / "state.db")
    rig = Rig(home, archive, config())
    ledger = await PgLedger(pool, dead_after_s=DEAD_AFTER_S).open()
    rig.gateway = rig.build(ledger=ledger)
    await rig.gateway.start()
    return rig, archive


async def test_a_killed_replicas_chats_are_taken_over_once(
    tmp_path: Path, pool: asyncpg.Pool
) -> None:
    killed = await PgLedger(pool, dead_after_s=DEAD_AFTER_S).open()
    cut = Inbound("telegram:1:77", "telegram:dm:1", "telegram", "1", None, "77", time.time())
    assert await killed.accept(cut)
    await killed.enqueue(Outgoing("telegram", "2", "the answer it never sent"))
    # killed: no leave(), its heartbeat simply stops
    survivors = [await _survivor(tmp_path, f"r{i}", pool) for i in range(2)]
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            sent = [s for rig, _ in survivors for s in rig.adapter.sent]
            if {s.message.chat_id for s in sent} >= {"1", "2"}:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(DEAD_AFTER_S)  # more sweeps: nothing is handed over twice
        sent = [s for rig, _ in survivors for s in rig.adapter.sent]
        told = [s for s in sent if s.message.chat_id == "1"]
        assert [s.message.text for s in told] == [RESTARTED]
        assert told[0].message.reply_to_message_id == "77"
        assert [s.message.text for s in sent if s.message.chat_id == "2"] == [
            "the answer it never sent"
        ]
        watches = [rig.gateway.watch for rig, _ in survivors]
        assert sum(w.taken_updates + w.taken_replies for w in watches if w) == 2
    finally:
        for rig, archive in survivors:
            await rig.gateway.stop()
            await archive.close()


async def test_a_replica_that_stops_cleanly_leaves_nothing_to_take(
    tmp_path: Path, pool: asyncpg.Pool
) -> None:
    (one, one_archive), (two, two_archive) = [
        await _survivor(tmp_path, name, pool) for name in ("a", "b")
    ]
    try:
        await one.gateway.stop()
        live = await PgLedger(pool).live_replicas()
        assert isinstance(two.gateway.ledger, PgLedger)
        assert live == [two.gateway.ledger.replica]
        assert await two.gateway.ledger.interrupted() == []
    finally:
        await two.gateway.stop()
        await one_archive.close()
        await two_archive.close()


async def test_a_chat_that_moved_between_replicas_keeps_its_whole_history(
    tmp_path: Path,
) -> None:
    """Messages of one chat answered by replicas A, B, A: when the chat comes back to A, A's
    model sees B's turn too (A's live conversation is older than the archive: it resumes)."""
    async with postgres_schema() as dsn, contextlib.AsyncExitStack() as stack:
        env = {"MNEMO_POSTGRES_DSN": dsn}
        base = config()
        cfg = base.model_copy(update={"storage": StorageConfig(backend="postgres")})
        rigs = []
        for name in ("a", "b"):
            home = tmp_path / name
            home.mkdir()
            paths = Paths(home, home / "config.yaml", explicit_config=False)
            storage = await stack.enter_async_context(open_storage(paths, cfg, env))
            rig = Rig(home, storage.archive, cfg, storage=storage)
            await rig.gateway.start()
            stack.push_async_callback(rig.gateway.stop)
            rigs.append(rig)
        a, b = rigs
        for n, rig in enumerate((a, b, a)):
            await rig.adapter.say(f"message number {n}", user="1", update_id=f"u{n}")
            await rig.adapter.wait_sent(1 if rig is b else n // 2 + 1)
        last = json.dumps(a.model.requests[-1].messages)
        assert "message number 1" in last and "echo: message number 1" in last
        assert last.index("message number 0") < last.index("message number 1")


async def test_with_a_shared_ledger_it_alone_takes_each_update_once(
    tmp_path: Path, pool: asyncpg.Pool, redis_target: RedisTarget
) -> None:
    """Two replicas on one PostgreSQL ledger and one Redis, each update delivered to both:
    answered once, decided by the ledger's accept; no claim is asked of Redis (one round
    trip an update less)."""
    coordinators = [
        RedisCoordinator.connect(redis_target.url, namespace=redis_target.prefix) for _ in "ab"
    ]
    rigs, archives = [], []
    for name, coordinator in zip("ab", coordinators, strict=True):
        home = tmp_path / name
        home.mkdir()
        archive = await Archive.open(home / "state.db")
        rig = Rig(home, archive, config(), coordinator=coordinator)
        rig.gateway = rig.build(ledger=await PgLedger(pool).open())
        await rig.gateway.start()
        rigs.append(rig)
        archives.append(archive)
    try:
        for n in range(3):
            update = rigs[0].adapter.message(f"hello {n}", update_id=f"u{n}")
            await asyncio.gather(*(rig.adapter.deliver(update) for rig in rigs))
        for rig in rigs:
            await rig.gateway.router.drain(5)
        said = "\n".join(rigs[0].adapter.texts() + rigs[1].adapter.texts())
        assert [said.count(f"hello {n}") for n in range(3)] == [1, 1, 1]
        dropped = sum(rig.gateway.metrics.value("mnemo_redeliveries_total") for rig in rigs)
        assert dropped == 3
        client = Redis.from_url(redis_target.url)
        try:
            claims = [k async for k in client.scan_iter(match=f"{redis_target.prefix}claim:*")]
        finally:
            await client.aclose()
        assert claims == []
    finally:
        for rig, archive, coordinator in zip(rigs, archives, coordinators, strict=True):
            await rig.gateway.stop()
            await archive.close()
            await coordinator.aclose()


async def test_a_replica_takes_over_only_the_platforms_it_runs(pool: asyncpg.Pool) -> None:
    """A reply for a platform a replica does not run would sit under its name, unsent, for
    as long as it lives: it is left to a replica that runs that platform."""
    killed = await PgLedger(pool, dead_after_s=DEAD_AFTER_S).open()
    now = time.time()
    for platform in ("telegram", "discord"):
        await killed.accept(Inbound(f"{platform}:1:5", f"{platform}:dm:1", platform, "1", None,
                                    "5", now))  # fmt: skip
        await killed.enqueue(Outgoing(platform, "2", f"unsent on {platform}"))
    await asyncio.sleep(DEAD_AFTER_S * 1.5)  # its heartbeat stopped
    telegram_only = await PgLedger(pool, dead_after_s=DEAD_AFTER_S, platforms={"telegram"}).open()
    assert [i.platform for i in await telegram_only.interrupted()] == ["telegram"]
    assert [r.text for r in await telegram_only.orphans()] == ["unsent on telegram"]
    every = await PgLedger(pool, dead_after_s=DEAD_AFTER_S).open()
    assert [i.platform for i in await every.interrupted()] == ["discord"]
    assert [r.text for r in await every.orphans()] == ["unsent on discord"]
