"""``commands``: the gateway's commands as application commands (pure: a ``Tree`` that never
logs in), and their sync over the wire against the loopback fake."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import discord
import pytest

from adapters.base import BotCommand, Forbidden
from adapters.discord import DiscordAdapter
from adapters.discord.commands import MAX_COMMANDS, install, make_command
from adapters.discord.intake import Tree
from adapters.messages import InboundMessage
from adapters.skips import Skips
from tests.fakes.discord_server import FakeDiscord

TOKEN = "MTEx.fake-bot-token.never-real"
Called = list[tuple[str, str | None]]


async def _nothing(interaction: discord.Interaction[Any], name: str, args: str | None) -> None:
    """An ``on_command`` for commands that are built and never run."""


@pytest.fixture
async def tree() -> Tree:
    client = discord.Client(intents=discord.Intents.default())
    return Tree(client, skips=Skips("discord", logging.getLogger(__name__)), on_unknown=_nothing)


def test_only_a_command_that_takes_text_has_the_optional_args_option() -> None:
    takes = make_command(BotCommand("memory", "What I remember"), _nothing)
    bare = make_command(BotCommand("help", "What I can do", args=False), _nothing)
    [option] = takes.parameters
    assert (option.name, option.type, option.required) == (
        "args",
        discord.AppCommandOptionType.string,
        False,
    )
    assert bare.parameters == []


def test_an_admin_command_is_shown_to_administrators_by_default() -> None:
    admin = make_command(BotCommand("admin", "Admins", admin=True), _nothing)
    everyone = make_command(BotCommand("memory", "Mine"), _nothing)
    assert admin.default_permissions == discord.Permissions(administrator=True)
    assert everyone.default_permissions is None


def test_descriptions_are_cut_to_100_and_a_blank_one_is_the_name() -> None:
    assert make_command(BotCommand("long", "d" * 150), _nothing).description == "d" * 100
    assert make_command(BotCommand("bare", "  "), _nothing).description == "bare"


async def test_install_replaces_the_tree_with_the_names_discord_takes(tree: Tree) -> None:
    install(tree, [BotCommand("old", "gone after the next install")], _nothing)
    names = install(
        tree,
        [
            BotCommand("memory", "x"),
            BotCommand("rotate-logs", "x"),
            BotCommand("skill_run", "x"),
            BotCommand("Upper", "x"),
            BotCommand("dotted.name", "x"),
            BotCommand("a" * 33, "x"),
        ],
        _nothing,
    )
    assert names == {"memory", "rotate-logs", "skill_run"}
    assert {c.name for c in tree.get_commands()} == names


async def test_at_most_100_are_installed(tree: Tree) -> None:
    names = install(tree, [BotCommand(f"c{i}", "x") for i in range(120)], _nothing)
    assert len(names) == MAX_COMMANDS == len(tree.get_commands()) and "c99" in names


async def test_a_command_hands_its_name_and_args_to_on_command() -> None:
    called: Called = []

    async def on_command(
        interaction: discord.Interaction[Any], name: str, args: str | None
    ) -> None:
        called.append((name, args))

    def callback(command: BotCommand) -> Callable[..., Awaitable[None]]:
        """discord.py types a callback as either bound (a group or cog first) or not; a
        command make_command builds belongs to neither."""
        return cast(Callable[..., Awaitable[None]], make_command(command, on_command).callback)

    interaction: Any = object()  # the callbacks pass it through untouched
    await callback(BotCommand("memory", "x"))(interaction, "notes")
    await callback(BotCommand("help", "x", args=False))(interaction)
    assert called == [("memory", "notes"), ("help", None)]


# -- over the wire -------------------------------------------------------------------------


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as server:
        yield server


async def test_a_refused_sync_is_translated_and_typed_commands_still_count(
    dc: FakeDiscord,
) -> None:
    guild = dc.add_guild("home")
    general = dc.add_channel(guild, "general")
    alice = dc.add_user("alice")
    inbox: asyncio.Queue[InboundMessage] = asyncio.Queue()
    adapter = DiscordAdapter(
        TOKEN, api_base=dc.api_base, gateway_url=dc.gateway_url, guild_ready_timeout=0.05
    )
    async with adapter:
        await adapter.start(inbox.put)
        dc.fail_next(403, path=r"/commands$")
        with pytest.raises(Forbidden):
            await adapter.set_commands([BotCommand("help", "x", args=False)])
        assert dc.commands == []  # Discord has none
        for text in ("/help", "/other"):
            await dc.push_message(general, alice, text)
        typed = [await asyncio.wait_for(inbox.get(), 5) for _ in range(2)]
        assert [(m.text, m.is_command) for m in typed] == [("/help", True), ("/other", False)]
