"""Delivery: persist a reply, then send it through its adapter until it is delivered.

``Outbox.post`` writes the reply to the ledger first (and marks the updates it answers as
done, in the same transaction), then sends it. What happens on a platform error is decided
here, once for every platform, from the adapter's translated errors:

- ``RateLimited``: wait ``retry_after`` — in the caller's task, so only that chat's lane
  waits while every other chat carries on — and send the chunks not yet delivered. With a
  ``coordinator`` the wait is also recorded for the chat (``hold_until``) and every send,
  on any replica, first sleeps out a hold there (``wait``): the platform limits the bot,
  not one replica. A hold longer than ``max_retry_after_s`` leaves the reply pending, as a
  long ``retry_after`` does; a backend that does not answer only costs the shared wait.
- ``Unavailable``: back off with jitter (``backoff_s`` doubling up to ``max_backoff_s``),
  at most ``max_attempts`` times; then the reply stays pending for the next start (or the
  next ``flush``).
- ``Forbidden`` / ``NotFound`` / ``BadRequest``: permanent; marked failed and logged.

Delivery is at-least-once. The adapter reports each chunk the platform confirmed and the
ledger records it before the next chunk goes (``Ledger.delivered``; the last one is recorded
by ``mark_sent``), so a reply cut off by a crash or SIGKILL resumes after the restart with
the chunks not yet confirmed. The one chunk in flight at that moment may have arrived
without its confirmation being recorded: it is sent again. Each chunk carries the key
``<row id>:<created_at>`` (``OutboundMessage.key``), from which the Discord adapter derives
a nonce that Discord de-duplicates for a few minutes; Telegram has no idempotency key, so
there that chunk can arrive twice.

``flush`` delivers everything pending (at start-up: replies a restart left unsent; at
shutdown: the last ones), one task per chat so a slow chat does not hold up the others.

An *edit* of a message already sent (kind ``EDIT``: the message a button was pressed on,
``reply_to`` naming it) goes the same way, with ``Adapter.edit`` instead of ``send``. It is
not best-effort: the edit is how the person learns what their press did and the buttons
go away, so it is persisted with the decision's acknowledgement and waits out a flood
limit in its chat like any reply; a restart delivers it. It is at-least-once too, which an
edit tolerates: the same edit twice shows the same message.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from adapters.base import (
    Adapter,
    BadRequest,
    Forbidden,
    NotFound,
    PlatformError,
    RateLimited,
)
from adapters.messages import OutboundMessage
from gateway.coordination import CoordinationError, Coordinator
from gateway.ledger import DeliveryLedger, OutboxRow, Outgoing

__all__ = ["EDIT", "Delivery", "DeliveryPolicy", "Outbox"]

log = logging.getLogger(__name__)

EDIT: Final = "edit"
"""The ``kind`` of an outbox row that edits the message ``reply_to`` rather than sends."""

Delivery = Literal["sent", "pending", "failed"]
"""What became of a reply: delivered; kept for a later attempt; refused for good."""


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    max_attempts: int = 5
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 300.0
    """A flood wait longer than this leaves the reply pending instead of holding the lane."""


class Outbox:
    def __init__(
        self,
        ledger: DeliveryLedger,
        adapters: Mapping[str, Adapter],
        *,
        policy: DeliveryPolicy | None = None,
        max_chunks: int = 0,
        coordinator: Coordinator | None = None,
    ) -> None:
        """``max_chunks``: at most this many messages per reply; past it the adapter sends
        the first ones and the whole text as a file (``gateway.max_reply_messages``);
        ``coordinator``: flood waits shared with the other replicas."""
        self.ledger = ledger
        self.coordinator = coordinator
        self.adapters = adapters
        self.policy = policy or DeliveryPolicy()
        self.max_chunks = max_chunks
        self._inflight: set[int] = set()

    async def post(self, outgoing: Outgoing, *, answers: tuple[str, ...] = ()) -> Delivery:
        """Persist, then deliver."""
        return await self.deliver(await self.ledger.enqueue(outgoing, answers=answers))

    async def deliver(self, row: OutboxRow) -> Delivery:
        if row.id in self._inflight:
            return "pending"  # another task is already delivering it
        adapter = self.adapters.get(row.platform)
        if adapter is None:
            log.warning("reply %d is for %s, which is not running; kept", row.id, row.platform)
            return "pending"
        self._inflight.add(row.id)
        try:
            return await self._deliver(adapter, row)
        finally:
            self._inflight.discard(row.id)

    async def _deliver(self, adapter: Adapter, row: OutboxRow) -> Delivery:
        policy = self.policy
        sent = row.chunks_sent
        backoff = policy.backoff_s

        async def delivered(done: int, total: int) -> None:
            if done < total:  # the last one: mark_sent
                await self.ledger.delivered(row.id, done)

        scope = f"{row.platform}:{row.chat_id}"
        for _attempt in range(policy.max_attempts):
            if not await self._flood_wait(scope, row.id):
                return "pending"
            message = OutboundMessage(
                platform=row.platform,
                chat_id=row.chat_id,
                text=row.text,
                thread_id=row.thread_id,
                reply_to_message_id=row.reply_to,
                markdown=row.markdown,
                buttons=row.buttons,
                skip_chunks=sent,
                max_chunks=self.max_chunks,
                key=f"{row.id}:{row.created_at!r}",
            )
            try:
                if row.kind == EDIT:
                    await adapter.edit(
                        row.chat_id,
                        row.reply_to or "",
                        row.text,
                        thread_id=row.thread_id,
                        buttons=row.buttons,
                    )
                else:
                    await adapter.send(message, delivered=delivered)
            except PlatformError as exc:
                sent += len(exc.sent)
                await self.ledger.progress(row.id, sent, str(exc))
                where = f"reply {row.id} to {row.platform}:{row.chat_id}"
                if isinstance(exc, Forbidden | NotFound | BadRequest):  # permanent
                    await self.ledger.mark_failed(row.id, f"{type(exc).__name__}: {exc}")
                    log.warning("%s dropped: %s: %s", where, type(exc).__name__, exc)
                    return "failed"
                if isinstance(exc, RateLimited):
                    if exc.retry_after > policy.max_retry_after_s:
                        log.warning("%s: flood wait %.0fs; left pending", where, exc.retry_after)
                        return "pending"
                    delay = exc.retry_after  # in this chat's lane only
                    await self._hold(scope, delay)
                else:  # Unavailable, or an adapter's own transient error
                    delay = random.uniform(backoff / 2, backoff)  # noqa: S311 - jitter
                    backoff = min(backoff * 2, policy.max_backoff_s)
                log.info("%s: %s; retry in %.1fs", where, exc, delay)
                await asyncio.sleep(delay)
                continue
            await self.ledger.mark_sent(row.id)
            return "sent"
        log.warning("reply %d not delivered after %d attempts; kept", row.id, policy.max_attempts)
        return "pending"

    async def _flood_wait(self, scope: str, row_id: int) -> bool:
        """Sleep out a flood wait another replica recorded for ``scope``; False when it is
        longer than ``max_retry_after_s`` (the reply stays pending)."""
        if self.coordinator is None:
            return True
        try:
            left = await self.coordinator.held_until(scope) - time.time()
            if left > self.policy.max_retry_after_s:
                log.warning("reply %d: %s flood wait %.0fs; left pending", row_id, scope, left)
                return False
            if left > 0:
                await self.coordinator.wait(scope, max_s=self.policy.max_retry_after_s)
        except CoordinationError as exc:  # counted; the platform's own 429 still protects
            log.debug("reply %d: no shared flood wait for %s: %s", row_id, scope, exc)
        return True

    async def _hold(self, scope: str, seconds: float) -> None:
        if self.coordinator is None:
            return
        try:
            await self.coordinator.hold_until(scope, time.time() + seconds)
        except CoordinationError as exc:
            log.debug("could not share the flood wait of %s: %s", scope, exc)

    async def flush(self, platform: str | None = None) -> int:
        """Deliver every pending reply (chats concurrently, in order within a chat);
        the number delivered."""
        return await self.deliver_rows(await self.ledger.pending(platform))

    async def deliver_rows(self, rows: Sequence[OutboxRow]) -> int:
        """Deliver these stored replies (chats concurrently, in order within a chat); the
        number delivered. Rows of a platform this gateway does not run are left pending."""
        by_chat: dict[tuple[str, str, str | None], list[OutboxRow]] = {}
        for row in rows:
            if row.platform in self.adapters:
                by_chat.setdefault((row.platform, row.chat_id, row.thread_id), []).append(row)

        async def chat(items: list[OutboxRow]) -> int:
            done = 0
            for item in items:
                done += await self.deliver(item) == "sent"
            return done

        results = await asyncio.gather(*(chat(items) for items in by_chat.values()))
        return sum(results)
