"""What every coordination backend offers, and the errors it raises.

Several ``mnemo run`` replicas serving the same bots must agree on four things, and a single
process must not pay for that agreement. ``Coordinator`` is the narrow protocol the gateway
uses; ``LocalCoordinator`` answers it inside one process (the default), ``RedisCoordinator``
across replicas.

- ``lease(key, since=…)``: exclusive ownership of a session key. Waiters are granted it in
  the order of ``since`` (when the oldest work they hold for the key arrived), so turns of
  one chat keep the order their messages arrived in, whichever replica received them; the
  holder asks ``Lease.next_waiter()`` before each further turn and lets go when older work
  waits elsewhere. The holder gets a **fencing token** (``fence``: strictly increasing
  across every lease of a namespace) and is told when it loses the lease (``lost``,
  ``on_lost``): a replica whose renewals failed for too long must assume another replica
  now holds it.
- ``claim(key, ttl_s)``: the first caller wins (inbound idempotency: an update delivered to
  two replicas yields one turn).
- ``hold_until(scope, until)`` / ``wait(scope)``: a flood wait per chat that every replica
  honours.
- ``hit(key, window_s)`` / ``hits(key, window_s)``: an atomic sliding-window counter (budgets
  and pairing limits).

Errors::

    CoordinationError            the backend could not do what was asked
    ├── CoordinationUnavailable  it did not answer (down, refused, timed out)
    └── LeaseLost                a lease was lost while held (``Lease.check``)

A message never carries the backend's URL: it may hold a password.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol

__all__ = [
    "Backend",
    "CoordinationError",
    "CoordinationEvents",
    "CoordinationUnavailable",
    "Coordinator",
    "Lease",
    "LeaseLost",
    "NoEvents",
    "wait_out",
]

Backend = Literal["local", "redis"]


class CoordinationError(RuntimeError):
    """The coordination backend could not do what was asked."""


class CoordinationUnavailable(CoordinationError):
    """The backend did not answer (down, refused, timed out)."""


class LeaseLost(CoordinationError):
    """A lease was lost while its holder still worked under it."""


class CoordinationEvents(Protocol):
    """What a coordinator reports (``gateway.metrics.Metrics`` implements it)."""

    def lease_wait(self, seconds: float) -> None: ...

    def lease_lost(self) -> None: ...

    def coordination_error(self, op: str) -> None: ...


class NoEvents:
    """Reports nowhere (a coordinator made without metrics)."""

    def lease_wait(self, seconds: float) -> None:
        pass

    def lease_lost(self) -> None:
        pass

    def coordination_error(self, op: str) -> None:
        pass


@dataclass(slots=True)
class Lease:
    """Ownership of ``key`` while its ``async with`` block runs.

    ``fence`` is the fencing token: a later lease of any key in the namespace has a larger
    one, so a store that remembers the largest token it has seen can refuse a write from a
    holder that lost its lease meanwhile. ``lost`` turns true once the holder can no longer
    be sure it owns the key; ``on_lost`` (if given to ``lease``) is called once, at that
    moment, from the renewal task.
    """

    key: str
    fence: int
    lost: bool = False
    on_lost: Callable[[], object] | None = field(default=None, repr=False)
    peek: Callable[[], Awaitable[float | None]] | None = field(default=None, repr=False)
    #: set by ``let_go``: the ``since`` of the work the holder still has when it releases
    requeue: float | None = None

    def let_go(self, since: float) -> None:
        """The holder ends its block for older work waiting elsewhere but has work of its own
        (the oldest arrived at ``since``): the release puts it back in the queue in the same
        step, so the waiter granted next already sees it there (``next_waiter``) and takes
        only what is older. Its next ``lease`` of the key takes that place."""
        self.requeue = since

    async def next_waiter(self) -> float | None:
        """The ``since`` of the first one waiting for this key (None: nobody): work that
        arrived at or after it belongs after theirs."""
        return None if self.peek is None else await self.peek()

    def check(self) -> None:
        """Raise ``LeaseLost`` if the lease is gone (call before a commit that must not
        happen twice)."""
        if self.lost:
            raise LeaseLost(f"the lease on {self.key} was lost")

    def mark_lost(self) -> None:
        if self.lost:
            return
        self.lost = True
        if self.on_lost is not None:
            self.on_lost()


class Coordinator(Protocol):
    """The operations the gateway coordinates through (see the module docstring)."""

    events: CoordinationEvents
    """Where waits, lost leases and errors are reported (the gateway sets its metrics)."""

    @property
    def backend(self) -> Backend: ...

    def lease(
        self,
        key: str,
        *,
        since: float | None = None,
        on_lost: Callable[[], object] | None = None,
    ) -> AbstractAsyncContextManager[Lease]:
        """Exclusive ownership of ``key`` for the ``async with`` block; while another holds
        it, waits its turn in the order of ``since`` (unix time; default now)."""
        ...

    async def claim(self, key: str, ttl_s: float) -> bool:
        """True for the first caller of ``key`` within ``ttl_s``, False for every other."""
        ...

    async def hold_until(self, scope: str, until: float) -> None:
        """Nobody sends in ``scope`` before ``until`` (unix time); a later hold wins."""
        ...

    async def wait(self, scope: str, *, max_s: float | None = None) -> float:
        """Sleep out ``scope``'s hold (at most ``max_s``); the seconds slept."""
        ...

    async def held_until(self, scope: str) -> float:
        """The unix time ``scope``'s hold ends (0 when none)."""
        ...

    async def hit(self, key: str, window_s: float) -> int:
        """Count one event under ``key``; the events in the last ``window_s`` (this one
        included)."""
        ...

    async def hits(self, key: str, window_s: float) -> int:
        """The events under ``key`` in the last ``window_s``."""
        ...

    async def ping(self) -> float:
        """Seconds one round trip takes; ``CoordinationUnavailable`` when it does not answer."""
        ...

    async def aclose(self) -> None: ...


async def wait_out(
    held_until: Callable[[], Awaitable[float]],
    clock: Callable[[], float],
    max_s: float | None,
) -> float:
    """Sleep until ``held_until()`` (read again after each sleep: another replica may have
    held the scope longer meanwhile) is past, at most ``max_s``; the seconds slept. The same
    for every backend: only where the time is kept differs."""
    slept = 0.0
    while (left := await held_until() - clock()) > 0:
        if max_s is not None:
            left = min(left, max_s - slept)
            if left <= 0:
                break
        await asyncio.sleep(left)
        slept += left
    return slept
