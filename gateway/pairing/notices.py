"""What strangers and admins are told about pairing requests, and how often.

**Strangers.** Someone unknown who writes a DM gets their code once, when it is issued, with
the time it is valid for. While it waits, further messages get at most a short reminder
every ``REMIND_EVERY_S`` ("your code … is still waiting for an admin, 43 minutes left");
the rest get no reply. What a stranger is told never names anyone else.

**Replicas.** With a shared ``gateway.coordination`` backend a reminder is sent only by the
first replica to claim it in its ``REMIND_EVERY_S`` window (``PairingDesk.answer``); a new
code is told by the one replica that issued it (the store decides).

**Admins.** Each new code is announced to the admins in their private chat with the bot,
on the platform the request came from (an admin listed for another platform cannot be
reached there), with Approve / Deny buttons whose data is the command itself
(``/pair approve CODE``, well under Telegram's 64-byte limit). Announcements are batched
and rate-limited per admin: one waits ``batch_s`` after the first request it carries, an
admin gets at most one every ``gap_s``, and one lists at most ``SHOWN`` requests and says
how many are waiting in all, so a burst of 300 strangers costs each admin a handful of
messages, not 300. Requests decided or expired in the meantime are left out. Names are what
each person calls themselves (``label``-safe) and are marked as such.

``AdminNotices.run`` is the gateway's background task that sends them (a failure is logged
and the task goes on); requests still queued at shutdown are logged, not sent: ``/pair list``
and ``mnemo pairing list`` show every waiting code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from adapters.messages import Button, Identity, label
from gateway.coordination import CoordinationError, Coordinator
from gateway.pairing.store import Listing, PairingOffer, PairingStore, PendingCode, time_left

if TYPE_CHECKING:  # `mnemo pairing` and `memory show` need no ledger, no archive
    from gateway.ledger import OutboxKind

__all__ = [
    "BATCH_S",
    "GAP_S",
    "REMIND_EVERY_S",
    "SHOWN",
    "AdminNotices",
    "PairingDesk",
    "PairingRequest",
    "Post",
    "StrangerReplies",
    "admin_notice",
    "listing_text",
    "self_named",
]

log = logging.getLogger(__name__)

REMIND_EVERY_S = 600.0
BATCH_S = 30.0
GAP_S = 300.0
SHOWN = 5  # requests listed (with buttons) in one notice
QUEUE_MAX = 200  # untold requests kept per admin; the notice counts the rest anyway


class Post(Protocol):
    """Send ``text`` to ``user_id``'s private chat with the bot (``Replies.private``)."""

    def __call__(
        self,
        platform: str,
        user_id: str,
        text: str,
        *,
        buttons: tuple[Button, ...],
        kind: OutboxKind,
    ) -> Awaitable[object]: ...


@dataclass(frozen=True, slots=True)
class PairingRequest:
    platform: str
    who: str  # telegram:77
    name: str  # what they call themselves
    username: str | None
    code: str


@dataclass(slots=True)
class _Told:
    code: str
    expires_at: float
    at: float


class StrangerReplies:
    """The reply to a stranger's DM, or None when they were told recently enough."""

    def __init__(
        self, *, clock: Callable[[], float] = time.time, remind_every_s: float = REMIND_EVERY_S
    ) -> None:
        self._clock = clock
        self.remind_every_s = remind_every_s
        self._told: dict[str, _Told] = {}

    def reply(self, who: str, offer: PairingOffer) -> str | None:
        now = self._clock()
        if len(self._told) > 256:
            self._told = {w: t for w, t in self._told.items() if t.expires_at > now}
        told = self._told.get(who)
        left = time_left(offer.expires_at - now)
        if offer.new:
            self._told[who] = _Told(offer.code, offer.expires_at, now)
            return (
                "Hi! I don't know you yet. To talk to me, ask the admin of this bot to approve"
                f" your pairing code:\n\n{offer.code}\n\n(it is valid for {left})"
            )
        if told is not None and told.code == offer.code and now - told.at < self.remind_every_s:
            return None
        self._told[who] = _Told(offer.code, offer.expires_at, now)
        return f"Your pairing code {offer.code} is still waiting for an admin, {left} left."


@dataclass(slots=True)
class _Queue:
    requests: list[PairingRequest] = field(default_factory=list)
    since: float = 0.0  # when the oldest untold request arrived
    last_sent: float = float("-inf")


class AdminNotices:
    def __init__(
        self,
        *,
        store: PairingStore,
        admins: Callable[[str], Sequence[str]],
        post: Post,
        batch_s: float = BATCH_S,
        gap_s: float = GAP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``admins(platform)``: the user ids of the admins reachable there."""
        self.store = store
        self.batch_s = batch_s
        self.gap_s = gap_s
        self._admins = admins
        self._post = post
        self._clock = clock
        self._queues: dict[tuple[str, str], _Queue] = {}  # (platform, admin user id)
        self._changed = asyncio.Event()

    def add(self, request: PairingRequest) -> int:
        """Queue a new request for the admins of its platform; how many will hear of it."""
        now = self._clock()
        admins = list(self._admins(request.platform))
        for admin in admins:
            queue = self._queues.setdefault((request.platform, admin), _Queue())
            if not queue.requests:
                queue.since = now
            queue.requests.append(request)
            del queue.requests[:-QUEUE_MAX]
        if admins:
            self._changed.set()
        return len(admins)

    def _due_at(self, queue: _Queue) -> float:
        return max(queue.since + self.batch_s, queue.last_sent + self.gap_s)

    def next_due(self) -> float | None:
        """When the next notice falls due (this object's clock), or None if none waits."""
        return min((self._due_at(q) for q in self._queues.values() if q.requests), default=None)

    def due(self) -> list[tuple[str, str, list[PairingRequest]]]:
        """(platform, admin, requests) of every notice due now, taken off the queues."""
        now = self._clock()
        ready = []
        for (platform, admin), queue in self._queues.items():
            if queue.requests and self._due_at(queue) <= now:
                ready.append((platform, admin, queue.requests))
                queue.requests = []
                queue.last_sent = now
        return ready

    @property
    def queued(self) -> int:
        return sum(len(q.requests) for q in self._queues.values())

    async def run(self) -> None:
        """Send notices as they fall due, until cancelled."""
        while True:
            wake = self.next_due()
            self._changed.clear()
            if wake is None or wake > self._clock():
                timeout = None if wake is None else wake - self._clock()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):  # 3.11 wait_for loses cancels
                        await self._changed.wait()
                continue
            for platform, admin, requests in self.due():
                try:
                    await self._tell(platform, admin, requests)
                except Exception:
                    log.warning(
                        "could not tell admin %s:%s of %d pairing request(s)",
                        platform,
                        admin,
                        len(requests),
                        exc_info=True,
                    )

    async def _tell(self, platform: str, admin: str, requests: list[PairingRequest]) -> None:
        listing = await asyncio.to_thread(self.store.listing)
        waiting = {p.code: p for p in listing.pending if p.who.startswith(f"{platform}:")}
        fresh = [r for r in requests if r.code in waiting]
        if not fresh:
            return
        text, buttons = admin_notice(fresh, waiting, now=self.store.now)
        await self._post(platform, admin, text, buttons=buttons, kind="notice")

    def close(self) -> None:
        if self.queued:
            log.info(
                "%d pairing request(s) were not announced before stopping; /pair list and"
                " mnemo pairing list show every waiting code",
                self.queued,
            )


class PairingDesk:
    """The gateway's side of pairing: what a stranger is told, and telling the admins."""

    def __init__(
        self,
        store: PairingStore,
        *,
        admins: Callable[[], Collection[str]],
        platforms: Collection[str],
        post: Post,
        clock: Callable[[], float] = time.time,
        coordinator: Coordinator | None = None,
    ) -> None:
        """``admins()``: the configured admins (``telegram:123``; re-read, SIGHUP may
        change them); ``platforms``: those the gateway runs, where admins can be reached;
        ``coordinator``: shared with other replicas, so reminders are too."""
        self._admins = admins
        self._coordinator = coordinator
        self._platforms = platforms
        self.strangers = StrangerReplies(clock=clock)
        self.notices = AdminNotices(store=store, admins=self._admins_on, post=post)

    def _admins_on(self, platform: str) -> list[str]:
        if platform not in self._platforms:
            return []
        prefix = f"{platform}:"
        return sorted(a.removeprefix(prefix) for a in self._admins() if a.startswith(prefix))

    def offer(self, sender: Identity, offer: PairingOffer) -> str | None:
        """What to answer a stranger's DM (None: nothing now); a new code is queued for
        the admins."""
        if offer.new:
            told = self.notices.add(
                PairingRequest(
                    sender.platform,
                    sender.qualified,
                    sender.display_name,
                    sender.username,
                    offer.code,
                )
            )
            log.info(
                "pairing code issued to %s%s",
                sender.qualified,
                "" if told else f"; no admin on {sender.platform} to tell (see /pair list)",
            )
        return self.strangers.reply(sender.qualified, offer)

    async def answer(self, sender: Identity, offer: PairingOffer) -> str | None:
        """``offer``'s answer as the replicas agree: a reminder only from the first replica
        to claim it in its window (a backend that does not answer: this one's own)."""
        text = self.offer(sender, offer)
        shared = self._coordinator
        if text is None or shared is None or shared.backend == "local":
            return text
        window = f"pairing-remind:{sender.qualified}:{offer.code}"
        try:
            spoke = await shared.claim(window, self.strangers.remind_every_s)
        except CoordinationError as exc:  # counted by the coordinator
            log.debug("pairing reminder for %s not shared: %s", sender.qualified, exc)
            return text
        return text if spoke or offer.new else None  # a new code: told, the window starts


def admin_notice(
    fresh: Sequence[PairingRequest], waiting: dict[str, PendingCode], *, now: float
) -> tuple[str, tuple[Button, ...]]:
    """The text and buttons of one notice: ``fresh`` requests still waiting, oldest first,
    the first ``SHOWN`` listed; ``waiting`` is every code waiting on that platform."""
    shown = sorted(fresh, key=lambda r: waiting[r.code].expires_at)[:SHOWN]
    platform = shown[0].platform.capitalize()
    count = len(fresh)
    head = (
        f"New pairing request on {platform}:"
        if count == 1
        else f"{count} new pairing requests on {platform}:"
    )
    lines = [head]
    for request in shown:
        says = self_named(request.name)
        if request.username:
            says += f", username @{label(request.username)}"
        left = time_left(waiting[request.code].expires_at - now)
        lines.append(f"• {request.who} ({says}): code {request.code}, {left} left")
    if count > len(shown):
        lines.append(f"… and {count - len(shown)} more.")
    if len(waiting) > len(shown):
        lines.append(f"{len(waiting)} codes are waiting on {platform} in all: /pair list.")
    lines.append("Approve or deny below, or /pair block PLATFORM:ID to ignore someone for good.")
    buttons: list[Button] = []
    for request in shown:
        buttons.append((f"Approve {request.code}", f"/pair approve {request.code}"))
        buttons.append((f"Deny {request.code}", f"/pair deny {request.code}"))
    return "\n".join(lines), tuple(buttons)


def self_named(name: str) -> str:
    """A name the person chose, marked as theirs (and one safe line: ``label``)."""
    name = label(name)
    return f"calls themselves “{name}”" if name else "gave no name"


def listing_text(listing: Listing, *, now: float) -> str:
    """``/pair list``: waiting codes with the time each has left, approved, blocked."""
    if not (listing.pending or listing.approved or listing.blocked):
        return "No pairings: no codes waiting, nobody approved or blocked."
    lines = [f"Waiting codes ({len(listing.pending)}):"]
    lines += [
        f"  {p.code} — {label(p.who)}, {self_named(p.name)}, {time_left(p.expires_at - now)} left"
        for p in listing.pending
    ]
    lines += [f"Approved ({len(listing.approved)}):"] + [f"  {label(w)}" for w in listing.approved]
    lines += [f"Blocked ({len(listing.blocked)}):"] + [f"  {label(w)}" for w in listing.blocked]
    return "\n".join(lines)
