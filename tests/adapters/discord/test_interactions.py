"""``interactions``: what the adapter remembers of the interactions it acknowledged (pure,
with stand-ins for discord.py's ``Interaction``), and a dismissed slash command over the
wire (answers through the token and their fallbacks: test_client.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.base import BotCommand
from adapters.discord import DiscordAdapter
from adapters.discord.components import Deferred
from adapters.discord.interactions import MAX_PENDING, Interactions
from adapters.messages import Identity, InboundMessage
from adapters.skips import Skips
from tests.fakes.discord_server import FakeDiscord

TOKEN = "MTEx.fake-bot-token.never-real"


@dataclass
class StandIn:
    """The part of an ``Interaction`` remembering and dismissing touch."""

    id: int
    deleted: int = 0
    fails: bool = False

    async def delete_original_response(self) -> None:
        self.deleted += 1
        if self.fails:
            raise RuntimeError("Discord said no")


async def _drop(message: InboundMessage) -> None:
    """A sink for interactions that are never handed on here."""


def interactions(ttl: float = 60.0) -> Interactions:
    skips = Skips("discord", logging.getLogger(__name__))
    return Interactions(skips=skips, deliver=_drop, ttl=ttl, timeout=1.0)


def deferred(
    interaction: StandIn, *, age: float = 0.0, deferred: bool = True, press: bool = False
) -> Deferred:
    made: Any = interaction
    return Deferred(made, time.monotonic() - age, ephemeral=True, deferred=deferred,
                    original_used=press)  # fmt: skip


def inbound(message_id: int, *, press: bool = False) -> InboundMessage:
    alice = Identity("discord", "7", "Alice")
    return InboundMessage("discord", "1", "group", alice, "/memory", str(message_id),
                          datetime.now(UTC), is_command=not press, is_callback=press)  # fmt: skip


def test_found_by_the_id_an_answer_replies_to() -> None:
    held = interactions()
    held.remember(deferred(StandIn(11)))
    assert held.find("11") is held.pending[11]
    assert held.find("12") is None and held.find("m11") is None and held.find(None) is None


def test_expired_ones_are_forgotten_and_at_most_max_pending_are_kept() -> None:
    held = interactions(ttl=60.0)
    held.remember(deferred(StandIn(1), age=61.0))
    held.remember(deferred(StandIn(2), age=30.0))
    assert list(held.pending) == [2]
    for number in range(3, MAX_PENDING + 3):
        held.remember(deferred(StandIn(number)))
    assert len(held.pending) == MAX_PENDING and 2 not in held.pending and 3 in held.pending
    held.clear()
    assert held.pending == {}


async def test_dismiss_withdraws_a_deferred_command_once_and_forgets_it() -> None:
    held = interactions()
    command, press, answered, failed, failing = (StandIn(n) for n in range(1, 6))
    failing.fails = True
    held.remember(deferred(command))
    held.remember(deferred(press, press=True))  # acknowledged without "thinking…"
    held.remember(deferred(answered))
    held.pending[3].original_used = True  # the answer filled it already
    held.remember(deferred(failed, deferred=False))
    held.remember(deferred(failing))
    await held.dismiss(inbound(1))
    await held.dismiss(inbound(1))
    await held.dismiss(inbound(2, press=True))
    await held.dismiss(inbound(3))
    await held.dismiss(inbound(4))  # never deferred: nothing to withdraw
    await held.dismiss(inbound(5))  # best effort: a refusal is only logged
    await held.dismiss(inbound(99))
    assert [s.deleted for s in (command, press, answered, failed, failing)] == [1, 0, 0, 0, 1]
    assert sorted(held.pending) == [2, 3]


# -- over the wire -------------------------------------------------------------------------


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as server:
        yield server


async def test_a_dismissed_slash_command_leaves_no_thinking_behind(dc: FakeDiscord) -> None:
    guild = dc.add_guild("home")
    general = dc.add_channel(guild, "general")
    alice = dc.add_user("alice")
    inbox: asyncio.Queue[InboundMessage] = asyncio.Queue()
    adapter = DiscordAdapter(
        TOKEN, api_base=dc.api_base, gateway_url=dc.gateway_url, guild_ready_timeout=0.05
    )
    async with adapter:
        await adapter.start(inbox.put)
        await adapter.set_commands([BotCommand("memory", "What I remember")])
        pushed = await dc.push_interaction("memory", None, alice, general)
        command = await asyncio.wait_for(inbox.get(), 5)
        assert [c.type for c in dc.callbacks] == [5]  # deferred: "thinking…"
        await adapter.dismiss(command)
        assert dc.interactions[pushed.id].withdrawn and dc.sent == []
