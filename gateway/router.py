"""The router: one ordered lane per session (``gateway.sessions.SessionKey``), lanes run
concurrently.

``Router.submit(key, message)`` queues a message on its key's lane. A lane runs one turn
at a time, in arrival order; messages that arrive while its turn runs are merged into the
next turn. Different lanes run concurrently, at most ``max_concurrent`` turns at once. A
lane exists only while it has work: when its last turn ends with nothing queued it is
dropped, so idle chats cost nothing. ``drain`` stops intake and waits (bounded) for the
running turns.

``cancel(key)`` cancels the batch a lane is running (the console's Ctrl-C): the handler
sees ``CancelledError``, ``on_cancel(key, batch)`` is told, and the lane goes on with what
was queued meanwhile. ``idle(key)`` waits until a lane has nothing queued or running.

With a ``coordinator`` (``gateway.coordination``) a lane also holds the session key's
**lease** while it runs turns, so turns of one chat never overlap across replicas either,
and keep the order their messages arrived in: the lane asks for the lease with the arrival
time of its oldest queued message (``since``), waiters are granted in that order, and a
holder, before each further turn, takes only the messages that arrived before the oldest
work waiting on another replica (``Lease.next_waiter``); with older work waiting elsewhere
it lets go and asks again. Order is kept between messages further apart than a replica
takes to join the queue (a round trip); two messages closer than that reach two replicas
with no order between them (a platform delivers them concurrently too). The lane stays: it
orders and merges this process's messages, the lease only adds the exclusion between
processes.

A lease lost mid-turn cancels the turn as ``cancel`` does (the person is told, the lane
goes on): another replica may be running that chat now. A lease that cannot be taken (the
backend does not answer) leaves the messages queued and the lane tries again with a
back-off (``RETRY_S``); the drain ends that wait, and the next start tells them their turn
was lost.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adapters.messages import InboundMessage
from gateway.coordination import CoordinationError, Coordinator, Lease

if TYPE_CHECKING:
    from gateway.sessions import SessionKey

__all__ = ["Handler", "Router", "RouterClosed"]

log = logging.getLogger(__name__)
Handler = Callable[["SessionKey", Sequence[InboundMessage]], Awaitable[None]]
RETRY_S = (0.5, 1.0, 2.0, 5.0)  # pauses after a lease could not be taken, then the last again
CANCEL_WAIT_S = 5.0  # how long the drain waits for the lanes it cancelled


class RouterClosed(RuntimeError):
    """``submit`` after ``drain`` began."""


@dataclass(slots=True)
class _Lane:
    pending: list[InboundMessage] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)  # unix time, one per pending message
    task: asyncio.Task[None] | None = None
    running: Sequence[InboundMessage] = ()  # the batch in the handler now
    cancelling: bool = False


class Router:
    def __init__(
        self,
        handler: Handler,
        *,
        max_concurrent: int = 8,
        on_cancel: Handler | None = None,
        coordinator: Coordinator | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``coordinator``: take each session's lease around its turns (None: this process
        alone serves its chats); ``clock`` (unix time) stamps each message's arrival."""
        self._handler = handler
        self._on_cancel = on_cancel
        self._coordinator = coordinator
        self._clock = clock
        self._slots = asyncio.Semaphore(max_concurrent)
        self._lanes: dict[SessionKey, _Lane] = {}
        self._closed = False

    @property
    def lanes(self) -> int:
        """Lanes with work queued or running (idle ones are gone)."""
        return len(self._lanes)

    @property
    def queued(self) -> int:
        return sum(len(lane.pending) for lane in self._lanes.values())

    def submit(self, key: SessionKey, message: InboundMessage) -> None:
        if self._closed:
            raise RouterClosed("the gateway is shutting down")
        lane = self._lanes.setdefault(key, _Lane())
        lane.pending.append(message)
        lane.arrived.append(max(self._clock(), lane.arrived[-1] if lane.arrived else 0.0))
        if lane.task is None:
            lane.task = asyncio.create_task(self._run(key, lane), name=f"lane:{key}")

    async def _run(self, key: SessionKey, lane: _Lane) -> None:
        failures = 0
        try:
            while lane.pending:
                try:
                    async with self._lease(key, lane) as lease:
                        failures = 0
                        await self._turns(key, lane, lease)
                except CoordinationError as exc:  # no lease, or it failed between turns
                    failures += 1
                    if failures == 1:
                        log.error("turns for %s wait: %s", key, exc)
                    await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S)) - 1])
        finally:
            lane.task = None
            if not lane.pending:
                self._lanes.pop(key, None)

    def _lease(
        self, key: SessionKey, lane: _Lane
    ) -> contextlib.AbstractAsyncContextManager[Lease | None]:
        if self._coordinator is None:
            return contextlib.nullcontext()
        return self._coordinator.lease(
            str(key), since=lane.arrived[0], on_lost=lambda: self._lost(key)
        )

    def _lost(self, key: SessionKey) -> None:
        if self.cancel(key):
            log.warning("turn for %s stopped: its lease was lost", key)

    async def _turns(self, key: SessionKey, lane: _Lane, lease: Lease | None) -> None:
        """Run the lane's turns while it holds ``lease``: each batch is what arrived before
        the oldest work waiting elsewhere, or with it (a tie goes to the holder, so two replicas
        never hand a lease back and forth); all of it when nobody waits."""
        while lane.pending and (lease is None or not lease.lost):
            before = None if lease is None else await lease.next_waiter()
            take = (
                len(lane.pending) if before is None else bisect.bisect_right(lane.arrived, before)
            )
            if take == 0:  # older work waits on another replica: let go, ask again
                if lease is not None:
                    lease.let_go(lane.arrived[0])  # back in the queue as it is released
                return
            async with self._slots:
                await self._turn(key, lane, take)

    async def _turn(self, key: SessionKey, lane: _Lane, take: int) -> None:
        batch, lane.pending = lane.pending[:take], lane.pending[take:]
        del lane.arrived[:take]
        lane.running = batch
        try:
            await self._handler(key, batch)
        except asyncio.CancelledError:
            if not _ours(lane):
                raise  # the drain, or the loop closing: not ours to swallow
            await self._cancelled(key, batch)
        except Exception:
            log.exception("turn for %s failed", key)
        finally:
            lane.running = ()
            lane.cancelling = False

    def cancel(self, key: SessionKey) -> bool:
        """Cancel the batch ``key``'s lane is running; False when it runs none (idle, or
        waiting for a slot) or is being cancelled already."""
        lane = self._lanes.get(key)
        if lane is None or lane.task is None or not lane.running or lane.cancelling:
            return False
        lane.cancelling = True
        lane.task.cancel()
        return True

    async def _cancelled(self, key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        log.info("turn for %s cancelled", key)
        if self._on_cancel is not None:
            try:
                await self._on_cancel(key, batch)
            except Exception:
                log.exception("after cancelling the turn for %s", key)

    async def idle(self, key: SessionKey) -> None:
        """Return once ``key``'s lane has nothing queued or running (at once if it has no
        lane). Waiting never cancels the lane, whatever happens to the waiter."""
        while (lane := self._lanes.get(key)) is not None and lane.task is not None:
            await asyncio.wait({lane.task})

    async def drain(self, timeout_s: float) -> bool:
        """Refuse new messages and wait for running lanes; True if all finished in time."""
        self._closed = True
        tasks = [lane.task for lane in self._lanes.values() if lane.task is not None]
        if not tasks:
            return True
        _done, left = await asyncio.wait(tasks, timeout=timeout_s)
        for task in left:
            task.cancel()
        if left:  # bounded: a library may swallow a cancellation (Python 3.11's wait_for)
            _done, stuck = await asyncio.wait(left, timeout=CANCEL_WAIT_S)
            for task in stuck:
                log.warning("%s did not stop when cancelled; left behind", task.get_name())
        return not left


def _ours(lane: _Lane) -> bool:
    """Whether the ``CancelledError`` a lane's handler raised came from ``cancel`` alone
    (then it is taken back, and the lane carries on); a drain's or the loop's is not."""
    if not lane.cancelling:
        return False
    lane.cancelling = False
    task = asyncio.current_task()
    return task is None or task.uncancel() == 0
