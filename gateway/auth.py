"""Authorization: the one check every inbound message passes before anything runs.

Deny by default. A person may talk to the bot when they are an admin, listed in the
platform's ``allowed_users`` (or it is ``"*"``), or approved through pairing. In a group the
chat must also be allowed (``allowed_chats``); unknown people in groups are ignored
silently, and bots are always ignored. People blocked with ``/pair block`` or ``mnemo
pairing block`` are ignored silently everywhere (DMs, groups, commands, buttons), whatever
the allowlists say; only admins cannot be blocked. An unknown person who writes a DM is
offered a pairing code instead (``gateway.pairing.store``: valid for an hour, at most
``MAX_CODES_PER_DAY`` a day, then they are ignored until the day is over); an admin approves
it with ``/pair approve CODE`` or ``mnemo pairing approve CODE``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from adapters.messages import Identity, InboundMessage
from gateway.pairing import (
    CODE_ALPHABET,
    MAX_CODES_PER_DAY,
    MAX_PENDING,
    PairingOffer,
    PairingStore,
)

__all__ = [
    "CODE_ALPHABET",
    "MAX_CODES_PER_DAY",
    "MAX_PENDING",
    "Access",
    "Auth",
    "PairingStore",
    "Verdict",
]


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
    offer: PairingOffer | None = None  # with "pair": the code the person holds
    reason: str = ""


class Auth:
    def __init__(self, access: Access, pairing: PairingStore) -> None:
        self.access = access
        self.pairing = pairing
        self._worker: ThreadPoolExecutor | None = None  # decide's, made on first use

    def is_admin(self, sender: Identity) -> bool:
        return not sender.is_bot and sender.qualified in self.access.admins

    async def decide(self, message: InboundMessage) -> Verdict:
        """``check``, without holding the event loop on a database: where the pairing state
        is a document the replicas share (PostgreSQL), its reads (a version check per
        message, a stranger's code) run on one worker thread of their own, in the order the
        messages arrived (two messages of a chat are decided in order, as they were when
        the check was inline; the shared thread pool is not taken up by them). A slow round
        trip delays the messages behind it, never the event loop. A file's version is one
        ``stat``: asked inline."""
        if self.pairing.local:
            return self.check(message)
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mnemo-auth")
        return await asyncio.get_running_loop().run_in_executor(self._worker, self.check, message)

    def check(self, message: InboundMessage) -> Verdict:
        """The verdict on ``message`` (blocking: may read and write the pairing state)."""
        sender = message.sender
        if sender.is_bot:
            return Verdict("ignore", reason="bots are ignored")
        admin = sender.qualified in self.access.admins
        if not admin and self.pairing.blocked(sender.qualified):
            return Verdict("ignore", reason="blocked")
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
        offer = self.pairing.request(sender.qualified, sender.display_name, message.chat_id)
        if offer is None:
            return Verdict("ignore", reason="pairing attempts used up")
        return Verdict("pair", offer=offer, reason="unknown person in a DM")
