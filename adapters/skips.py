"""Updates an adapter receives but cannot use: skipped, logged once, counted.

A platform sometimes sends a payload its library cannot read (Telegram: ``"date":
"yesterday"``; Discord: an author that is not an object) or one the library reads but our
``normalize`` cannot map (a message without a chat, a chat type nobody knew). Such an update
must never stop the platform: the adapter confirms it (Telegram moves the offset past it;
Discord's sequence number already has), skips it and records it here::

    skips = Skips("telegram", logger)
    skips.skip("update 700000002 (message)", "unparsable", exc)
    skips.counts   # {"unparsable": 1, "unnormalisable": 0}; never reset

Reasons are a small fixed set (``SKIP_REASONS``): ``unparsable`` (the platform library
could not read the payload) and ``unnormalisable`` (it could, but ``normalize`` could not
turn it into an ``InboundMessage``). The gateway exports ``counts`` as
``mnemo_updates_skipped_total{platform,reason}``.

The log line names the update (its id and kind, built by the adapter from validated
fields), the reason and ``describe(error)``: the exception's class and at most the name of
the field it names (``KeyError: date``, ``AttributeError: author``). Never the exception's
message nor the payload: either may carry what people wrote, and the payload may carry
tokens.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Literal

__all__ = ["SKIP_REASONS", "SkipReason", "Skips", "Unusable", "describe", "label"]

SkipReason = Literal["unparsable", "unnormalisable"]
SKIP_REASONS: tuple[SkipReason, ...] = ("unparsable", "unnormalisable")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,63}")
_MISSING_ARGUMENT = re.compile(r"required (?:positional |keyword-only )?arguments?: '(\w+)'")


class Unusable(ValueError):
    """``normalize`` met a field it cannot map (``field`` is its name, e.g. ``chat.type``)."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def label(value: object) -> str | None:
    """``value`` when it is a plain field or event name (``message``, ``chat.type``), else
    None: payload keys are untrusted and may be anything."""
    return value if isinstance(value, str) and _NAME.fullmatch(value) else None


def _field(error: BaseException) -> str | None:
    if isinstance(error, Unusable):
        return label(error.field)
    if isinstance(error, KeyError) and error.args:
        return label(error.args[0])
    if isinstance(error, AttributeError):
        return label(error.name)
    if isinstance(error, TypeError):
        found = _MISSING_ARGUMENT.search(str(error))
        return found.group(1) if found else None
    return None


def describe(error: BaseException | None) -> str:
    """``TypeError``, ``KeyError: date``: the class and the field it names, nothing else."""
    if error is None:
        return "no error"
    field = _field(error)
    return f"{type(error).__name__}: {field}" if field else type(error).__name__


class Skips:
    """One adapter's skipped updates: ``skip`` logs and counts, ``counts`` reads."""

    def __init__(self, platform: str, logger: logging.Logger) -> None:
        self._platform = platform
        self._log = logger
        self._counts: dict[SkipReason, int] = dict.fromkeys(SKIP_REASONS, 0)

    @property
    def counts(self) -> Mapping[SkipReason, int]:
        """Skipped updates by reason since the adapter was made (a copy)."""
        return dict(self._counts)

    def skip(self, what: str, reason: SkipReason, error: BaseException | None) -> None:
        """Count one skipped update and log it (``what`` names it: built from validated
        ids and ``label``s only)."""
        self._counts[reason] += 1
        self._log.warning(
            "%s: skipped %s: %s (%s)",
            self._platform,
            what,
            reason,
            describe(error),
        )
