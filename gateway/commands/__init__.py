"""Slash commands, answered by the gateway itself and never by the model: every command is
about the person who sent it (their memory, sessions and archive) except ``/admin`` and
``/pair``, which only admins may run (anyone else gets a clear refusal); the same text
arrives from a Telegram ``/command``, a Discord application command or a button press, after
authorization at the choke point. ``HANDLERS`` maps each command name to its handler (the
modules ``help``, ``memory``, ``search``, ``skills`` and ``admin``); ``answered_privately``
is the one rule saying which answers carry memory, archive, pairing or usage data, which the
gateway sends to the asker alone (a private chat, or Discord's ephemeral answer), never to a
group. ``Commands.run(request)`` returns a ``CommandReply`` (plain text, optional buttons,
and for a button press how to edit the pressed message) that the caller sends through the
outbox.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

from adapters.base import BotCommand
from gateway.commands.admin import admin_command, pair_command
from gateway.commands.base import CommandContext, CommandReply, CommandRequest, Handler
from gateway.commands.help import ADMIN_HELP, HELP, help_command, new_command, status_command
from gateway.commands.memory import forget_command, memory_command
from gateway.commands.search import search_command, sessions_command
from gateway.commands.skills import skills_command
from gateway.pairing import PairingStore
from gateway.sessions import Sessions
from memory import MemoryStores
from memory.archive import ArchiveStore, Searcher, SemanticRanker
from memory.providers import Provider
from memory.skills import SkillStore

__all__ = [
    "ADMIN_HELP",
    "ADMIN_ONLY",
    "COMMANDS",
    "HANDLERS",
    "HELP",
    "NAMES",
    "PRIVATE",
    "PUBLIC",
    "CommandContext",
    "CommandReply",
    "CommandRequest",
    "Commands",
    "Handler",
    "answered_privately",
    "parse_command",
]

COMMANDS: tuple[BotCommand, ...] = (
    BotCommand("help", "What I can do and the commands", args=False),
    BotCommand("new", "Start a fresh session", args=False),
    BotCommand("status", "This session: turns, tokens, memory usage", args=False),
    BotCommand("memory", "What I remember: notes, profile, pending, approve ID, reject ID"),
    BotCommand("forget", "Forget memory entry N, or the entry matching TEXT"),
    BotCommand("sessions", "Your recent sessions", args=False),
    BotCommand("search", "Search your past conversations"),
    BotCommand("skills", "The skills I know; admins: pending, diff, approve, reject"),
    BotCommand("admin", "Admins: memory, sessions, search, pending, blocked, stats", admin=True),
    BotCommand("pair", "Admins: pairing requests: list, approve, deny, revoke, block", admin=True),
)
NAMES = frozenset(command.name for command in COMMANDS)
ADMIN_ONLY = frozenset(command.name for command in COMMANDS if command.admin)
# (/skills is admin-only in part: its review subcommands)
#: Answers that carry someone's memory, archive, pairing or usage data.
PRIVATE = frozenset({"status", "memory", "forget", "sessions", "search", "admin", "pair"})
#: Answers anyone in the chat may read (``/skills`` lists what everyone shares; its review
#: subcommands are private: ``answered_privately``).
PUBLIC = frozenset({"help", "new", "skills"})


def answered_privately(name: str, args: str) -> bool:
    """Whether the answer to ``/name args`` may be read by the asker only."""
    if name == "skills":
        return bool(args.strip())
    return name in PRIVATE


HANDLERS: dict[str, Handler] = {
    "help": help_command,
    "new": new_command,
    "status": status_command,
    "memory": memory_command,
    "forget": forget_command,
    "sessions": sessions_command,
    "search": search_command,
    "skills": skills_command,
    "admin": admin_command,
    "pair": pair_command,
}


def parse_command(text: str) -> tuple[str, str] | None:
    """``("memory", "approve 3")`` from ``/memory approve 3``; None if not one of ours."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if name not in NAMES:
        return None
    return name, rest.strip()


class Commands:
    """The commands of one gateway, over its stores, archive, sessions and pairing."""

    def __init__(
        self,
        *,
        archive: ArchiveStore,
        stores: MemoryStores,
        sessions: Sessions,
        pairing: PairingStore,
        stats: Callable[[], Awaitable[dict[str, Any]]] | None = None,
        on_paired: Callable[[], Awaitable[None]] | None = None,
        skills: SkillStore | None = None,
        budget: Callable[..., Awaitable[str]] | None = None,
        admins: Callable[[], Collection[str]] = frozenset,
        provider: Provider | None = None,
        semantic: SemanticRanker | None = None,
    ) -> None:
        """``budget(person, admin=…)``: the /status line on their budgets (gateway.limits);
        ``admins()``: the configured admins (``telegram:123``), whom /pair block refuses;
        ``semantic``: the provider's ranking by meaning, which /search fuses in as
        session_search does (``agent_core.recall.Recall.ranker``)."""
        self.context = CommandContext(
            archive=archive,
            stores=stores,
            sessions=sessions,
            pairing=pairing,
            searcher=Searcher(archive, semantic=semantic),
            stats=stats,
            on_paired=on_paired,
            skills=skills,
            budget=budget,
            admins=admins,
            provider=provider,
        )

    async def run(self, request: CommandRequest) -> CommandReply:
        if request.name in ADMIN_ONLY and not request.admin:
            return CommandReply(f"Sorry, /{request.name} is for the admins of this bot.")
        return await HANDLERS[request.name](self.context, request)
