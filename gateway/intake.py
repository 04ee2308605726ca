"""The choke point: every update an adapter normalises goes through ``Intake.receive``.

In this order:

1. **authorize** (``gateway.auth``): deny by default; pairing codes for unknown DMs; groups,
   bots and blocked people ignored silently. Nothing else runs for a message that fails here.
2. **gate**: in a group the bot answers only when addressed (mention, reply, command),
   unless the platform's ``require_mention`` is off or the chat is a free-response chat.
3. **deduplicate**: the ledger (``gateway.ledger``), the durable record: an update seen
   before is dropped, so a redelivery after a restart never gets a second answer. A ledger
   the replicas share (PostgreSQL) decides across them too, so an update delivered to two
   replicas yields one turn; with a shared ``gateway.coordination`` backend and a ledger of
   this process's own, the first replica to ``claim`` the update's key takes it first (a
   claim the backend cannot answer lets the update through, counted).
4. **pairing** (``gateway.pairing.notices``): a stranger is told their code once (then at
   most a reminder every 10 minutes, across replicas), and the admins hear of each new
   code, batched.
5. **budget** (``gateway.limits``): a message that would start a turn past the person's
   turns-an-hour or tokens-a-day budget is answered with the limit, not run.
6. **queue** (``gateway.router``) on the session key's lane (``gateway.turns`` runs it).

Once ``closing`` (the gateway is stopping), a message is still acknowledged and recorded
but not queued: the next start tells its sender the answer was lost.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping

from adapters.base import Adapter
from adapters.messages import InboundMessage
from gateway.auth import Auth
from gateway.coordination import CLAIM_TTL_S, CoordinationError, Coordinator
from gateway.ledger import DeliveryLedger, Inbound
from gateway.limits import Budgets
from gateway.metrics import Metrics
from gateway.pairing import PairingDesk
from gateway.prefetch import EarlyRecall
from gateway.replies import Replies
from gateway.router import Router, RouterClosed
from gateway.sessions import SessionKey
from gateway.settings import GatewaySettings, PlatformPolicy

__all__ = ["Intake"]

log = logging.getLogger(__name__)


class Intake:
    def __init__(
        self,
        *,
        auth: Auth,
        adapters: Mapping[str, Adapter],
        ledger: DeliveryLedger,
        router: Router,
        budgets: Budgets,
        pairing_desk: PairingDesk,
        replies: Replies,
        metrics: Metrics,
        settings: Callable[[], GatewaySettings],
        early: EarlyRecall | None = None,
        coordinator: Coordinator | None = None,
    ) -> None:
        """``settings`` is read on every message: a reload applies to the next one;
        ``early`` starts the memory provider's prefetch as a message is queued;
        ``coordinator`` (shared by replicas) claims each update once across them."""
        self.auth = auth
        self.adapters = adapters
        self.ledger = ledger
        self.router = router
        self.budgets = budgets
        self.pairing_desk = pairing_desk
        self.replies = replies
        self.metrics = metrics
        self._settings = settings
        self.early = early
        self.coordinator = coordinator
        self.closing = False

    async def receive(self, message: InboundMessage) -> None:
        """An adapter's sink: authorize, gate, deduplicate, queue. Returns quickly (on a
        shared pairing store, after its round trip: ``Auth.decide``)."""
        verdict = await self.auth.decide(message)
        if verdict.action == "ignore":
            log.debug("ignored %s: %s", message.dedup_key, verdict.reason)
            await self._dismiss(message)
            return
        if verdict.action == "allow" and not self._addressed(message):
            await self._dismiss(message)
            return
        key = self.key(message)
        if self.closing:
            # acknowledged by the platform: keep it in the ledger so the next start tells them
            # (unclaimed: with a ledger of its own, a replica that goes on may still take it;
            # a shared ledger is this replica's now, and the others tell them once it is gone)
            await self._accept(message, key)
            return
        if not await self._claim(message):
            self.metrics.redelivery()
            log.info("dropped update %s: another replica took it", message.dedup_key)
            return
        if not await self._accept(message, key):
            self.metrics.redelivery()
            log.info("dropped a redelivered update %s", message.dedup_key)
            return
        if verdict.action == "pair" and verdict.offer is not None:
            text = await self.pairing_desk.answer(message.sender, verdict.offer)
            if text is None:
                await self._dismiss(message)
            await self.replies.answer_or_finish(message, key, text)
            return
        refusal = None if verdict.admin else await self.budgets.refusal(message)
        if refusal is not None:
            self.metrics.limited(message.platform, refusal.kind)
            await self.replies.answer_or_finish(message, key, refusal.text)
            return
        with contextlib.suppress(RouterClosed):  # the row stays queued: the next start tells them
            self.router.submit(key, message)
            if self.early is not None:
                self.early.start(key, message)

    def key(self, message: InboundMessage) -> SessionKey:
        """The session ``message`` belongs to."""
        return SessionKey.for_message(
            message, per_user_in_groups=self._settings().group_sessions_per_user
        )

    async def _dismiss(self, message: InboundMessage) -> None:
        """Nothing will answer ``message``: its adapter releases what it holds open."""
        adapter = self.adapters.get(message.platform)
        if adapter is None:
            return
        try:
            await adapter.dismiss(message)
        except Exception as exc:  # best effort, never a reason to fail intake
            log.debug("could not dismiss %s: %s", message.dedup_key, exc)

    def _addressed(self, message: InboundMessage) -> bool:
        if message.chat_type == "dm" or message.addressed_to_bot or message.is_callback:
            return True
        policy = self._settings().platforms.get(message.platform, PlatformPolicy())
        return not policy.require_mention or message.chat_id in policy.free_response_chats

    async def _claim(self, message: InboundMessage) -> bool:
        """Whether this replica takes ``message`` (always, with no shared backend)."""
        coordinator = self.coordinator
        if coordinator is None or coordinator.backend == "local" or self.ledger.shared:
            return True  # one process, or a ledger all replicas share: it alone decides
        try:
            return await coordinator.claim(f"inbound:{message.dedup_key}", CLAIM_TTL_S)
        except CoordinationError as exc:  # counted by the coordinator
            log.warning("could not claim update %s, taking it: %s", message.dedup_key, exc)
            return True

    async def _accept(self, message: InboundMessage, key: SessionKey) -> bool:
        return await self.ledger.accept(
            Inbound(
                key=message.dedup_key,
                session_key=str(key),
                platform=message.platform,
                chat_id=message.chat_id,
                thread_id=message.thread_id,
                message_id=message.message_id,
                received_at=time.time(),
            )
        )
