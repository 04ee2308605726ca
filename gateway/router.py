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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adapters.messages import InboundMessage

if TYPE_CHECKING:
    from gateway.sessions import SessionKey

__all__ = ["Router", "RouterClosed"]

log = logging.getLogger(__name__)
Handler = Callable[["SessionKey", Sequence[InboundMessage]], Awaitable[None]]


class RouterClosed(RuntimeError):
    """``submit`` after ``drain`` began."""


@dataclass(slots=True)
class _Lane:
    pending: list[InboundMessage] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    running: Sequence[InboundMessage] = ()  # the batch in the handler now
    cancelling: bool = False


class Router:
    def __init__(
        self, handler: Handler, *, max_concurrent: int = 8, on_cancel: Handler | None = None
    ) -> None:
        self._handler = handler
        self._on_cancel = on_cancel
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
        if lane.task is None:
            lane.task = asyncio.create_task(self._run(key, lane), name=f"lane:{key}")

    async def _run(self, key: SessionKey, lane: _Lane) -> None:
        try:
            while lane.pending:
                async with self._slots:
                    batch, lane.pending = lane.pending, []
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
        finally:
            lane.task = None
            if not lane.pending:
                self._lanes.pop(key, None)

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
        for task in left:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return not left


def _ours(lane: _Lane) -> bool:
    """Whether the ``CancelledError`` a lane's handler raised came from ``cancel`` alone
    (then it is taken back, and the lane carries on); a drain's or the loop's is not."""
    if not lane.cancelling:
        return False
    lane.cancelling = False
    task = asyncio.current_task()
    return task is None or task.uncancel() == 0
