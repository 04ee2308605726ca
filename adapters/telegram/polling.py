"""The Telegram adapter's getUpdates loop (polling mode).

Why our own loop instead of ``Updater.start_polling``: PTB's ``network_retry_loop``
(``telegram/ext/_utils/networkloop.py``) retries a failed getUpdates on a fixed schedule with
no jitter (1 s, then x1.5 per failure up to 30 s), retries a ``TimedOut`` at once, waits
``retry_after + 0.5`` s on 429, and reports only the non-timeout errors to
``error_callback`` (never the recovery), and nothing of this is configurable
(``poll_interval`` only spaces successful polls). It also confirms updates before they are
handled (the offset moves as soon as they are queued). This loop backs off exponentially
with equal jitter (``backoff_delay``: between half and all of ``min(cap, base * 2**(n-1))``),
tracks ``connected`` on every success and failure, and advances the offset only past updates
the sink has received, so a crash re-delivers rather than loses (the gateway deduplicates on
``update_id``). ``drop_pending_updates`` is never used, for the same reason.

One bad update never stops it. ``Bot.get_updates`` parses the whole batch at once, so a
single element PTB cannot read would fail every poll (see ``updates``); the loop asks for the
raw list instead (``Bot._post("getUpdates", ...)``: exactly the request ``get_updates``
makes, with PTB's error mapping, minus the parsing; it is the protected step that PTB's own
``ExtBot`` builds on) and reads each update on its own, in order:

- one PTB cannot read is logged (``update 700000002 (message): unparsable (TypeError)``),
  counted in ``skips`` and confirmed with the rest: the offset moves past its ``update_id``,
  wherever it sits in the batch (first, middle, last);
- one ``normalize`` cannot map is the adapter's to skip (it counts ``unnormalisable``);
- one without a usable ``update_id`` (a broken server or proxy; Telegram always sends one)
  cannot be confirmed on its own: the offset moves past it with the next update that has an
  id. It is counted once, however often it comes back; while a batch holds nothing that can
  move the offset, the loop waits ``backoff_base`` between polls instead of spinning.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import warnings
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

from telegram import Update
from telegram import error as tg
from telegram.ext import ExtBot
from telegram.warnings import PTBDeprecationWarning

from adapters.skips import Skips
from adapters.telegram import updates

__all__ = ["Poller", "backoff_delay", "retry_after"]

_LOGGER = logging.getLogger(__name__)


def backoff_delay(
    failures: int, *, base: float, cap: float, rng: random.Random | None = None
) -> float:
    """Seconds to wait after ``failures`` consecutive failures: equal jitter, between half
    and all of ``min(cap, base * 2 ** (failures - 1))``, so it grows and never synchronises."""
    step = min(cap, base * 2.0 ** min(64, max(0, failures - 1)))
    jitter: float = (rng or random).uniform(0, step / 2)  # jitter, not cryptography
    return step / 2 + jitter


def retry_after(exc: tg.RetryAfter) -> float:
    """``RetryAfter.retry_after`` in seconds, whichever form PTB gives."""
    with warnings.catch_warnings():  # the int-vs-timedelta deprecation of PTB 22.2
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _fingerprint(data: object) -> str:
    return json.dumps(data, sort_keys=True, default=str)


class Poller:
    """Long-polls getUpdates and hands each readable update to ``handle``, in order."""

    def __init__(
        self,
        bot: ExtBot[Any],
        *,
        handle: Callable[[Update], Awaitable[None]],
        skips: Skips,
        redact: Callable[[str], str],
        allowed_updates: Sequence[str],
        poll_timeout: float,
        request_timeout: float,
        backoff_base: float,
        backoff_cap: float,
    ) -> None:
        self._bot = bot
        self._handle = handle
        self._skips = skips
        self._redact = redact
        self._allowed_updates = list(allowed_updates)
        self._poll_timeout = poll_timeout
        self._request_timeout = request_timeout
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._stopping = asyncio.Event()
        self._offset: int | None = None
        self._unconfirmed = False
        self._unconfirmable: set[str] = set()  # id-less updates after the last id, counted
        self.fetching = False
        """True during a long poll: ``stop`` may cancel it without losing anything."""
        self.connected = True
        self.failures = 0
        """Consecutive failed getUpdates calls (0 while polling works)."""

    def stop(self) -> None:
        """End ``run`` at its next step (a long poll in flight is the caller's to cancel)."""
        self._stopping.set()

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                batch = await self._fetch()
            except tg.RetryAfter as exc:
                await self._pause(retry_after(exc))
                continue
            except Exception as exc:
                self.failures += 1
                self.connected = False
                delay = backoff_delay(self.failures, base=self._backoff_base, cap=self._backoff_cap)
                _LOGGER.warning(
                    "telegram: getUpdates failed %d time(s) in a row (%s: %s); retrying in %.2f s",
                    self.failures,
                    type(exc).__name__,
                    self._redact(str(exc)),
                    delay,
                )
                await self._pause(delay)
                continue
            if self.failures:
                _LOGGER.info("telegram: getUpdates works again")
            self.failures = 0
            self.connected = True
            self._unconfirmed = False
            if batch and not await self._take(batch):
                await self._pause(self._backoff_base)  # nothing in it can move the offset

    async def _take(self, batch: list[object]) -> bool:
        """Hand on what can be read, skip the rest; True when the offset moved."""
        moved = False
        unconfirmable: set[str] = set()
        for data in batch:
            update_id = updates.update_id(data)
            try:
                update = updates.read(data, self._bot)
            except Exception as exc:
                seen = False
                if update_id is None:  # back on every poll until a later id confirms it
                    fingerprint = _fingerprint(data)
                    unconfirmable.add(fingerprint)
                    seen = fingerprint in self._unconfirmable
                if not seen:
                    self._skips.skip(updates.name(data), "unparsable", exc)
            else:
                await self._handle(update)
            if update_id is not None:
                unconfirmable.clear()  # confirmed by this id along with everything before it
                if self._offset is None or update_id >= self._offset:
                    self._offset = update_id + 1
                self._unconfirmed = moved = True
        self._unconfirmable = unconfirmable
        return moved

    async def _fetch(self, *, poll: float | None = None, read: float | None = None) -> list[object]:
        """One getUpdates call (a long poll unless ``poll`` seconds are given; ``read``: its
        read timeout); the raw result list (see the module docstring)."""
        wait = self._poll_timeout if poll is None else poll
        self.fetching = poll is None
        try:
            result = await self._bot._post(
                "getUpdates",
                {"offset": self._offset, "timeout": wait, "allowed_updates": self._allowed_updates},
                read_timeout=self._request_timeout + wait if read is None else read,
            )
        finally:
            self.fetching = False
        if not isinstance(result, list):
            raise tg.TelegramError(f"getUpdates answered a {type(result).__name__}, not a list")
        return result

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):  # 3.11 wait_for loses cancels
                await self._stopping.wait()

    async def confirm(self) -> None:
        """Tell Telegram the updates handed on are done (as Updater does on stop)."""
        if not self._unconfirmed:
            return
        try:
            # read_timeout: stop stays quick if Telegram is down
            await self._fetch(poll=0, read=min(2.0, self._request_timeout))
            self._unconfirmed = False
        except tg.TelegramError as exc:
            _LOGGER.warning(
                "telegram: could not confirm handled updates (%s); they will be delivered "
                "again and deduplicated",
                self._redact(str(exc)),
            )
