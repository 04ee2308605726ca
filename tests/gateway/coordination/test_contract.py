"""One behavioural suite for every coordinator: local, and two replicas on one real Redis."""

from __future__ import annotations

import asyncio
import time

import pytest

from gateway.coordination import Coordinator, LocalCoordinator
from tests.gateway.coordination.conftest import Replicas, redis_coordinator
from tests.services import RedisTarget


async def test_a_lease_is_exclusive_across_replicas(replicas: Replicas) -> None:
    holding: list[str] = []
    overlaps = 0

    async def turn(coordinator: Coordinator, name: str) -> None:
        nonlocal overlaps
        async with coordinator.lease("telegram:dm:1"):
            overlaps += bool(holding)
            holding.append(name)
            await asyncio.sleep(0.01)
            holding.remove(name)

    await asyncio.gather(*(turn(replicas.a if i % 2 else replicas.b, f"t{i}") for i in range(12)))
    assert overlaps == 0
    waits = 12 if replicas.a is replicas.b else 6  # the waits a reported
    assert replicas.metrics.value("mnemo_lease_wait_seconds_count") == waits


async def test_different_keys_are_held_at_once(replicas: Replicas) -> None:
    both = asyncio.Event()
    inside = 0

    async def turn(coordinator: Coordinator, key: str) -> None:
        nonlocal inside
        async with coordinator.lease(key):
            inside += 1
            if inside == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 5)

    await asyncio.gather(turn(replicas.a, "chat:1"), turn(replicas.b, "chat:2"))


async def test_leases_are_granted_in_the_order_asked(replicas: Replicas) -> None:
    order: list[int] = []
    gate = asyncio.Event()

    async def first() -> None:
        async with replicas.a.lease("k"):
            order.append(0)
            await gate.wait()

    async def turn(i: int) -> None:
        async with (replicas.a if i % 2 else replicas.b).lease("k"):
            order.append(i)
            await asyncio.sleep(0.005)

    holder = asyncio.create_task(first())
    await asyncio.sleep(0.05)
    waiters = []
    for i in range(1, 7):  # each replica asks in turn, while the key is held
        waiters.append(asyncio.create_task(turn(i)))
        await asyncio.sleep(0.03)
    gate.set()
    await asyncio.gather(holder, *waiters)
    assert order == [0, 1, 2, 3, 4, 5, 6]


async def test_waiters_are_granted_in_the_order_their_work_arrived(replicas: Replicas) -> None:
    """``since`` (when a replica's oldest message for the key arrived) orders the waiters,
    not the moment they asked; the holder sees who is next."""
    order: list[float] = []
    held = asyncio.Event()
    gate = asyncio.Event()
    base = time.time()

    async def first() -> None:
        async with replicas.a.lease("k", since=base) as lease:
            assert await lease.next_waiter() is None
            held.set()
            await gate.wait()
            assert await lease.next_waiter() == base + 1  # the oldest waiting work

    async def turn(coordinator: Coordinator, since: float) -> None:
        async with coordinator.lease("k", since=since):
            order.append(since - base)

    holder = asyncio.create_task(first())
    await held.wait()
    waiters = []
    for offset, coordinator in ((3, replicas.a), (1, replicas.b), (4, replicas.b), (2, replicas.a)):
        waiters.append(asyncio.create_task(turn(coordinator, base + offset)))
        await asyncio.sleep(0.03)
    gate.set()
    await asyncio.gather(holder, *waiters)
    assert order == [1, 2, 3, 4]


@pytest.mark.parametrize("holds", [False, True], ids=["waiting", "holding"])
async def test_a_waiter_or_holder_that_gives_up_does_not_hold_up_the_next(
    replicas: Replicas, holds: bool
) -> None:
    """Cancelled while waiting, or while holding the lease: the next in line gets it at
    once, not after a TTL."""
    got: list[str] = []
    holding = asyncio.Event()

    async def take(coordinator: Coordinator, name: str, hold: bool) -> None:
        async with coordinator.lease("k"):
            got.append(name)
            if hold:
                holding.set()
                await asyncio.Event().wait()  # until cancelled

    async with replicas.a.lease("k"):
        quitter = asyncio.create_task(take(replicas.b, "quitter", holds))
        await asyncio.sleep(0.05)
        patient = asyncio.create_task(take(replicas.a, "patient", False))
        await asyncio.sleep(0.05)
        if not holds:
            quitter.cancel()
    if holds:
        await asyncio.wait_for(holding.wait(), 0.5)
        quitter.cancel()
    await asyncio.wait_for(patient, 0.5)
    assert quitter.cancelled()
    assert got == (["quitter", "patient"] if holds else ["patient"])


async def test_fencing_tokens_strictly_increase(replicas: Replicas) -> None:
    fences = []
    for i in range(6):
        async with (replicas.a if i % 2 else replicas.b).lease(f"chat:{i % 3}") as lease:
            fences.append(lease.fence)
            assert not lease.lost
            lease.check()
    assert fences == sorted(set(fences))


async def test_a_claim_is_won_exactly_once_under_concurrency(replicas: Replicas) -> None:
    wins = await asyncio.gather(
        *((replicas.a if i % 2 else replicas.b).claim("update:42", 60) for i in range(40))
    )
    assert wins.count(True) == 1
    assert await replicas.a.claim("update:43", 60)  # another key, another winner


async def test_a_claim_is_free_again_after_its_ttl(replicas: Replicas) -> None:
    assert await replicas.a.claim("update:1", 0.2)
    assert not await replicas.b.claim("update:1", 0.2)
    await asyncio.sleep(0.3)
    assert await replicas.b.claim("update:1", 0.2)


async def test_a_flood_wait_is_shared_and_the_later_hold_wins(replicas: Replicas) -> None:
    now = time.time()
    await replicas.a.hold_until("telegram:1", now + 0.3)
    await replicas.a.hold_until("telegram:1", now + 0.1)  # shorter: does not cut it
    assert abs(await replicas.b.held_until("telegram:1") - (now + 0.3)) < 0.01
    assert await replicas.b.held_until("telegram:2") == 0
    began = time.monotonic()
    slept = await replicas.b.wait("telegram:1")
    assert 0.2 < time.monotonic() - began < 1.0
    assert slept > 0.2
    assert await replicas.a.wait("telegram:1") == 0  # over
    await replicas.a.hold_until("telegram:1", time.time() + 5)
    assert 0.05 <= await replicas.b.wait("telegram:1", max_s=0.05) < 0.2  # bounded


async def test_a_counter_slides_over_both_replicas(replicas: Replicas) -> None:
    assert await replicas.a.hit("turns:alice", 0.4) == 1
    assert await replicas.b.hit("turns:alice", 0.4) == 2
    assert await replicas.b.hit("turns:bob", 0.4) == 1
    assert await replicas.a.hits("turns:alice", 0.4) == 2
    await asyncio.sleep(0.25)
    assert await replicas.a.hit("turns:alice", 0.4) == 3
    await asyncio.sleep(0.2)  # the first two left the window
    assert await replicas.b.hits("turns:alice", 0.4) == 1
    assert await replicas.b.hits("nobody", 0.4) == 0


async def test_namespaces_are_isolated(target: RedisTarget | None, replicas: Replicas) -> None:
    other: Coordinator
    if target is None:
        other = LocalCoordinator()  # another process's
    else:
        other = redis_coordinator(RedisTarget(target.url, target.prefix + "other-bot:"))
    try:
        assert await replicas.a.claim("update:7", 60)
        assert await other.claim("update:7", 60)
        await replicas.a.hit("n", 60)
        assert await other.hits("n", 60) == 0
        async with replicas.a.lease("k"):
            async with asyncio.timeout(2):
                async with other.lease("k"):  # another bot's key of the same name
                    pass
    finally:
        await other.aclose()


async def test_ping_answers(replicas: Replicas) -> None:
    assert 0 <= await replicas.a.ping() < 1
