"""Several replicas on one shared ledger: stay known as alive, and take over the work of
a replica that is gone (``storage.backend: postgres``).

A replica that is SIGKILLed, loses its machine or freezes leaves updates it accepted but
never answered and replies it stored but never sent. The ledger knows whose they are
(``gateway.ledger_postgres``); ``ReplicaWatch`` is the other half, one task per replica:

- every ``dead_after_s / 3`` it stamps this replica's heartbeat;
- then it asks the ledger for the orphans of replicas whose heartbeat stopped: each
  unanswered update is handed to exactly one survivor, which tells that chat once that its
  answer was lost (as after a restart); each unsent reply is delivered by the survivor that
  took it.

A failing database is logged (once per kind of failure until it answers again) and the watch
goes on: a replica must not die because the shared store blinked. With the SQLite ledger
there is one process and no watch: a restart's ``interrupted``/``flush`` cover it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

from gateway.ledger import Inbound, OutboxRow

__all__ = ["ReplicaWatch", "Replicated"]

log = logging.getLogger(__name__)


@runtime_checkable
class Replicated(Protocol):
    """A ledger that several replicas share (``PgLedger``)."""

    replica: str
    dead_after_s: float

    async def heartbeat(self) -> None: ...
    async def interrupted(self) -> list[Inbound]: ...
    async def orphans(self, platform: str | None = None) -> list[OutboxRow]: ...
    async def leave(self) -> None: ...


class ReplicaWatch:
    def __init__(
        self,
        ledger: Replicated,
        *,
        tell_interrupted: Callable[[Sequence[Inbound]], Awaitable[None]],
        deliver: Callable[[Sequence[OutboxRow]], Awaitable[int]],
        every_s: float | None = None,
    ) -> None:
        self.ledger = ledger
        self.tell_interrupted = tell_interrupted
        self.deliver = deliver
        self.every_s = every_s if every_s is not None else ledger.dead_after_s / 3
        self.taken_updates = 0
        self.taken_replies = 0
        self._failing: str | None = None

    async def run(self) -> None:
        """Until cancelled: heartbeat, then take over what gone replicas left."""
        while True:
            await asyncio.sleep(self.every_s)
            await self.sweep()

    async def sweep(self) -> None:
        try:
            await self.ledger.heartbeat()
            updates = await self.ledger.interrupted()
            replies = await self.ledger.orphans()
        except Exception as exc:  # the store blinked: say so once, keep watching
            kind = type(exc).__name__
            if self._failing != kind:
                log.warning("replica %s: the shared ledger failed: %s", self.ledger.replica, kind)
            self._failing = kind
            return
        if self._failing is not None:
            log.info("replica %s: the shared ledger answers again", self.ledger.replica)
            self._failing = None
        if updates:
            self.taken_updates += len(updates)
            log.info("took over %d unanswered update(s) of a replica that is gone", len(updates))
            await self.tell_interrupted(updates)
        if replies:
            self.taken_replies += len(replies)
            log.info("took over %d unsent reply(ies) of a replica that is gone", len(replies))
            await self.deliver(replies)
