"""What only the in-process backend can be caught at: a waiter cancelled in the instant
the lease came to it, and keys forgotten once nobody holds or waits for them."""

from __future__ import annotations

import asyncio

from gateway.coordination import LocalCoordinator


async def test_a_lease_granted_to_a_waiter_cancelled_at_that_instant_passes_on() -> None:
    local = LocalCoordinator()
    got: list[str] = []

    async def take(name: str) -> None:
        async with local.lease("k"):
            got.append(name)

    async with local.lease("k"):
        quitter = asyncio.create_task(take("quitter"))
        await asyncio.sleep(0)
        patient = asyncio.create_task(take("patient"))
        await asyncio.sleep(0)
    quitter.cancel()  # granted on release, not yet resumed: the grant must move on
    await asyncio.wait_for(patient, 0.5)
    assert quitter.cancelled()
    assert got == ["patient"]
    async with asyncio.timeout(0.5), local.lease("k"):
        pass  # and nobody holds it now


async def test_claims_holds_and_counters_expire() -> None:
    now = [1000.0]
    local = LocalCoordinator(clock=lambda: now[0])
    assert await local.claim("u1", 10)
    assert not await local.claim("u1", 10)
    await local.hold_until("chat", 1005.0)
    assert await local.held_until("chat") == 1005.0
    assert await local.hit("n", 60) == 1
    assert await local.hits("n", 60) == 1
    now[0] += 61
    assert await local.claim("u1", 10)  # expired: won again
    assert await local.held_until("chat") == 0
    assert await local.hits("n", 60) == 0
