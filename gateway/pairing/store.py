"""Pairing state: codes for people the config does not know, approvals and blocks.

Everything lives in one document, ``pairing.json`` (``memory.documents``: on disk
``<home>/pairing.json``, 0600, written atomically under a lock; or a row in PostgreSQL that
every replica shares), read and written by the running gateway(s) and ``mnemo pairing``
(inside the document's exclusive section, so none loses another's writes), so approvals and
blocks survive restarts::

    approved   ["telegram:123", …]       may talk to the bot
    blocked    ["discord:456", …]        ignored silently everywhere (admins excepted)
    pending    [{code, who, name, expires_at}, …]   codes waiting for an admin
    requests   {who: [unix times]}        codes issued in the last day (the daily cap)
    chats      {who: chat id}             where to tell them they are in
    welcome    [who, …]                   approved, not yet told

A stranger who writes many times must not cost a write each time: the file is rewritten
only when it changes, and a person who already holds a valid code (or has used up the
day's codes) is answered from a copy re-read only when the document's version changed (on
disk a new inode, as every write is atomic; in PostgreSQL the row's write count), so a
replica sees another's approval or block on its next question. The number of pending codes
is capped; at the cap the oldest codes are evicted (and logged), so a flood of strangers
cannot lock newcomers out.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.documents import Documents, FileDocuments, Version

__all__ = [
    "CODE_ALPHABET",
    "CODE_TTL_S",
    "MAX_CODES_PER_DAY",
    "MAX_PENDING",
    "PAIRING_FILE",
    "Listing",
    "PairingOffer",
    "PairingStore",
    "PendingCode",
    "qualified_id",
    "time_left",
]

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
CODE_TTL_S = 3600
MAX_CODES_PER_DAY = 3
MAX_PENDING = 200
DAY_S = 86_400
PAIRING_FILE = "pairing.json"


@dataclass(frozen=True, slots=True)
class PairingOffer:
    """A person's code: ``new`` when this request issued it (else it was still waiting)."""

    code: str
    expires_at: float
    new: bool


@dataclass(frozen=True, slots=True)
class PendingCode:
    code: str
    who: str
    name: str  # what the person calls themselves (already made safe by ``label``)
    expires_at: float


@dataclass(frozen=True, slots=True)
class Listing:
    pending: tuple[PendingCode, ...]
    approved: tuple[str, ...]
    blocked: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _View:
    """What the choke point asks about, from one read of the file."""

    approved: frozenset[str] = frozenset()
    blocked: frozenset[str] = frozenset()
    codes: Mapping[str, tuple[str, float]] = field(default_factory=dict)  # who -> code, expiry
    capped: Mapping[str, float] = field(default_factory=dict)  # who -> when a code is free


def qualified_id(text: str) -> str | None:
    """``telegram:123`` as config names people (platform lower-cased), or None."""
    platform, colon, user = text.strip().partition(":")
    platform, user = platform.strip().lower(), user.strip()
    if not colon or not platform.isalnum() or not user or any(c.isspace() for c in user):
        return None
    return f"{platform}:{user}"


def time_left(seconds: float) -> str:
    """A duration as people say it, rounded down so it never promises more time than is
    left: ``less than a minute``, ``1 minute``, ``43 minutes``, ``1 hour 5 minutes``."""
    if seconds < 60:
        return "less than a minute"
    hours, minutes = divmod(int(seconds // 60), 60)
    parts = [f"{hours} hour{'s' * (hours != 1)}"] if hours else []
    if minutes:
        parts.append(f"{minutes} minute{'s' * (minutes != 1)}")
    return " ".join(parts)


class PairingStore:
    """Pairing state in ``where``: the file's path (``<home>/pairing.json``), or any
    ``Documents`` (PostgreSQL's ``PgStores(pool).documents("pairing")``)."""

    def __init__(self, where: Path | Documents, *, clock: Callable[[], float] = time.time) -> None:
        if isinstance(where, Path):
            self.documents: Documents = FileDocuments(where.parent)
            self.name = where.name
        else:
            self.documents, self.name = where, PAIRING_FILE
        self._clock = clock
        self._view_cache = _View()
        self._stamp: Version = None
        self._viewed = False
        self._view_lock = threading.Lock()  # the choke point may ask from worker threads

    @property
    def local(self) -> bool:
        """Whether the state is a file of this machine (cheap to ask on the event loop)."""
        return isinstance(self.documents, FileDocuments)

    # -- the document ---------------------------------------------------------------------

    def _load(self) -> tuple[dict[str, Any], Version]:
        """The state and the version it was read at (``_save`` writes over that one)."""
        data: dict[str, Any] = {}
        document = self.documents.read(self.name)
        version = document.version
        try:
            if document.raw is not None:
                data = dict(json.loads(document.raw.decode("utf-8")))
        except (ValueError, TypeError, UnicodeDecodeError) as exc:
            # deny by default still holds: nobody is approved until the file is repaired
            self.documents.set_aside(self.name, exc, what="pairings", now=self._clock())
            version = None
        for key in ("approved", "pending", "welcome", "blocked"):
            data.setdefault(key, [])
        for key in ("requests", "chats"):
            data.setdefault(key, {})
        return data, version

    def _save(self, data: dict[str, Any], version: Version) -> None:
        """Write, first dropping what no longer matters: requests older than a day, and
        the chats of people with neither a code nor a welcome pending."""
        cutoff = self._clock() - DAY_S
        requests = {
            who: kept
            for who, times in data["requests"].items()
            if (kept := [t for t in times if t > cutoff])
        }
        needed = {p["who"] for p in data["pending"]} | set(data["welcome"])
        data["requests"] = requests
        data["chats"] = {who: chat for who, chat in data["chats"].items() if who in needed}
        text = json.dumps(data, ensure_ascii=False, indent=1)
        # inside the section nobody wrote since _load: the version it read is current
        self.documents.write(self.name, text.encode("utf-8"), expected=version)

    def _view(self) -> _View:
        with self._view_lock:  # one refresh at a time: the cache and its stamp stay a pair
            return self._refreshed()

    def _refreshed(self) -> _View:
        stamp = self.documents.version(self.name)
        if not self._viewed or stamp != self._stamp:
            data, version = self._load()
            cutoff = self._clock() - DAY_S
            capped: dict[str, float] = {}
            for who, times in data["requests"].items():
                recent = sorted(t for t in times if t > cutoff)
                if len(recent) >= MAX_CODES_PER_DAY:
                    capped[str(who)] = recent[-MAX_CODES_PER_DAY] + DAY_S
            self._view_cache = _View(
                approved=frozenset(map(str, data["approved"])),
                blocked=frozenset(map(str, data["blocked"])),
                codes={
                    str(p["who"]): (str(p["code"]), float(p["expires_at"])) for p in data["pending"]
                },
                capped=capped,
            )
            self._stamp = version  # of what was read: a write meanwhile reads again
            self._viewed = True
        return self._view_cache

    # -- asked at the choke point ---------------------------------------------------------

    def approved(self, qualified: str) -> bool:
        return qualified in self._view().approved

    def blocked(self, qualified: str) -> bool:
        return qualified in self._view().blocked

    def request(
        self, qualified: str, display_name: str, chat_id: str | None = None
    ) -> PairingOffer | None:
        """The person's code (the same one while it is valid), or None past the daily cap."""
        now = self._clock()
        view = self._view()
        held = view.codes.get(qualified)
        if held is not None and held[1] > now:
            return PairingOffer(held[0], held[1], new=False)
        if view.capped.get(qualified, 0) > now:
            return None
        with self.documents.exclusive(self.name):
            data, version = self._load()
            valid = [p for p in data["pending"] if p["expires_at"] > now]
            changed = len(valid) != len(data["pending"])
            data["pending"] = valid
            mine = next((p for p in valid if p["who"] == qualified), None)
            recent = [t for t in data["requests"].get(qualified, []) if t > now - DAY_S]
            if mine is not None or len(recent) >= MAX_CODES_PER_DAY:
                if changed:
                    self._save(data, version)
                if mine is None:
                    return None
                return PairingOffer(str(mine["code"]), float(mine["expires_at"]), new=False)
            excess = len(valid) - (MAX_PENDING - 1)
            if excess > 0:
                log.warning(
                    "pairing: %d codes are waiting (at most %d are kept); evicted the %d"
                    " oldest to issue a new one (a flood of strangers? mnemo pairing list)",
                    len(valid),
                    MAX_PENDING,
                    excess,
                )
                valid.sort(key=lambda p: p["expires_at"])
                del valid[:excess]
            taken = {p["code"] for p in valid}
            code = _new_code()
            while code in taken:
                code = _new_code()
            expires_at = now + CODE_TTL_S
            valid.append(
                {"code": code, "who": qualified, "name": display_name, "expires_at": expires_at}
            )
            data["requests"][qualified] = [*recent, now]
            if chat_id is not None:
                data["chats"][qualified] = chat_id
            self._save(data, version)
            return PairingOffer(code, expires_at, new=True)

    # -- decided by admins ----------------------------------------------------------------

    def approve(self, code: str) -> str | None:
        """Approve a pending code; the person it admitted, or None if unknown or expired."""
        now = self._clock()
        with self.documents.exclusive(self.name):
            data, version = self._load()
            match = _find(data, code, now)
            if match is None:
                return None
            data["pending"].remove(match)
            who = str(match["who"])
            if who not in data["approved"]:
                data["approved"].append(who)
            if who not in data["welcome"]:
                data["welcome"].append(who)
            self._save(data, version)
            return who

    def deny(self, code: str) -> str | None:
        """Drop a pending code; the person who held it (they may ask again, within the
        daily cap), or None if unknown or expired."""
        now = self._clock()
        with self.documents.exclusive(self.name):
            data, version = self._load()
            match = _find(data, code, now)
            if match is None:
                return None
            data["pending"].remove(match)
            self._save(data, version)
            return str(match["who"])

    def revoke(self, qualified: str) -> bool:
        with self.documents.exclusive(self.name):
            data, version = self._load()
            if qualified not in data["approved"]:
                return False
            data["approved"].remove(qualified)
            self._save(data, version)
            return True

    def block(self, qualified: str) -> bool:
        """Ignore the person from now on (their approval and code go too); False if they
        were blocked already."""
        with self.documents.exclusive(self.name):
            data, version = self._load()
            if qualified in data["blocked"]:
                return False
            data["blocked"].append(qualified)
            data["approved"] = [who for who in data["approved"] if who != qualified]
            data["welcome"] = [who for who in data["welcome"] if who != qualified]
            data["pending"] = [p for p in data["pending"] if p["who"] != qualified]
            self._save(data, version)
            return True

    def unblock(self, qualified: str) -> bool:
        with self.documents.exclusive(self.name):
            data, version = self._load()
            if qualified not in data["blocked"]:
                return False
            data["blocked"].remove(qualified)
            self._save(data, version)
            return True

    # -- read by admins and the gateway ---------------------------------------------------

    def listing(self) -> Listing:
        """Valid pending codes (oldest first), approved people and blocked people."""
        now = self._clock()
        data, _ = self._load()
        pending = sorted(
            (
                PendingCode(str(p["code"]), str(p["who"]), str(p.get("name", "")), p["expires_at"])
                for p in data["pending"]
                if p["expires_at"] > now
            ),
            key=lambda p: p.expires_at,
        )
        return Listing(
            tuple(pending),
            tuple(str(who) for who in data["approved"]),
            tuple(str(who) for who in data["blocked"]),
        )

    def take_welcomes(self, platforms: Collection[str] | None = None) -> list[tuple[str, str]]:
        """(person, DM chat) of people approved since the last call, whichever way (chat
        or ``mnemo pairing approve``), so the running gateway can tell them; each once.
        ``platforms``: only people on these; the others wait for a gateway that runs theirs
        (``mnemo chat`` must not take a Telegram welcome)."""
        if self.documents.version(self.name) is None:
            return []
        with self.documents.exclusive(self.name):
            data, version = self._load()
            taken = [
                who
                for who in data["welcome"]
                if platforms is None or str(who).split(":", 1)[0] in platforms
            ]
            if not taken:
                return []
            welcomes = [
                (str(who), str(data["chats"][who])) for who in taken if who in data["chats"]
            ]
            data["welcome"] = [who for who in data["welcome"] if who not in taken]
            self._save(data, version)
        return welcomes

    @property
    def now(self) -> float:
        """The store's clock (time left on a code is measured with it)."""
        return self._clock()


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def _find(data: dict[str, Any], code: str, now: float) -> dict[str, Any] | None:
    wanted = code.strip().upper()
    return next((p for p in data["pending"] if p["code"] == wanted and p["expires_at"] > now), None)
