"""Per-person budgets: turns an hour and model tokens a day (``gateway.limits``).

Counted from the archive, so they hold across restarts:

- a **turn** is a user message the person spoke (``Archive.turn_times``; messages merged
  into one turn count once), in the sliding last hour;
- **tokens** are the prompt + completion tokens of the model requests that answered their
  turns since midnight UTC (``Archive.tokens_caused``; reviews and compression are the
  bot's own upkeep and are not charged to anyone).

0 means unlimited; admins are exempt. The gateway asks ``Budgets.check`` at the choke point
before a message may start a turn (``starts_turn``): commands are not turns, so ``/status``
stays available and shows the budget. A message over a budget never reaches the model and
is not archived as a turn (it would only push the limit further out), but it is not
dropped silently either: it is answered, the first time with the limit and when it resets,
then with at most a short reminder every ``REMIND_EVERY_S``; messages in between are
recorded as handled in the delivery ledger and get no reply.

With replicas (a shared ``gateway.coordination`` backend), the counts are the shared
archive's, and what a person was told is shared too: a notice this process would give is
given only if no replica spoke to them about that budget within ``remind_every_s`` (a
``claim``), and it is the full explanation only for the first replica to tell that limit.
A backend that does not answer leaves this process's own judgement.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from adapters.messages import InboundMessage
from gateway.commands import parse_command
from gateway.coordination import CoordinationError, Coordinator
from gateway.pairing import time_left
from memory.archive import ArchiveStore

__all__ = [
    "LIMIT_KINDS",
    "Budgets",
    "LimitKind",
    "Limited",
    "Limits",
    "Refusal",
    "Spent",
    "starts_turn",
]

log = logging.getLogger(__name__)

HOUR_S = 3600.0
DAY_S = 86_400.0
REMIND_EVERY_S = 600.0

LimitKind = Literal["turns", "tokens"]
LIMIT_KINDS: tuple[LimitKind, ...] = ("turns", "tokens")


@dataclass(frozen=True, slots=True)
class Limits:
    turns_per_hour: int = 60
    tokens_per_day: int = 200_000


@dataclass(frozen=True, slots=True)
class Spent:
    turns: int  # in the last hour
    tokens: int  # since midnight UTC


@dataclass(frozen=True, slots=True)
class Limited:
    kind: LimitKind
    limit: int
    resets_at: float  # unix time


@dataclass(frozen=True, slots=True)
class Refusal:
    """A message not run: over the ``kind`` budget; ``text`` answers it (None: no reply,
    they were told recently)."""

    kind: LimitKind
    text: str | None


def starts_turn(message: InboundMessage) -> bool:
    """Whether the message may start a model turn: plain text, or ``/<skill> TEXT`` (any
    slash word that is not a built-in command); never a built-in command or a button."""
    if message.is_callback:
        return False
    if not message.is_command:
        return True
    head = (message.text.split() or [""])[0].lower()
    return parse_command(message.text) is None and head.split("@", 1)[0] != "/start"


def _midnight(now: float) -> float:
    day = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


def _clock_time(at: float) -> str:
    """``14:05 UTC``, rounded up to the minute (by then it surely holds)."""
    return datetime.fromtimestamp(math.ceil(at / 60) * 60, UTC).strftime("%H:%M UTC")


class Budgets:
    def __init__(
        self,
        archive: ArchiveStore,
        limits: Limits,
        *,
        clock: Callable[[], float] = time.time,
        remind_every_s: float = REMIND_EVERY_S,
        coordinator: Coordinator | None = None,
    ) -> None:
        """``coordinator``: shared with other replicas, so a person is told once by them all."""
        self.archive = archive
        self.coordinator = coordinator
        self._limits = limits
        self._clock = clock
        self.remind_every_s = remind_every_s
        self._limited: dict[str, Limited] = {}  # known over a budget until resets_at
        self._told: dict[str, tuple[Limited, float]] = {}  # person -> (what, when told)

    @property
    def limits(self) -> Limits:
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        """New budgets (SIGHUP) apply to the next message, also for people limited now."""
        self._limits = limits
        self._limited.clear()

    async def spent(self, person: str) -> Spent:
        now = self._clock()
        turns = await self.archive.turn_times(person, now - HOUR_S)
        tokens = await self.archive.tokens_caused(person, _midnight(now))
        return Spent(len(turns), tokens)

    async def refusal(self, message: InboundMessage) -> Refusal | None:
        """None when ``message`` may go on (it starts no turn, or its sender is within
        budget); else why not and what to answer. The caller exempts admins."""
        if not starts_turn(message):
            return None
        person = message.sender.person
        over = await self.check(person)
        if over is None:
            return None
        text = self.notice(person, over)
        if text is not None:
            text = await self._shared(person, over, text)
        if text is not None:
            log.info("%s is over the %s budget", message.sender.qualified, over.kind)
        return Refusal(over.kind, text)

    async def _shared(self, person: str, over: Limited, text: str) -> str | None:
        """``text`` as the replicas agree: None when one of them spoke to ``person`` about
        this limit within ``remind_every_s``; the full text only from the first to tell."""
        shared = self.coordinator
        if shared is None or shared.backend == "local":
            return text
        about = f"{person}:{over.kind}"
        now = self._clock()
        try:
            if not await shared.claim(f"budget-spoke:{about}", self.remind_every_s):
                return None
            told = f"budget-told:{about}:{over.resets_at:.0f}"  # this limit, until it resets
            if await shared.claim(told, max(over.resets_at - now, 1.0)):
                return _explanation(over, now)
        except CoordinationError as exc:  # counted; our own judgement stands
            log.debug("budget notice for %s not shared: %s", person, exc)
            return text
        return _reminder(over)

    async def check(self, person: str) -> Limited | None:
        """The budget ``person`` has used up, or None when they may start a turn."""
        now = self._clock()
        self._limited = {p: lim for p, lim in self._limited.items() if lim.resets_at > now}
        known = self._limited.get(person)
        if known is not None:
            return known  # no query while they are limited anyway
        limits = self._limits
        over: Limited | None = None
        if limits.turns_per_hour:
            times = await self.archive.turn_times(person, now - HOUR_S)
            if len(times) >= limits.turns_per_hour:
                # free once the turn that filled the budget leaves the hour
                freed = times[limits.turns_per_hour - 1] + HOUR_S
                over = Limited("turns", limits.turns_per_hour, freed)
        if over is None and limits.tokens_per_day:
            midnight = _midnight(now)
            if await self.archive.tokens_caused(person, midnight) >= limits.tokens_per_day:
                over = Limited("tokens", limits.tokens_per_day, midnight + DAY_S)
        if over is not None:
            self._limited[person] = over
        return over

    def notice(self, person: str, limited: Limited) -> str | None:
        """What to answer a message over ``limited``: the full explanation once per limit
        window, then a short reminder at most every ``remind_every_s``, else None."""
        now = self._clock()
        self._told = {p: t for p, t in self._told.items() if t[0].resets_at > now}
        told = self._told.get(person)
        if told is not None and told[0] == limited and now - told[1] < self.remind_every_s:
            return None
        self._told[person] = (limited, now)
        if told is not None and told[0] == limited:
            return _reminder(limited)
        return _explanation(limited, now)

    async def status(self, person: str, *, admin: bool) -> str:
        """One line for ``/status``: usage against the budgets."""
        limits = self._limits
        if admin:
            return "Limits: none (you are an admin)"
        if not limits.turns_per_hour and not limits.tokens_per_day:
            return "Limits: none on this bot"
        spent = await self.spent(person)
        turns = f"{spent.turns:,}/{limits.turns_per_hour:,}" if limits.turns_per_hour else "no"
        tokens = f"{spent.tokens:,}/{limits.tokens_per_day:,}" if limits.tokens_per_day else "no"
        return (
            f"Limits: {turns} messages this hour, {tokens} model tokens today (UTC;"
            " the day resets at midnight)"
        )


def _explanation(limited: Limited, now: float) -> str:
    if limited.kind == "turns":
        return (
            f"You've reached this bot's limit of {limited.limit:,} messages an hour, so I"
            f" haven't passed this one on. You can write again {_when(limited)}."
        )
    return (
        f"You've used today's allowance of {limited.limit:,} model tokens on this bot, so"
        f" I haven't passed this message on. It resets at midnight UTC"
        f" (in {time_left(limited.resets_at - now)})."
    )


def _reminder(limited: Limited) -> str:
    return f"Still over the limit: you can write again {_when(limited)}."


def _when(limited: Limited) -> str:
    if limited.kind == "tokens":
        return "after midnight UTC"
    return f"at {_clock_time(limited.resets_at)}"
