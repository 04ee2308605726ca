"""``LocalCoordinator``: coordination inside one process (one replica), the default.

Nothing to connect to and nothing imported beyond the standard library. A lease is a slot
per key with a heap of waiters ordered by ``since`` (then by asking), kept only while someone
holds or waits for it, so idle keys cost nothing; it is never lost, as nothing but this
process could take it. Claims, flood holds and counters live in dicts that forget an
entry once it has expired (swept as they are touched, and all of them every
``SWEEP_EVERY`` writes), so they stay as small as the traffic of the last window.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from gateway.coordination.base import Backend, CoordinationEvents, Lease, NoEvents, wait_out

__all__ = ["LocalCoordinator"]

SWEEP_EVERY = 1024


@dataclass(slots=True)
class _Slot:
    held: bool = False
    waiting: list[tuple[float, int, asyncio.Future[None]]] = field(default_factory=list)

    def grant_next(self) -> None:
        """Hand the slot to the first waiter still waiting (heap order)."""
        while self.waiting:
            _since, _n, future = heapq.heappop(self.waiting)
            if not future.done():
                self.held = True
                future.set_result(None)
                return
        self.held = False


class LocalCoordinator:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        events: CoordinationEvents | None = None,
    ) -> None:
        """``clock`` (unix time) measures claims, holds and counter windows."""
        self._clock = clock
        self.events: CoordinationEvents = events or NoEvents()
        self._slots: dict[str, _Slot] = {}
        self._fences = itertools.count(1)
        self._asked = itertools.count()
        self._claims: dict[str, float] = {}  # key -> expires at
        self._holds: dict[str, float] = {}  # scope -> until
        self._counts: dict[str, deque[float]] = {}
        self._writes = 0

    @property
    def backend(self) -> Backend:
        return "local"

    @asynccontextmanager
    async def lease(
        self,
        key: str,
        *,
        since: float | None = None,
        on_lost: Callable[[], object] | None = None,
    ) -> AsyncIterator[Lease]:
        slot = self._slots.setdefault(key, _Slot())
        began = time.monotonic()
        if slot.held or slot.waiting:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            ticket = (self._clock() if since is None else since, next(self._asked), future)
            heapq.heappush(slot.waiting, ticket)
            try:
                await future
            except BaseException:
                if future.done() and not future.cancelled():
                    slot.grant_next()  # granted as we were cancelled: pass it on
                elif not slot.held:
                    slot.grant_next()
                self._forget(key, slot)
                raise
        else:
            slot.held = True
        self.events.lease_wait(time.monotonic() - began)

        async def peek() -> float | None:
            live = [t for t in slot.waiting if not t[2].done()]
            return min(live)[0] if live else None

        try:
            yield Lease(key, next(self._fences), on_lost=on_lost, peek=peek)
        finally:
            slot.grant_next()
            self._forget(key, slot)

    def _forget(self, key: str, slot: _Slot) -> None:
        if not slot.held and not slot.waiting and self._slots.get(key) is slot:
            del self._slots[key]

    async def claim(self, key: str, ttl_s: float) -> bool:
        now = self._clock()
        self._wrote(now)
        if self._claims.get(key, 0.0) > now:
            return False
        self._claims[key] = now + ttl_s
        return True

    async def hold_until(self, scope: str, until: float) -> None:
        self._wrote(self._clock())
        if until > self._holds.get(scope, 0.0):
            self._holds[scope] = until

    async def held_until(self, scope: str) -> float:
        until = self._holds.get(scope, 0.0)
        if until <= self._clock():
            self._holds.pop(scope, None)
            return 0.0
        return until

    async def wait(self, scope: str, *, max_s: float | None = None) -> float:
        return await wait_out(lambda: self.held_until(scope), self._clock, max_s)

    async def hit(self, key: str, window_s: float) -> int:
        now = self._clock()
        self._wrote(now)
        times = self._counts.setdefault(key, deque())
        times.append(now)
        return self._within(key, times, now - window_s)

    async def hits(self, key: str, window_s: float) -> int:
        times = self._counts.get(key)
        if times is None:
            return 0
        return self._within(key, times, self._clock() - window_s)

    def _within(self, key: str, times: deque[float], since: float) -> int:
        while times and times[0] <= since:
            times.popleft()
        if not times:
            self._counts.pop(key, None)
        return len(times)

    async def ping(self) -> float:
        return 0.0

    async def aclose(self) -> None:
        self._claims.clear()
        self._holds.clear()
        self._counts.clear()

    def _wrote(self, now: float) -> None:
        """Every ``SWEEP_EVERY`` writes, forget what has expired (claims and holds; a
        counter's events older than a day)."""
        self._writes += 1
        if self._writes % SWEEP_EVERY:
            return
        self._claims = {k: t for k, t in self._claims.items() if t > now}
        self._holds = {k: t for k, t in self._holds.items() if t > now}
        for key, times in list(self._counts.items()):
            self._within(key, times, now - 86_400.0)
