"""What the archive's reads answer: the typed results behind ``session_search``, the mnemo
commands and the CLI (``memory.archive.search`` produces them), and the two helpers that
show them (``excerpt``, ``when``).

A session the viewer cannot see is ``SessionNotFound``, exactly as one that does not exist.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memory.archive.query import ParsedQuery
from memory.archive.records import ArchiveError, Message, Session

__all__ = [
    "Discovery",
    "Hit",
    "Listed",
    "Match",
    "MessageNotInSession",
    "Reading",
    "Scroll",
    "SessionNotFound",
    "SessionResult",
    "excerpt",
    "when",
]


class SessionNotFound(ArchiveError, LookupError):
    """No such session in the viewer's history (whether it exists is not said)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session {session_id!r} in your history.")
        self.session_id = session_id


class MessageNotInSession(ArchiveError, LookupError):
    def __init__(self, message_id: int, session_id: str) -> None:
        super().__init__(f"Message {message_id} is not in session {session_id!r}.")
        self.message_id = message_id
        self.session_id = session_id


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching message, as the index found it."""

    message_id: int
    session_id: str
    root_id: str
    score: float
    snippet: str


@dataclass(frozen=True, slots=True)
class Match:
    """A message that matched, the index's snippet of it, and its neighbours: the messages
    just before and after it in its session (None at either end)."""

    message: Message
    snippet: str
    before: Message | None = None
    after: Message | None = None


@dataclass(frozen=True, slots=True)
class SessionResult:
    """A session that matched, with its best matching messages (at least one, best first)."""

    session: Session
    matches: tuple[Match, ...]

    @property
    def message(self) -> Message:
        """The best matching message."""
        return self.matches[0].message

    @property
    def snippet(self) -> str:
        return self.matches[0].snippet


@dataclass(frozen=True, slots=True)
class Discovery:
    """What a query found, best first. ``note``: why nothing was searched or found, or what
    was cut from the query."""

    query: str
    parsed: ParsedQuery
    results: tuple[SessionResult, ...]
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Reading:
    """A session read whole, or (``omitted`` set) its first ``READ_HEAD`` and last
    ``READ_TAIL`` messages, the middle left out between those two message ids."""

    session: Session
    messages: tuple[Message, ...]
    omitted: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Scroll:
    """The messages around ``anchor`` (included), and whether the session goes on."""

    session: Session
    anchor: int
    messages: tuple[Message, ...]
    more_before: bool
    more_after: bool


@dataclass(frozen=True, slots=True)
class Listed:
    """A recent session and its first message (None: it has none yet)."""

    session: Session
    first: Message | None


def excerpt(text: str, terms: Sequence[str], width: int = 160) -> str:
    """``width`` characters of ``text`` (white space flattened) around the first of
    ``terms`` it contains, with ``…`` where it was cut."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.casefold()
    places = [i for i in (lowered.find(t.casefold()) for t in terms if t) if i >= 0]
    start = max(0, min(min(places, default=0) - width // 3, len(flat) - width))
    cut = flat[start : start + width]
    return f"{'…' if start else ''}{cut}{'…' if start + width < len(flat) else ''}"


def when(timestamp: float, now: float | None = None) -> str:
    """``2026-11-28 14:03 UTC (2 days ago)``."""
    now = time.time() if now is None else now
    stamp = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
    delta = max(0.0, now - timestamp)
    for unit, seconds in (("year", 31_536_000), ("month", 2_592_000), ("week", 604_800),
                          ("day", 86_400), ("hour", 3_600), ("minute", 60)):  # fmt: skip
        if delta >= seconds:
            n = int(delta // seconds)
            return f"{stamp} ({n} {unit}{'s' if n > 1 else ''} ago)"
    return f"{stamp} (just now)"
