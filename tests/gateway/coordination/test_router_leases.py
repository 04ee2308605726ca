"""Two routers as two replicas of one gateway: a chat's turns never overlap and keep the
order its messages arrived in, whichever replica received them; a lost lease stops the
turn; a backend that does not answer holds the turns back without hanging the drain."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from adapters import Identity, InboundMessage
from gateway.coordination import Coordinator
from gateway.metrics import Metrics
from gateway.router import Handler, Router
from gateway.sessions import SessionKey
from tests.fakes.tcp_proxy import TcpProxy
from tests.gateway.coordination.conftest import (
    LEASE_TTL_S,
    Replicas,
    closed_port,
    redis_coordinator,
    upstream,
    via,
)
from tests.services import RedisTarget


def msg(text: str, chat: str = "1") -> InboundMessage:
    return InboundMessage(
        platform="telegram",
        chat_id=chat,
        chat_type="dm",
        sender=Identity("telegram", chat),
        text=text,
        message_id=text,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


KEY = SessionKey.for_message(msg("x"))
GAP_S = 0.05
"""Between two messages: shorter than a turn (``TURN_S``), so both replicas queue work, and
longer than a replica takes to join the lease's queue once a message arrives (a round trip,
and a busy test machine's scheduling: 25 ms was once too short with the whole suite running
on two cores): two messages closer than that reach two replicas with no order between them
to keep."""
TURN_S = 0.25
"""A turn, long enough that a replica's lane collects several messages while the other runs:
a holder that lets go for older work elsewhere must be back in the queue before the
waiter it passed the lease to picks its batch (``Lease.let_go``), or that waiter takes
messages newer than the holder's (at 0.25 s, without it, m03 ran before m02 every time)."""


class Chat:
    """What the model would see: the turns, in the order they ran, never two of one chat
    at once."""

    def __init__(self, turn_s: float = 0.03) -> None:
        self.turns: list[tuple[str, tuple[str, ...]]] = []
        self.running: set[SessionKey] = set()
        self.overlaps = 0
        self.turn_s = turn_s

    def handler(self, replica: str) -> Handler:
        async def handle(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
            self.overlaps += key in self.running
            self.running.add(key)
            try:
                await asyncio.sleep(self.turn_s)
                self.turns.append((replica, tuple(m.text for m in batch)))
            finally:
                self.running.discard(key)

        return handle


def _routers(chat: Chat, a: Coordinator, b: Coordinator) -> tuple[Router, Router]:
    return (
        Router(chat.handler("a"), coordinator=a),
        Router(chat.handler("b"), coordinator=b),
    )


async def _deliver(first: Router, second: Router, pattern: str, gap_s: float) -> list[str]:
    """Message i goes to the replica ``pattern[i]`` names (a or b); the texts, in order."""
    sent = []
    for i, replica in enumerate(pattern):
        text = f"m{i:02d}"
        (first if replica == "a" else second).submit(KEY, msg(text))
        sent.append(text)
        await asyncio.sleep(gap_s)
    return sent


async def test_two_replicas_never_overlap_and_keep_the_order(replicas: Replicas) -> None:
    chat = Chat(turn_s=TURN_S)
    a, b = _routers(chat, replicas.a, replicas.b)
    # faster than a turn, so both replicas queue work; runs of one replica's can merge
    sent = await _deliver(a, b, "aaabbabbbaabababbbaa", GAP_S)
    assert await a.drain(10)
    assert await b.drain(10)
    assert chat.overlaps == 0
    assert [text for _replica, batch in chat.turns for text in batch] == sent
    assert {replica for replica, _batch in chat.turns} == {"a", "b"}
    assert any(len(batch) > 1 for _replica, batch in chat.turns)  # lanes still merge
    assert len(chat.turns) < len(sent)


async def test_two_routers_sharing_one_redis_coordinator(redis_target: RedisTarget) -> None:
    shared = redis_coordinator(redis_target)
    try:
        chat = Chat(turn_s=TURN_S)
        a, b = _routers(chat, shared, shared)
        sent = await _deliver(a, b, "abababbbaaab", GAP_S)
        other = SessionKey.for_message(msg("y", chat="2"))
        b.submit(other, msg("elsewhere", chat="2"))  # another chat is not held up
        assert await a.drain(10)
        assert await b.drain(10)
        assert chat.overlaps == 0
        texts = [text for _replica, batch in chat.turns for text in batch]
        assert [t for t in texts if t != "elsewhere"] == sent
    finally:
        await shared.aclose()


async def test_a_lost_lease_stops_the_turn_and_the_lane_goes_on(
    redis_target: RedisTarget,
) -> None:
    metrics = Metrics(process=False)
    coordinator = redis_coordinator(redis_target, metrics=metrics, lease_ttl_s=0.6)
    raw = Redis.from_url(redis_target.url)
    started = asyncio.Event()
    cancelled: list[tuple[str, ...]] = []
    ran: list[tuple[str, ...]] = []

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        ran.append(tuple(m.text for m in batch))
        started.set()
        if batch[0].text == "long":
            await asyncio.sleep(30)

    async def on_cancel(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        cancelled.append(tuple(m.text for m in batch))

    router = Router(handler, on_cancel=on_cancel, coordinator=coordinator)
    try:
        router.submit(KEY, msg("long"))
        await started.wait()
        router.submit(KEY, msg("next"))
        await raw.delete(f"{redis_target.prefix}lease:{KEY}")  # as if it had expired
        async with asyncio.timeout(3):
            await router.idle(KEY)
        assert cancelled == [("long",)]
        assert ran == [("long",), ("next",)]
        assert metrics.value("mnemo_leases_lost_total") == 1
    finally:
        await router.drain(1)
        await raw.aclose()
        await coordinator.aclose()


async def test_a_replica_cut_off_mid_turn_stops_before_another_takes_over(
    redis_target: RedisTarget,
) -> None:
    """Replica a loses its link to Redis in the middle of a long turn: it stops that turn
    (its lease can no longer be vouched for) before replica b, once the lease has expired,
    runs the chat's next message."""
    moments: dict[str, float] = {}
    started = asyncio.Event()

    async def long_turn(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        started.set()
        await asyncio.sleep(30)

    async def stopped(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        moments["a stopped"] = time.monotonic()

    async def next_turn(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        moments["b started"] = time.monotonic()

    other = redis_coordinator(redis_target)
    async with TcpProxy(*upstream(redis_target)) as link:
        cut_off = redis_coordinator(redis_target, url=via(redis_target, link.port), timeout_s=0.2)
        a = Router(long_turn, on_cancel=stopped, coordinator=cut_off)
        b = Router(next_turn, coordinator=other)
        try:
            a.submit(KEY, msg("long"))
            await started.wait()
            b.submit(KEY, msg("next"))
            await asyncio.sleep(0.05)
            cut_at = time.monotonic()
            await link.cut()
            async with asyncio.timeout(LEASE_TTL_S * 3):
                await b.idle(KEY)
            assert moments["a stopped"] < moments["b started"]
            assert moments["b started"] - cut_at < LEASE_TTL_S * 1.5
        finally:
            await a.drain(0.5)
            await b.drain(0.5)
            await cut_off.aclose()
    await other.aclose()


async def test_no_answer_from_redis_holds_turns_back_and_the_drain_still_ends(
    redis_target: RedisTarget, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = Metrics(process=False)
    url = f"redis://127.0.0.1:{closed_port()}/0"
    down = redis_coordinator(redis_target, url=url, metrics=metrics, timeout_s=0.3)
    ran: list[str] = []

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        ran.extend(m.text for m in batch)

    router = Router(handler, coordinator=down)
    with caplog.at_level(logging.ERROR, logger="gateway.router"):
        router.submit(KEY, msg("hello"))
        await asyncio.sleep(1.2)  # the first try and two more
        assert router.queued == 1  # kept, not dropped
        assert not await router.drain(0.2)  # cancelled the wait, returned
    assert ran == []
    errors = [r.getMessage() for r in caplog.records if r.name == "gateway.router"]
    assert errors == [f"turns for {KEY} wait: coordination: Redis did not answer (lease: "
                      "ConnectionError)"]  # fmt: skip
    assert metrics.value("mnemo_coordination_errors_total", op="lease") >= 2
    await down.aclose()
