"""``LocalCoordinator``: coordination inside one process (one replica), the default.

Nothing to connect to and nothing imported beyond the standard library. A lease is an
``asyncio.Lock`` per key (granted in the order asked, as the lock is fair), held only while
someone holds or waits for it, so idle keys cost nothing; it is never lost, as nothing but
this process could take it. Claims, flood holds and counters live in dicts that forget an
entry once it has expired (swept as they are touched, and all of them every
``SWEEP_EVERY`` writes), so they stay as small as the traffic of the last window.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from gateway.coordination.base import Backend, CoordinationEvents, Lease, NoEvents

__all__ = ["LocalCoordinator"]

SWEEP_EVERY = 1024


@dataclass(slots=True)
class _Slot:
    lock: asyncio.Lock
    users: int = 0  # holding or waiting


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
        self._claims: dict[str, float] = {}  # key -> expires at
        self._holds: dict[str, float] = {}  # scope -> until
        self._counts: dict[str, deque[float]] = {}
        self._writes = 0

    @property
    def backend(self) -> Backend:
        return "local"

    @asynccontextmanager
    async def lease(
        self, key: str, *, on_lost: Callable[[], object] | None = None
    ) -> AsyncIterator[Lease]:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot(asyncio.Lock())
        slot.users += 1
        try:
            began = time.monotonic()
            async with slot.lock:
                self.events.lease_wait(time.monotonic() - began)
                yield Lease(key, next(self._fences), on_lost=on_lost)
        finally:
            slot.users -= 1
            if slot.users == 0:
                self._slots.pop(key, None)

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
        slept = 0.0
        while (left := await self.held_until(scope) - self._clock()) > 0:
            if max_s is not None:
                left = min(left, max_s - slept)
                if left <= 0:
                    break
            await asyncio.sleep(left)
            slept += left
        return slept

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
