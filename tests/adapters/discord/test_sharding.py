"""Sharding: replicas that each run some of the bot's gateway shards, real discord.py
(``AutoShardedClient``) against the fake Discord, which sends a guild's events only to the
shard that owns it, ``(guild_id >> 22) % shard_count``, and DMs to shard 0, as Discord does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from adapters.discord import DiscordAdapter
from adapters.discord.intake import ShardedClient
from adapters.messages import InboundMessage, OutboundMessage
from tests.fakes.discord_server import FakeDiscord, FakeUser

TOKEN = "MTEx.fake-bot-token.never-real"
EVEN, ODD = 1000 << 22, 1001 << 22  # guilds of shard 0 and shard 1 of 2


@dataclass
class Replica:
    """One adapter and what reached its sink."""

    adapter: DiscordAdapter
    inbox: asyncio.Queue[InboundMessage] = field(default_factory=asyncio.Queue)

    async def sink(self, message: InboundMessage) -> None:
        await self.inbox.put(message)

    async def next(self) -> InboundMessage:
        return await asyncio.wait_for(self.inbox.get(), 5)


@dataclass
class World:
    dc: FakeDiscord
    channels: dict[int, int]  # guild -> its channel
    alice: FakeUser
    dm: int
    replicas: list[Replica] = field(default_factory=list)

    async def start(self, **sharding: object) -> Replica:
        adapter = DiscordAdapter(
            TOKEN, api_base=self.dc.api_base, gateway_url=self.dc.gateway_url,
            guild_ready_timeout=0.05, ready_timeout=15.0, **sharding,  # type: ignore[arg-type]
        )  # fmt: skip
        replica = Replica(adapter)
        self.replicas.append(replica)
        await adapter.start(replica.sink)
        return replica


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as dc:
        channels = {g: dc.add_channel(dc.add_guild(f"guild {g}", id=g)) for g in (EVEN, ODD)}
        alice = dc.add_user("alice", global_name="Alice")
        w = World(dc, channels, alice, dc.add_dm(alice))
        try:
            yield w
        finally:
            for replica in w.replicas:
                await replica.adapter.stop()


async def test_two_replicas_each_get_their_shards_guilds_and_both_answer(world: World) -> None:
    dc = world.dc
    first = await world.start(shard_count=2, shard_ids=[0])
    second = await world.start(shard_count=2, shard_ids=[1])
    assert first.adapter.connected and second.adapter.connected
    assert (first.adapter.shards, second.adapter.shards) == ((0,), (1,))
    assert sorted(i["shard"] for i in dc.identify) == [[0, 2], [1, 2]]

    await dc.push_message(world.channels[EVEN], world.alice, f"<@{dc.bot.id}> even here")
    await dc.push_message(world.channels[ODD], world.alice, f"<@{dc.bot.id}> odd here")
    await dc.push_message(world.dm, world.alice, "a private word")
    on_first = [await first.next(), await first.next()]
    on_second = await second.next()
    assert [(m.chat_id, m.text) for m in on_first] == [
        (str(world.channels[EVEN]), "even here"),
        (str(world.dm), "a private word"),  # DMs come on shard 0
    ]
    assert (on_second.chat_id, on_second.text) == (str(world.channels[ODD]), "odd here")
    await asyncio.sleep(0.3)  # nothing else is on its way to either
    assert first.inbox.empty() and second.inbox.empty()

    for replica, asked in ((first, on_first[0]), (second, on_second)):
        reply = OutboundMessage(
            "discord", asked.chat_id, f"answer to {asked.text}",
            reply_to_message_id=asked.message_id,
        )  # fmt: skip
        await replica.adapter.send(reply)
    sent = await dc.wait_sent(2)
    assert {(s.channel_id, s.content) for s in sent} == {
        (world.channels[EVEN], "answer to even here"),
        (world.channels[ODD], "answer to odd here"),
    }
    # the bot's own messages come back on the shard of their guild and are ignored there
    await dc.push_message(world.channels[ODD], world.alice, f"<@{dc.bot.id}> again")
    assert (await second.next()).text == "again"


async def test_one_replica_without_shard_ids_runs_every_shard(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def at_once(self: object, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py paces IDENTIFYs 5 s apart (Discord's max_concurrency of 1): what is
        checked here is which shard gets which guild, not the pacing."""

    monkeypatch.setattr(ShardedClient, "before_identify_hook", at_once)
    replica = await world.start(shard_count=2)
    assert replica.adapter.connected and replica.adapter.shards == (0, 1)
    assert sorted(i["shard"] for i in world.dc.identify) == [[0, 2], [1, 2]]
    for guild in (EVEN, ODD):
        await world.dc.push_message(world.channels[guild], world.alice, f"in {guild}")
    texts = {(await replica.next()).text for _ in range(2)}
    assert texts == {f"in {EVEN}", f"in {ODD}"}


async def test_an_unsharded_adapter_identifies_without_a_shard(world: World) -> None:
    replica = await world.start()
    assert replica.adapter.shards == (0,)
    assert [i.get("shard") for i in world.dc.identify] == [None]
    await world.dc.push_message(world.channels[ODD], world.alice, "odd guild")
    assert (await replica.next()).text == "odd guild"  # shard 0 of 1 owns every guild


@pytest.mark.parametrize(
    ("sharding", "problem"),
    [
        ({"shard_ids": [0]}, "needs shard_count"),
        ({"shard_count": 2, "shard_ids": [2]}, r"lie in 0\.\.1"),
        ({"shard_count": 2, "shard_ids": [-1]}, r"lie in 0\.\.1"),
        ({"shard_count": 2, "shard_ids": [1, 1]}, "distinct"),
        ({"shard_count": 2, "shard_ids": []}, "at least one"),
    ],
)
def test_the_adapter_refuses_shards_that_cannot_be(
    sharding: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        DiscordAdapter(TOKEN, **sharding)  # type: ignore[arg-type]
