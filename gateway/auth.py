"""Authorization: the one check every inbound message passes before anything runs.

Deny by default. A person may talk to the bot when they are an admin, listed in the
platform's ``allowed_users`` (or it is ``"*"``), or approved through pairing. In a group the
chat must also be allowed (``allowed_chats``); unknown people in groups are ignored
silently, and bots are always ignored. An unknown person who writes a DM is offered a
pairing code instead: 8 characters, valid for an hour, at most ``MAX_CODES_PER_DAY`` codes
a day per person (then they are ignored until the day is over); an admin approves it with
``/pair approve CODE`` or ``mnemo pairing approve CODE``.

Approvals and pending codes live in ``<home>/pairing.json`` (0600, written atomically under
a lock), so they survive restarts and two processes never lose each other's writes.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from adapters.messages import Identity, InboundMessage
from memory.files import atomic_write_text, file_lock, move_aside

__all__ = ["Access", "Auth", "PairingStore", "Verdict"]


CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LENGTH = 8
CODE_TTL_S = 3600
MAX_CODES_PER_DAY = 3
MAX_PENDING = 200


@dataclass(frozen=True, slots=True)
class Access:
    """What the configuration allows (one value for the whole gateway)."""

    allowed_users: Mapping[str, frozenset[str]] = field(default_factory=dict)  # platform -> ids
    allowed_chats: Mapping[str, frozenset[str]] = field(default_factory=dict)
    admins: frozenset[str] = frozenset()  # "telegram:123"

    def user_listed(self, platform: str, user_id: str) -> bool:
        listed = self.allowed_users.get(platform, frozenset())
        return "*" in listed or user_id in listed

    def chat_listed(self, platform: str, chat_id: str) -> bool:
        listed = self.allowed_chats.get(platform, frozenset())
        return "*" in listed or chat_id in listed


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["allow", "pair", "ignore"]
    admin: bool = False
    code: str | None = None
    reason: str = ""


class PairingStore:
    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._approved: frozenset[str] = frozenset()
        self._stamp: tuple[int, int, int] | None = None

    def _load(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        try:
            data = dict(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            pass
        except (ValueError, TypeError, UnicodeDecodeError) as exc:
            # deny by default still holds: nobody is approved until the file is repaired
            move_aside(self.path, exc, what="pairings", now=self._clock())
        data.setdefault("approved", [])
        data.setdefault("pending", [])
        data.setdefault("requests", {})
        data.setdefault("chats", {})
        data.setdefault("welcome", [])
        return data

    def _save(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=1))

    def approved(self, qualified: str) -> bool:
        """Asked for every message from someone not in the config: answered from a copy
        that is re-read only when the file changed (atomic writes give it a new inode)."""
        try:
            stat = self.path.stat()
            stamp: tuple[int, int, int] | None = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp is None or stamp != self._stamp:
            self._approved = frozenset(self._load()["approved"])
            self._stamp = stamp
        return qualified in self._approved

    def listing(self) -> tuple[list[tuple[str, str, str]], list[str]]:
        """Pending codes (code, who, name) still valid, and the approved people."""
        now = self._clock()
        data = self._load()
        pending = [
            (str(p["code"]), str(p["who"]), str(p.get("name", "")))
            for p in data["pending"]
            if p["expires_at"] > now
        ]
        return pending, [str(who) for who in data["approved"]]

    def request(self, qualified: str, display_name: str, chat_id: str | None = None) -> str | None:
        """The person's code (the same one while it is valid), or None past the daily cap."""
        now = self._clock()
        with file_lock(self.path):
            data = self._load()
            valid = [p for p in data["pending"] if p["expires_at"] > now]
            expired = len(valid) != len(data["pending"])
            data["pending"] = valid
            # a stranger may write many times: the file is rewritten only when it changes
            for pending in valid:
                if pending["who"] == qualified:
                    if expired:
                        self._save(data)
                    return str(pending["code"])
            recent = [t for t in data["requests"].get(qualified, []) if t > now - 86_400]
            if len(recent) >= MAX_CODES_PER_DAY or len(valid) >= MAX_PENDING:
                if expired:
                    self._save(data)
                return None
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            data["pending"].append(
                {
                    "code": code,
                    "who": qualified,
                    "name": display_name,
                    "expires_at": now + CODE_TTL_S,
                }
            )
            data["requests"][qualified] = [*recent, now]
            if chat_id is not None:
                data["chats"][qualified] = chat_id
            self._save(data)
            return code

    def approve(self, code: str) -> str | None:
        """Approve a pending code; the person it admitted, or None if unknown or expired."""
        now = self._clock()
        wanted = code.strip().upper()
        with file_lock(self.path):
            data = self._load()
            match = next(
                (p for p in data["pending"] if p["code"] == wanted and p["expires_at"] > now), None
            )
            if match is None:
                return None
            data["pending"].remove(match)
            if match["who"] not in data["approved"]:
                data["approved"].append(match["who"])
            if match["who"] not in data["welcome"]:
                data["welcome"].append(match["who"])
            self._save(data)
            return str(match["who"])

    def take_welcomes(self) -> list[tuple[str, str]]:
        """(person, DM chat) of people approved since the last call, whichever way (chat
        or ``mnemo pairing approve``), so the running gateway can tell them; each once."""
        if not self.path.exists():
            return []
        with file_lock(self.path):
            data = self._load()
            if not data["welcome"]:
                return []
            welcomes = [
                (str(who), str(data["chats"][who]))
                for who in data["welcome"]
                if who in data["chats"]
            ]
            data["welcome"] = []
            self._save(data)
        return welcomes

    def revoke(self, qualified: str) -> bool:
        with file_lock(self.path):
            data = self._load()
            if qualified not in data["approved"]:
                return False
            data["approved"].remove(qualified)
            self._save(data)
            return True


class Auth:
    def __init__(self, access: Access, pairing: PairingStore) -> None:
        self.access = access
        self.pairing = pairing

    def is_admin(self, sender: Identity) -> bool:
        return not sender.is_bot and sender.qualified in self.access.admins

    def check(self, message: InboundMessage) -> Verdict:
        sender = message.sender
        if sender.is_bot:
            return Verdict("ignore", reason="bots are ignored")
        admin = sender.qualified in self.access.admins
        known = (
            admin
            or self.access.user_listed(sender.platform, sender.user_id)
            or self.pairing.approved(sender.qualified)
        )
        if message.chat_type != "dm":
            if not self.access.chat_listed(message.platform, message.chat_id):
                return Verdict("ignore", admin, reason="chat not allowed")
            if not known:
                return Verdict("ignore", reason="unknown person in a group")
            return Verdict("allow", admin)
        if known:
            return Verdict("allow", admin)
        code = self.pairing.request(sender.qualified, sender.display_name, message.chat_id)
        if code is None:
            return Verdict("ignore", reason="pairing attempts used up")
        return Verdict("pair", code=code, reason="unknown person in a DM")
