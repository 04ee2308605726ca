"""The gateway's commands as Discord slash commands: the ``CommandTree`` and its sync.

``install`` clears the tree and adds one application command per gateway command whose name
Discord takes (lower-case letters, digits, ``-`` and ``_``, 1-32 of them; at most 100):
others are left out of the menu, and typed in a DM they still arrive as commands. A
command that takes text has one optional string option ``args``; an admin command carries
``default_member_permissions`` (Administrator), so Discord shows it by default to
administrators only (a hint: the gateway decides who may run it). Each command's callback
hands ``/name [args]`` to ``on_command`` (the adapter's: defer, remember, deliver; see
``interactions``).

``sync`` registers the tree with Discord (one PUT of the global commands), bounded by
``timeout``; its errors are the ``adapters.base`` family (``errors.translate``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import discord
from discord import app_commands

from adapters.base import BotCommand
from adapters.discord.errors import translate
from adapters.discord.intake import Tree

__all__ = ["MAX_COMMANDS", "OnCommand", "install", "make_command", "sync"]

MAX_COMMANDS = 100
_COMMAND_NAME = re.compile(r"[-_a-z0-9]{1,32}")

OnCommand = Callable[[discord.Interaction[Any], str, str | None], Awaitable[None]]
"""What a slash command does: ``on_command(interaction, name, args)``."""


def install(tree: Tree, commands: Sequence[BotCommand], on_command: OnCommand) -> frozenset[str]:
    """Replace the tree's global commands with ``commands`` (those Discord takes); the names
    of those added."""
    tree.clear_commands(guild=None)
    usable = [c for c in commands if _COMMAND_NAME.fullmatch(c.name)][:MAX_COMMANDS]
    for command in usable:
        tree.add_command(make_command(command, on_command))
    return frozenset(command.name for command in usable)


async def sync(tree: Tree, *, timeout: float) -> None:  # noqa: ASYNC109
    """Register the tree's commands with Discord (PUT, global)."""
    try:
        async with asyncio.timeout(timeout):
            await tree.sync()
    except Exception as exc:
        raise (translate(exc, ()) or exc) from exc


def make_command(command: BotCommand, on_command: OnCommand) -> app_commands.Command[Any, ..., Any]:
    """An application command that hands ``/name [args]`` to ``on_command``. It has the
    optional ``args`` option only when it takes text; an admin command is shown by default
    to members with Administrator only."""
    name = command.name

    async def with_args(interaction: discord.Interaction[Any], args: str | None = None) -> None:
        await on_command(interaction, name, args)

    async def bare(interaction: discord.Interaction[Any]) -> None:
        await on_command(interaction, name, None)

    callback: Any = (
        app_commands.describe(args="Arguments, e.g. notes")(with_args) if command.args else bare
    )
    made: app_commands.Command[Any, ..., Any] = app_commands.Command(
        name=name, description=(command.description.strip() or name)[:100], callback=callback
    )
    if command.admin:
        made.default_permissions = discord.Permissions(administrator=True)
    return made
