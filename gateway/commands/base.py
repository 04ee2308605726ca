"""What every command handler shares: the request, the reply, and what commands act on.

A handler is ``async (CommandContext, CommandRequest) -> CommandReply``; the dispatch table
in ``gateway.commands`` maps each command name to one. ``CommandContext`` holds the stores,
archive, sessions and pairing the commands read and change, and the callables the gateway
lends them (usage stats, budgets, the configured admins).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

from adapters.messages import InboundMessage
from gateway.approvals import Card
from gateway.pairing import PairingStore
from gateway.sessions import SessionKey, Sessions
from memory import MemoryStore, MemoryStores
from memory.archive import ArchiveStore, Searcher
from memory.providers import Provider
from memory.skills import SkillStore

__all__ = ["CommandContext", "CommandReply", "CommandRequest", "Handler", "share"]


@dataclass(frozen=True, slots=True)
class CommandRequest:
    message: InboundMessage
    key: SessionKey
    name: str
    args: str
    admin: bool

    @property
    def person(self) -> str:
        """The speaker: commands are always about them."""
        return self.message.sender.person


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: str
    buttons: tuple[tuple[str, str], ...] = ()
    edit: Card | None = None
    """For a button press: the pressed message's new text and buttons (``text`` may then
    be "", nothing more to say)."""


@dataclass(frozen=True, slots=True)
class CommandContext:
    """``budget(person, admin=…)``: the /status line on their budgets (gateway.limits);
    ``admins()``: the configured admins (``telegram:123``), whom /pair block refuses."""

    archive: ArchiveStore
    stores: MemoryStores
    sessions: Sessions
    pairing: PairingStore
    searcher: Searcher
    stats: Callable[[], Awaitable[dict[str, Any]]] | None = None
    on_paired: Callable[[], Awaitable[None]] | None = None
    skills: SkillStore | None = None
    budget: Callable[..., Awaitable[str]] | None = None
    admins: Callable[[], Collection[str]] = frozenset
    provider: Provider | None = None  # the memory provider beside the built-in memory

    def store(self, person: str) -> MemoryStore:
        return self.stores.for_person(person)


Handler = Callable[[CommandContext, CommandRequest], Awaitable[CommandReply]]


def share(part: int, whole: int) -> str:
    return f"{(100 * part / whole):.0f}%" if whole else "0%"
