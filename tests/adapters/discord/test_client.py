"""DiscordAdapter end to end: real discord.py against the loopback fake (REST + zlib-stream
gateway). Nothing of ours is patched; only the fake's wire behaviour is scripted."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from adapters.base import BotCommand, Forbidden, NotFound, RateLimited, Unavailable
from adapters.discord import DiscordAdapter
from adapters.messages import InboundMessage, OutboundMessage, Pressed
from tests.fakes.discord_server import FakeDiscord, FakeUser

TOKEN = "MTEx.fake-bot-token.never-real"
COMMANDS = [
    BotCommand("help", "What I can do", args=False),
    BotCommand("memory", "What I remember"),
    BotCommand("admin", "Admins", admin=True),
]


@dataclass
class World:
    dc: FakeDiscord
    guild: int
    general: int
    other: int
    thread: int
    alice: FakeUser
    dm: int
    inbox: asyncio.Queue[tuple[float, InboundMessage]] = field(default_factory=asyncio.Queue)
    adapter: DiscordAdapter | None = None

    async def sink(self, message: InboundMessage) -> None:
        await self.inbox.put((time.monotonic(), message))

    async def next(self) -> InboundMessage:
        _, message = await asyncio.wait_for(self.inbox.get(), 5)
        return message

    def make(self, **options: Any) -> DiscordAdapter:
        options = {"guild_ready_timeout": 0.05, "ready_timeout": 5.0} | options
        return DiscordAdapter(
            TOKEN, api_base=self.dc.api_base, gateway_url=self.dc.gateway_url, **options
        )

    async def start(self, **options: Any) -> DiscordAdapter:
        self.adapter = self.make(**options)
        await self.adapter.start(self.sink)
        return self.adapter


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as dc:
        guild = dc.add_guild("home")
        general = dc.add_channel(guild, "general")
        other = dc.add_channel(guild, "other")
        alice = dc.add_user("alice", global_name="Alice")
        w = World(dc, guild, general, other, dc.add_thread(general), alice, dc.add_dm(alice))
        try:
            yield w
        finally:
            if w.adapter is not None:
                await w.adapter.stop()


def out(chat: int, text: str, **kwargs: Any) -> OutboundMessage:
    return OutboundMessage("discord", str(chat), text, **kwargs)


def long_reply() -> str:
    code = "\n".join(f"    total += values[{i}]  # step {i}" for i in range(83))
    text = "Here is the plan.\n\n" + "word " * 300 + "\n\n```python\ndef f(values):\n"
    return text + code + "\n    return total\n```\n\nThat is all."


async def test_dm_group_mention_and_thread_reach_the_sink(world: World) -> None:
    adapter = await world.start()
    assert adapter.connected and adapter.platform == "discord"
    dc = world.dc
    await dc.push_message(world.dm, world.alice, "hello in private")
    dm = await world.next()
    assert (dm.chat_type, dm.chat_id, dm.text) == ("dm", str(world.dm), "hello in private")
    assert dm.sender.qualified == f"discord:{world.alice.id}" and dm.sender.display_name == "Alice"

    await dc.push_message(world.general, world.alice, f"<@{dc.bot.id}> remind me")
    group = await world.next()
    assert (group.chat_type, group.chat_id) == ("group", str(world.general))
    assert group.mentions_bot and group.text == "remind me"

    await dc.push_message(world.thread, world.alice, "in the thread")
    thread = await world.next()
    assert (thread.chat_type, thread.chat_id) == ("thread", str(world.general))
    assert thread.thread_id == str(world.thread) and not thread.addressed_to_bot


async def test_replies_split_with_fences_and_own_echo_is_ignored(world: World) -> None:
    adapter = await world.start()
    await world.dc.push_message(world.thread, world.alice, f"<@{world.dc.bot.id}> plan?")
    asked = await world.next()
    text = long_reply()
    assert 4300 < len(text) < 4700
    ids = await adapter.send(
        out(world.general, text, thread_id=asked.thread_id, reply_to_message_id=asked.message_id)
    )
    sent = world.dc.sent
    assert len(ids) == 3 and [str(s.message_id) for s in sent] == ids
    assert all(s.channel_id == world.thread and len(s.content) <= 2000 for s in sent)
    assert all(len(re.findall(r"^```", s.content, re.MULTILINE)) % 2 == 0 for s in sent)
    assert sent[1].content.startswith("```python") or sent[2].content.startswith("```python")
    assert [s.reference for s in sent] == [int(asked.message_id), None, None]
    assert all(s.allowed_mentions == {"parse": []} for s in sent)
    # the three echoes of our own messages never reach the sink: the next item is this one
    await world.dc.push_message(world.dm, world.alice, "next")
    assert (await world.next()).text == "next"


async def test_slash_commands_register_defer_and_answer_privately(world: World) -> None:
    adapter = await world.start()
    await adapter.set_commands(COMMANDS)
    dc = world.dc
    assert [c["name"] for c in dc.commands] == ["help", "memory", "admin"]
    assert not dc.commands[0].get("options")  # /help takes nothing: no option to fill in
    assert dc.commands[1]["options"][0]["name"] == "args"
    permissions = [c.get("default_member_permissions") for c in dc.commands]
    assert permissions[:2] == [None, None] and str(permissions[2]) == "8"  # Administrator
    assert dc.commands[1]["options"][0]["type"] == 3 and not dc.commands[1]["options"][0].get(
        "required"
    )
    assert any(c.method == "PUT" and c.path.endswith("/commands") for c in dc.calls)

    pushed = await dc.push_interaction("memory", {"args": "notes"}, world.alice, world.general)
    received_at, inbound = await asyncio.wait_for(world.inbox.get(), 5)
    assert inbound.is_command and inbound.text == "/memory notes"
    assert inbound.message_id == str(pushed.id) and inbound.chat_id == str(world.general)
    [callback] = dc.callbacks
    assert callback.type == 5 and callback.flags == 64  # deferred, ephemeral in a guild
    assert callback.time <= received_at and callback.time - pushed.created < 3.0

    ids = await adapter.send(
        out(world.general, long_reply(), reply_to_message_id=inbound.message_id, markdown=False)
    )
    assert [s.kind for s in dc.sent] == ["original", "followup", "followup"]
    assert all(s.ephemeral and s.interaction_id == pushed.id for s in dc.sent)
    assert ids == [str(s.message_id) for s in dc.sent]
    assert not any(c.path == f"/channels/{world.general}/messages" for c in dc.calls)


async def test_dm_command_typed_and_slash(world: World) -> None:
    adapter = await world.start()
    await adapter.set_commands(COMMANDS)
    await world.dc.push_interaction(
        "admin", {"args": "search telegram-1 tea"}, world.alice, world.dm
    )
    inbound = await world.next()
    assert inbound.text == "/admin search telegram-1 tea" and inbound.chat_type == "dm"
    assert world.dc.callbacks[0].flags == 0  # a DM is private already
    await adapter.send(out(world.dm, "done", reply_to_message_id=inbound.message_id))
    assert [(s.kind, s.ephemeral) for s in world.dc.sent] == [("original", False)]

    await world.dc.push_message(world.general, world.alice, "/help")
    typed = await world.next()
    assert typed.is_command and typed.text == "/help" and typed.addressed_to_bot


CHOICES = (("Approve", "/memory approve 1a2b3c"), ("Reject", "/memory reject 1a2b3c"))


async def test_buttons_are_components_and_a_press_is_acknowledged_at_once(world: World) -> None:
    adapter = await world.start()
    dc = world.dc
    text = "add to USER.md: «tea»\ntype /memory approve 1a2b3c or /memory reject 1a2b3c"
    [card_id] = await adapter.send(out(world.dm, text, buttons=(*CHOICES, ("Later", "/later"))))
    [sent] = dc.sent
    assert sent.buttons == [*CHOICES, ("Later", "/later")]
    rows = [[c["custom_id"] for c in row["components"]] for row in sent.components]
    assert rows == [[CHOICES[0][1], CHOICES[1][1]], ["/later"]]  # two to a row
    assert sent.content == f"{text}\n\nLater → /later"  # typed fallback only where missing

    pressed = await dc.press(int(card_id), CHOICES[0][1], world.alice)
    press = await world.next()
    # a deferred update, before the sink ran (the fake refuses a callback after 3 s)
    assert [c.type for c in dc.callbacks] == [6]
    assert (press.is_callback, press.text, press.chat_type) == (True, CHOICES[0][1], "dm")
    assert press.reply_to_message_id == card_id and press.message_id == str(pressed.id)
    assert press.pressed == Pressed(sent.content, (*CHOICES, ("Later", "/later")))
    assert not press.private_reply

    await adapter.edit(str(world.dm), card_id, "✓ Saved to USER.md: «tea»", buttons=(CHOICES[1],))
    await adapter.send(out(world.dm, "noted", reply_to_message_id=press.message_id))
    edited, answer = dc.sent[1:]
    assert (edited.kind, edited.message_id, edited.interaction_id) == (
        "edit",
        int(card_id),
        pressed.id,
    )
    assert edited.buttons == [CHOICES[1]]
    assert (answer.kind, answer.content) == ("followup", "noted")  # the card stays as edited
    await adapter.edit(str(world.dm), card_id, "✓ Saved to USER.md: «tea»")
    assert dc.sent[-1].buttons == [] and dc.messages[int(card_id)]["components"] == []


async def test_a_card_shown_only_to_its_asker_is_edited_through_the_press(world: World) -> None:
    adapter = await world.start()
    await adapter.set_commands(COMMANDS)
    dc = world.dc
    await dc.push_interaction("memory", {"args": "pending"}, world.alice, world.general)
    command = await world.next()
    [card_id] = await adapter.send(
        out(world.general, "Waiting: tea", reply_to_message_id=command.message_id, buttons=CHOICES)
    )
    await dc.press(int(card_id), CHOICES[1][1], world.alice)
    press = await world.next()
    assert press.chat_type == "group" and press.private_reply  # its answers stay ephemeral
    await adapter.edit(str(world.general), card_id, "✗ Not saved: «tea»")
    assert (dc.sent[-1].kind, dc.sent[-1].ephemeral, dc.sent[-1].buttons) == ("edit", True, [])
    await adapter.send(out(world.general, "and?", reply_to_message_id=press.message_id))
    assert (dc.sent[-1].kind, dc.sent[-1].ephemeral) == ("followup", True)


async def test_an_edit_without_a_press_goes_through_the_channel(world: World) -> None:
    adapter = await world.start()
    [card_id] = await adapter.send(out(world.general, "Waiting: tea", buttons=CHOICES))
    await adapter.edit(str(world.general), card_id, "Decided")
    assert [(s.kind, s.content, s.buttons) for s in world.dc.sent[1:]] == [("edit", "Decided", [])]
    with pytest.raises(NotFound):
        await adapter.edit(str(world.general), "123", "gone")


async def test_expired_guild_interaction_falls_back_to_a_dm(world: World) -> None:
    adapter = await world.start(interaction_ttl=0.2)
    await adapter.set_commands(COMMANDS)
    await world.dc.push_interaction("memory", None, world.alice, world.general)
    inbound = await world.next()
    await asyncio.sleep(0.3)
    ids = await adapter.send(
        out(world.general, "private notes", reply_to_message_id=inbound.message_id)
    )
    [sent] = world.dc.sent
    assert sent.kind == "message" and sent.channel_id == world.dm  # not the public channel
    assert ids == [str(sent.message_id)]


async def test_failed_defer_still_answers_privately(world: World) -> None:
    adapter = await world.start()
    world.dc.interaction_deadline = 0.0  # Discord: 10062 Unknown interaction (too late)
    await world.dc.push_interaction("memory", None, world.alice, world.general)
    inbound = await world.next()  # no set_commands since this start: still answered
    assert inbound.text == "/memory" and world.dc.callbacks == []
    await adapter.send(out(world.general, "private notes", reply_to_message_id=inbound.message_id))
    assert [(s.kind, s.channel_id) for s in world.dc.sent] == [("message", world.dm)]


async def test_flood_on_one_channel_delays_only_that_channel(world: World) -> None:
    adapter = await world.start()
    world.dc.flood(world.general, retry_after=0.8)
    started = time.monotonic()
    await asyncio.gather(
        adapter.send(out(world.general, "to the flooded channel")),
        adapter.send(out(world.other, "to the quiet channel")),
    )
    when = {s.channel_id: s.time - started for s in world.dc.sent}
    assert when[world.other] < 0.4
    assert when[world.general] >= 0.8 > when[world.other]


async def test_long_flood_raises_rate_limited_with_what_was_sent(world: World) -> None:
    adapter = await world.start()
    world.dc.flood(world.general, retry_after=45.0, after=1)  # beyond max_ratelimit_timeout
    message = out(world.general, long_reply())
    with pytest.raises(RateLimited) as limited:
        await adapter.send(message)
    assert limited.value.retry_after == 45.0 and len(limited.value.sent) == 1
    world.dc._floods.clear()  # discord.py remembers nothing: the gateway waits, then retries
    rest = await adapter.send(
        OutboundMessage("discord", str(world.general), message.text, skip_chunks=1)
    )
    assert len(rest) == 2 and [s.message_id for s in world.dc.sent] == [
        int(limited.value.sent[0]),
        *map(int, rest),
    ]


async def test_a_chunk_sent_again_with_its_key_is_not_posted_twice(world: World) -> None:
    """With a key each chunk carries a stable nonce (discord.py adds enforce_nonce), so a
    chunk sent again, as after a restart, gets the message it already made."""
    adapter = await world.start()
    message = out(world.general, long_reply(), key="42:1700000000.5")
    reports: list[tuple[int, int]] = []

    async def delivered(done: int, total: int) -> None:
        reports.append((done, total))

    first = await adapter.send(message, delivered=delivered)
    assert len(first) == 3 and reports == [(1, 3), (2, 3), (3, 3)]
    posted = [c.body["nonce"] for c in world.dc.calls if c.method == "POST"]
    assert len(set(posted)) == 3 and all(len(n) <= 25 for n in posted)
    again = await adapter.send(dataclasses.replace(message, skip_chunks=1))
    assert again == first[1:]  # Discord answered with the messages already there
    assert len(world.dc.sent) == 3 and world.dc.nonce_hits == posted[1:]
    other = await adapter.send(dataclasses.replace(message, key="43:1700000001.5"))
    assert len(world.dc.sent) == 6 and not set(other) & set(first)


async def test_without_a_key_a_send_again_is_a_new_message(world: World) -> None:
    adapter = await world.start()
    await adapter.send(out(world.general, "hi"))
    await adapter.send(out(world.general, "hi"))
    assert len(world.dc.sent) == 2 and world.dc.nonce_hits == []


async def test_errors_are_translated(world: World) -> None:
    adapter = await world.start(request_timeout=0.5)
    world.dc.forbid(world.other)
    with pytest.raises(Forbidden) as forbidden:
        await adapter.send(out(world.other, "hi"))
    assert "50013" in str(forbidden.value) and forbidden.value.sent == ()
    with pytest.raises(NotFound):
        await adapter.send(out(424242, "hi"))
    world.dc.fail_next(503, path=r"/messages$")
    with pytest.raises(Unavailable):
        await adapter.send(out(world.general, "hi"))
    world.dc.hang_next(path=r"/messages$")
    with pytest.raises(Unavailable):
        await adapter.send(out(world.general, "hi"))
    with pytest.raises(Forbidden):
        await adapter.typing(str(world.other))


async def test_typing_goes_to_the_thread(world: World) -> None:
    adapter = await world.start()
    await adapter.typing(str(world.general), str(world.thread))
    assert [channel for channel, _ in world.dc.typing] == [world.thread]


async def test_reconnects_after_the_socket_drops(world: World) -> None:
    adapter = await world.start()
    await world.dc.drop_connection()
    await world.dc.push_message(world.dm, world.alice, "are you back?")
    assert (await world.next()).text == "are you back?"
    await world.dc.wait_for(lambda: len(world.dc.resumes) == 1)
    assert adapter.connected  # the RESUME that delivered the message opened a new socket
    await world.dc.push_message(world.dm, world.alice, "and again")
    assert (await world.next()).text == "and again"


async def test_redelivery_keeps_the_dedup_key(world: World) -> None:
    await world.start()
    payload = await world.dc.push_message(world.dm, world.alice, "once")
    first = await world.next()
    await world.dc.redeliver(payload)
    again = await world.next()
    assert again.dedup_key == first.dedup_key


async def test_stop_is_clean_and_idempotent(world: World) -> None:
    base = discord.http.Route.BASE
    adapter = await world.start()
    assert world.dc.api_base == discord.http.Route.BASE
    await adapter.stop()
    await adapter.stop()
    assert not adapter.connected
    assert base == discord.http.Route.BASE  # the process-global hook is restored
    gc.collect()  # an unclosed aiohttp session would warn now (warnings are errors)
    with pytest.raises(Unavailable):
        await adapter.send(out(world.dm, "after stop"))


async def test_bad_token_is_a_clear_error_without_the_token(world: World) -> None:
    secret = "MTEx.wrong-token.s3cr3t"
    adapter = DiscordAdapter(secret, api_base=world.dc.api_base, gateway_url=world.dc.gateway_url)
    with pytest.raises(Forbidden) as failed:
        await adapter.start(world.sink)
    assert "token" in str(failed.value) and secret not in str(failed.value)
    assert secret not in repr(adapter) and not adapter.connected
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    assert world.dc.calls[-1].status == 401
    gc.collect()
