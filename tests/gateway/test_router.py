"""Session keys and the router: order within a session, concurrency across, merging."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from adapters import ChatType, Identity, InboundMessage
from gateway.router import Router, RouterClosed
from gateway.sessions import SessionKey


def msg(text: str, *, chat: str = "1", user: str = "7", chat_type: ChatType = "dm",
        thread: str | None = None) -> InboundMessage:  # fmt: skip
    return InboundMessage(
        platform="telegram", chat_id=chat, chat_type=chat_type,
        sender=Identity("telegram", user), text=text, message_id=text,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC), thread_id=thread,
    )  # fmt: skip


def test_session_keys() -> None:
    assert str(SessionKey.for_message(msg("a"))) == "telegram:dm:1"
    group = msg("a", chat="-5", chat_type="group", user="7")
    assert str(SessionKey.for_message(group)) == "telegram:group:-5:7"
    assert str(SessionKey.for_message(group, per_user_in_groups=False)) == "telegram:group:-5"
    topic = dataclasses.replace(group, thread_id="99")
    assert str(SessionKey.for_message(topic)) == "telegram:group:-5:99:7"
    other = msg("b", chat="-5", chat_type="group", user="8")
    assert SessionKey.for_message(group) != SessionKey.for_message(other)


async def test_turns_in_a_session_never_overlap_and_keep_order() -> None:
    running: set[SessionKey] = set()
    seen: list[tuple[str, ...]] = []

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        assert key not in running
        running.add(key)
        await asyncio.sleep(0.01)
        seen.append(tuple(m.text for m in batch))
        running.discard(key)

    router = Router(handler)
    key = SessionKey.for_message(msg("x"))
    router.submit(key, msg("one"))
    await asyncio.sleep(0)  # the first turn starts alone
    for text in ("two", "three", "four"):
        router.submit(key, msg(text))
    assert await router.drain(5)
    assert seen == [("one",), ("two", "three", "four")]  # queued messages merge


async def test_sessions_run_concurrently_up_to_the_bound() -> None:
    active = 0
    peak = 0

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1

    router = Router(handler, max_concurrent=3)
    for n in range(10):
        router.submit(SessionKey("telegram", "dm", str(n)), msg("hi", chat=str(n)))
    assert router.lanes == 10
    assert await router.drain(5)
    assert peak == 3
    assert router.lanes == 0  # idle lanes are dropped


async def test_a_failing_turn_does_not_stop_its_lane() -> None:
    handled: list[str] = []

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        handled.extend(m.text for m in batch)
        if batch[0].text == "boom":
            raise RuntimeError("model exploded")

    router = Router(handler)
    key = SessionKey("telegram", "dm", "1")
    router.submit(key, msg("boom"))
    await asyncio.sleep(0)
    router.submit(key, msg("after"))
    assert await router.drain(5)
    assert handled == ["boom", "after"]


async def test_drain_refuses_new_messages_and_bounds_the_wait() -> None:
    release = asyncio.Event()

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        await release.wait()

    router = Router(handler)
    router.submit(SessionKey("telegram", "dm", "1"), msg("slow"))
    await asyncio.sleep(0)
    assert await router.drain(0.05) is False  # it waited, then cancelled
    with pytest.raises(RouterClosed):
        router.submit(SessionKey("telegram", "dm", "2"), msg("late"))


async def test_cancel_stops_the_running_batch_and_the_lane_carries_on() -> None:
    started = asyncio.Event()
    seen: list[tuple[str, ...]] = []
    cancelled: list[tuple[str, ...]] = []

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        texts = tuple(m.text for m in batch)
        if texts == ("slow",):
            started.set()
            await asyncio.Event().wait()  # only a cancel ends it
        seen.append(texts)

    async def on_cancel(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        cancelled.append(tuple(m.text for m in batch))

    router = Router(handler, on_cancel=on_cancel)
    key = SessionKey("telegram", "dm", "1")
    assert router.cancel(key) is False  # no lane: nothing to cancel
    await router.idle(key)  # and nothing to wait for
    router.submit(key, msg("slow"))
    await started.wait()
    router.submit(key, msg("queued"))
    assert router.cancel(key) is True
    assert router.cancel(key) is False  # once is enough
    await router.idle(key)
    assert cancelled == [("slow",)] and seen == [("queued",)]
    assert router.lanes == 0
    # the lane is usable again, and cancelling it again works
    started.clear()
    router.submit(key, msg("slow"))
    await started.wait()
    assert router.cancel(key) is True
    await router.idle(key)
    assert cancelled == [("slow",), ("slow",)]


async def test_a_waiter_cancelled_leaves_the_lane_alone_and_other_cancels_are_kept() -> None:
    started = asyncio.Event()
    finished: list[str] = []
    release = asyncio.Event()

    async def handler(key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        started.set()
        await release.wait()
        finished.append(batch[0].text)

    router = Router(handler)
    key = SessionKey("telegram", "dm", "1")
    router.submit(key, msg("a"))
    await started.wait()
    waiter = asyncio.create_task(router.idle(key))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await router.idle(key)
    assert finished == ["a"]
    # a cancel from elsewhere (a drain, the loop closing) is not taken back, even when it
    # comes while one of ours is under way
    release.clear()
    started.clear()
    router.submit(key, msg("b"))
    await started.wait()
    (lane,) = [t for t in asyncio.all_tasks() if t.get_name() == f"lane:{key}"]
    assert router.cancel(key)
    lane.cancel()
    await asyncio.wait({lane})
    assert lane.cancelled() and finished == ["a"]
