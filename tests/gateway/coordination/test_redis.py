"""What only a shared backend can go through: a replica that dies or loses its link while
holding a lease, a lease taken away, and Redis not answering at all."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable

import pytest
from redis.asyncio import Redis

from gateway.coordination import (
    CoordinationError,
    CoordinationUnavailable,
    Coordinator,
    LeaseLost,
    open_coordinator,
)
from gateway.metrics import Metrics
from tests.fakes.tcp_proxy import TcpProxy
from tests.gateway.coordination.conftest import (
    LEASE_TTL_S,
    closed_port,
    redis_coordinator,
    upstream,
    via,
)
from tests.services import RedisTarget


async def test_a_dead_holder_loses_the_lease_after_the_ttl_and_another_goes_on(
    redis_target: RedisTarget,
) -> None:
    metrics = Metrics(process=False)
    other = redis_coordinator(redis_target)
    async with TcpProxy(*upstream(redis_target)) as link:
        dying = redis_coordinator(
            redis_target, url=via(redis_target, link.port), metrics=metrics, timeout_s=0.2
        )
        told = asyncio.Event()
        held = asyncio.Event()

        async def holder() -> None:
            async with dying.lease("chat:1", on_lost=told.set) as lease:
                held.set()
                await asyncio.wait_for(told.wait(), 5)
                assert lease.lost
                with pytest.raises(LeaseLost):
                    lease.check()

        task = asyncio.create_task(holder())
        await held.wait()
        cut_at = time.monotonic()
        await link.cut()  # the replica is gone: no renewal reaches Redis
        async with other.lease("chat:1") as lease:
            waited = time.monotonic() - cut_at
        assert LEASE_TTL_S * 0.5 < waited < LEASE_TTL_S * 3  # after its TTL, not before
        assert lease.fence > 1
        await asyncio.wait_for(task, 5)  # the cut-off holder found out by itself
        assert metrics.value("mnemo_leases_lost_total") == 1
        assert metrics.value("mnemo_coordination_errors_total", op="renew") >= 1
        await dying.aclose()
    await other.aclose()


async def test_a_lease_taken_away_is_noticed_by_its_former_holder(
    redis_target: RedisTarget,
) -> None:
    metrics = Metrics(process=False)
    holder = redis_coordinator(redis_target, metrics=metrics)
    other = redis_coordinator(redis_target)
    raw = Redis.from_url(redis_target.url)
    try:
        lost = asyncio.Event()
        async with holder.lease("chat:9", on_lost=lost.set) as lease:
            # as if the key had expired during a long pause and another replica took it
            await raw.delete(f"{redis_target.prefix}lease:chat:9")
            async with asyncio.timeout(2):
                async with other.lease("chat:9") as theirs:
                    await asyncio.wait_for(lost.wait(), LEASE_TTL_S)
                    assert lease.lost and not theirs.lost
                    assert theirs.fence > lease.fence
                    key = f"{redis_target.prefix}lease:chat:9"
        # the former holder's release did not delete the other replica's lease meanwhile
        assert await raw.exists(key) == 0  # the other released its own
        assert metrics.value("mnemo_leases_lost_total") == 1
    finally:
        await raw.aclose()
        await holder.aclose()
        await other.aclose()


async def test_a_held_lease_is_renewed_past_its_ttl(redis_target: RedisTarget) -> None:
    holder = redis_coordinator(redis_target)
    other = redis_coordinator(redis_target)
    try:
        async with holder.lease("chat:2") as lease:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(_take(other, "chat:2"), LEASE_TTL_S * 2)
            assert not lease.lost
        async with asyncio.timeout(1), other.lease("chat:2"):
            pass  # released at once, not after a TTL
    finally:
        await holder.aclose()
        await other.aclose()


async def test_a_release_wakes_the_next_replica_at_once(redis_target: RedisTarget) -> None:
    """Polls are seconds apart here: only the published release can hand it over fast."""
    holder = redis_coordinator(redis_target, lease_ttl_s=30, poll_cap_s=5)
    waiter = redis_coordinator(redis_target, lease_ttl_s=30, poll_cap_s=5)
    try:
        released = 0.0
        async with holder.lease("k"):
            task = asyncio.create_task(_take(waiter, "k"))
            await asyncio.sleep(1.5)  # the waiter is past its first polls, in a 1.3 s pause
            released = time.monotonic()
        await asyncio.wait_for(task, 2)
        assert time.monotonic() - released < 0.2
    finally:
        await holder.aclose()
        await waiter.aclose()


async def test_a_holder_that_lets_go_is_queued_before_the_next_holder_looks(
    redis_target: RedisTarget,
) -> None:
    """The router lets go for older work elsewhere while it has work of its own: the waiter
    granted next must see that work at once, not after the former holder's next call."""
    holder = redis_coordinator(redis_target)
    waiter = redis_coordinator(redis_target)
    seen: list[float | None] = []
    granted = asyncio.Event()

    async def wait_then_look() -> None:
        async with waiter.lease("k", since=100.0) as lease:
            seen.append(await lease.next_waiter())
            granted.set()

    try:
        async with holder.lease("k", since=50.0) as lease:
            task = asyncio.create_task(wait_then_look())
            await asyncio.sleep(0.2)  # the waiter is in the queue
            lease.let_go(150.0)
        await asyncio.wait_for(granted.wait(), 5)
        assert seen == [150.0]  # the former holder's work was already queued
        async with asyncio.timeout(5), holder.lease("k", since=150.0):
            pass  # and its next lease takes that place, once the waiter is done
        await task
        raw = Redis.from_url(redis_target.url)
        try:  # no place left behind
            assert await raw.zcard(f"{redis_target.prefix}queue:k") == 0
        finally:
            await raw.aclose()
    finally:
        await holder.aclose()
        await waiter.aclose()


async def test_a_cancelled_call_stops_even_where_redis_py_swallows_the_cancel(
    redis_target: RedisTarget,
) -> None:
    """redis-py writes through ``asyncio.wait_for``, which on Python 3.11 returns the result
    when a cancellation lands in the same loop pass (CPython gh-86296): most cancels below
    would be swallowed and the loop would run on. (On 3.12 the library no longer swallows.)"""
    coordinator = redis_coordinator(redis_target)
    try:
        await coordinator.ping()
        for attempt in range(40):

            async def calls() -> None:
                while True:
                    await coordinator.ping()

            task = asyncio.create_task(calls())
            for _ in range(attempt % 4):  # cancel at different points of the round trip
                await asyncio.sleep(0)
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=1)
            assert done, f"attempt {attempt}: the cancelled task went on"
            assert task.cancelled()
    finally:
        await coordinator.aclose()


async def test_a_lease_ends_with_its_block_while_a_renewal_is_in_flight(
    redis_target: RedisTarget,
) -> None:
    """The three-replica burst fault: a renewal cancelled as its lease's block ended had its
    cancel swallowed (as above), renewed for ever, and the chat's next turns, on every
    replica, waited for good. Here each renewal really goes to Redis, but takes 20 ms and
    lets its result win over a cancel, as Python 3.11's ``wait_for`` does, so that the block
    deterministically ends while one is in flight."""
    metrics = Metrics(process=False)
    holder = redis_coordinator(redis_target, metrics=metrics, lease_ttl_s=0.09)
    other = redis_coordinator(redis_target, lease_ttl_s=0.09)
    renew = holder._scripts["renew"]

    def swallowing(keys: list[str], args: list[str | int]) -> Awaitable[object]:
        async def run() -> object:
            sent = asyncio.ensure_future(renew(keys, args))
            try:
                await asyncio.sleep(0.02)
                return await asyncio.shield(sent)
            except asyncio.CancelledError:
                return await sent  # the result wins; the cancel is lost

        return run()

    holder._scripts["renew"] = swallowing  # type: ignore[assignment]
    lost: list[str] = []
    try:
        for hold_ms in (35, 40, 45):  # renewals start at 30 ms and take 20
            began = time.monotonic()
            with contextlib.suppress(TimeoutError):  # (the old code swallowed this cancel too)
                async with asyncio.timeout(3):
                    async with holder.lease("k", on_lost=lambda: lost.append("lost")):
                        await asyncio.sleep(hold_ms / 1000)
            assert time.monotonic() - began < 1, f"held {hold_ms} ms: the block did not end"
            async with asyncio.timeout(0.5), other.lease("k"):
                pass  # released at once
        await asyncio.sleep(0.2)  # a renewal that outlived its block would act by now
        assert lost == []
        assert metrics.value("mnemo_leases_lost_total") == 0
    finally:
        await holder.aclose()
        await other.aclose()


async def test_a_waiter_that_gives_up_leaves_the_queue(redis_target: RedisTarget) -> None:
    a = redis_coordinator(redis_target)
    b = redis_coordinator(redis_target)
    try:
        async with a.lease("k"):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(_take(b, "k"), 0.1)
        async with asyncio.timeout(0.5), a.lease("k"):
            pass  # nobody ahead in line: the cancelled waiter left it
    finally:
        await a.aclose()
        await b.aclose()


async def test_redis_down_is_a_clear_counted_error_and_never_a_hang(
    redis_target: RedisTarget,
) -> None:
    metrics = Metrics(process=False)
    url = f"redis://:sekrit-password@127.0.0.1:{closed_port()}/0"
    down = redis_coordinator(redis_target, url=url, metrics=metrics, timeout_s=0.5)
    try:
        began = time.monotonic()
        for attempt in (
            down.claim("update:1", 60),
            down.hit("n", 60),
            down.hold_until("chat", time.time() + 5),
            down.ping(),
        ):
            with pytest.raises(CoordinationUnavailable) as caught:
                await attempt
            assert "sekrit" not in str(caught.value)
            assert "Redis did not answer" in str(caught.value)
        with pytest.raises(CoordinationUnavailable):
            async with down.lease("k"):
                pass
        assert time.monotonic() - began < 5
        assert metrics.value("mnemo_coordination_errors_total", op="claim") == 1
        assert metrics.value("mnemo_coordination_errors_total", op="lease") == 1
    finally:
        await down.aclose()


async def test_redis_lost_mid_run_fails_within_the_timeout(redis_target: RedisTarget) -> None:
    async with TcpProxy(*upstream(redis_target)) as link:
        coordinator = redis_coordinator(
            redis_target, url=via(redis_target, link.port), timeout_s=0.5
        )
        assert await coordinator.claim("update:1", 60)
        await link.cut()
        began = time.monotonic()
        with pytest.raises(CoordinationError):
            await coordinator.claim("update:2", 60)
        assert time.monotonic() - began < 2
        await coordinator.aclose()


async def test_open_coordinator_says_in_one_line_what_is_wrong(
    redis_target: RedisTarget,
) -> None:
    env = "MNEMO_REDIS_URL"
    with pytest.raises(CoordinationUnavailable, match=f"{env} is not set"):
        await open_coordinator("redis", environ={}, redis_url_env=env)
    with pytest.raises(CoordinationUnavailable, match="not a Redis URL"):
        await open_coordinator("redis", environ={env: "http://x"}, redis_url_env=env)
    down = {env: f"redis://:sekrit@127.0.0.1:{closed_port()}/0"}
    with pytest.raises(CoordinationUnavailable) as caught:
        await open_coordinator("redis", environ=down, redis_url_env=env)
    line = str(caught.value)
    assert line == (
        f"coordination.backend is redis but the Redis at {env} did not answer"
        " (ping: ConnectionError)"
    )
    up = await open_coordinator(
        "redis", environ={env: redis_target.url}, namespace=redis_target.prefix
    )
    assert up.backend == "redis"
    await up.aclose()
    assert (await open_coordinator("local", environ={})).backend == "local"


async def _take(coordinator: Coordinator, key: str) -> None:
    async with coordinator.lease(key):
        pass
