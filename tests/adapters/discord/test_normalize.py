"""normalize / normalize_interaction / normalize_press on payloads parsed by discord.py's own
gateway code.

``payloads/gateway.json`` holds MESSAGE_CREATE, GUILD_CREATE and INTERACTION_CREATE bodies in
Discord API v10 shapes. Each test feeds them through ``ConnectionState.parse_*`` (what
discord.py does when the frame arrives), so the ``Message``/``Interaction`` objects are the
real ones, channel types and reply resolution included.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import pytest

from adapters.discord import normalize, normalize_interaction
from adapters.discord.normalize import normalize_press
from adapters.messages import Pressed

PAYLOADS = json.loads((Path(__file__).parent / "payloads" / "gateway.json").read_text())
BOT = int(PAYLOADS["bot_user"]["id"])
ALICE = "1300000000000000001"
GENERAL, THREAD, DM = "1200000000000000010", "1200000000000000020", "1400000000000000001"


class Gateway:
    """discord.py's connection state fed by hand, one gateway event at a time."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        self.client = discord.Client(intents=intents, chunk_guilds_at_startup=False)
        self.state: Any = self.client._connection
        self.state.user = discord.ClientUser(state=self.state, data=PAYLOADS["bot_user"])
        self.events: list[tuple[str, Any]] = []
        self.state.dispatch = lambda event, *args: self.events.append((event, args))
        self.state.parse_guild_create(PAYLOADS["guild_create"])

    def message(self, name: str) -> discord.Message:
        self.state.parse_message_create(PAYLOADS["messages"][name])
        event, args = self.events[-1]
        assert event == "message"
        message: discord.Message = args[0]
        return message

    def interaction(self, name: str) -> discord.Interaction:
        self.state.parse_interaction_create(PAYLOADS["interactions"][name])
        event, args = self.events[-1]
        assert event == "interaction"
        interaction: discord.Interaction = args[0]
        return interaction


@pytest.fixture
def gw() -> Gateway:
    return Gateway()


def test_dm(gw: Gateway) -> None:
    inbound = normalize(gw.message("dm_text"), bot_id=BOT)
    assert inbound is not None
    assert (inbound.platform, inbound.chat_type, inbound.chat_id) == ("discord", "dm", DM)
    assert inbound.thread_id is None
    assert inbound.text == "hello there" and inbound.message_id == "1350189371637219400"
    assert inbound.sender.user_id == ALICE and inbound.sender.username == "alice"
    assert inbound.sender.display_name == "Alice A." and not inbound.sender.is_bot
    assert inbound.sender.person == f"discord-{ALICE}"
    assert inbound.timestamp.tzinfo is not None
    assert inbound.timestamp.utcoffset() == UTC.utcoffset(None)
    assert inbound.timestamp == datetime(2025, 3, 14, 19, 30, 31, 503000, tzinfo=UTC)  # snowflake
    assert inbound.addressed_to_bot and not inbound.mentions_bot and not inbound.is_command


def test_guild_mention_is_stripped_and_flagged(gw: Gateway) -> None:
    inbound = normalize(gw.message("guild_mention"), bot_id=BOT)
    assert inbound is not None
    assert (inbound.chat_type, inbound.chat_id) == ("group", GENERAL)
    assert inbound.mentions_bot and inbound.text == "what's up?"
    assert inbound.sender.display_name == "Ali"  # the guild nickname


def test_legacy_nick_mention_and_punctuation(gw: Gateway) -> None:
    inbound = normalize(gw.message("guild_nick_mention"), bot_id=BOT)
    assert inbound is not None and inbound.mentions_bot and inbound.text == "help me"


def test_bot_role_mention_counts_as_mention(gw: Gateway) -> None:
    inbound = normalize(gw.message("guild_role_mention"), bot_id=BOT)
    assert inbound is not None and inbound.mentions_bot
    assert inbound.text == "are you there?"


def test_plain_group_message_is_not_addressed(gw: Gateway) -> None:
    inbound = normalize(gw.message("guild_plain"), bot_id=BOT)
    assert inbound is not None
    assert not (inbound.mentions_bot or inbound.replies_to_bot or inbound.is_command)
    assert not inbound.addressed_to_bot
    other = normalize(gw.message("guild_mention"), bot_id=BOT + 1)  # someone else's mention
    assert other is not None and not other.mentions_bot and other.text.startswith("<@")


def test_thread_uses_parent_as_chat(gw: Gateway) -> None:
    inbound = normalize(gw.message("thread_message"), bot_id=BOT)
    assert inbound is not None
    assert (inbound.chat_type, inbound.chat_id, inbound.thread_id) == ("thread", GENERAL, THREAD)
    assert inbound.text == "continue here"


def test_reply_to_the_bot_resolved_from_the_payload(gw: Gateway) -> None:
    inbound = normalize(gw.message("reply_to_bot"), bot_id=BOT)
    assert inbound is not None
    assert inbound.replies_to_bot and inbound.reply_to_message_id == "1350189371637219338"
    assert inbound.addressed_to_bot


def test_reply_to_the_bot_resolved_from_the_cache(gw: Gateway) -> None:
    gw.message("bot_message")  # seen on the gateway earlier, so discord.py cached it
    inbound = normalize(gw.message("reply_to_bot_uncached_ref"), bot_id=BOT)
    assert inbound is not None and inbound.replies_to_bot


def test_reply_to_a_person_or_a_deleted_message(gw: Gateway) -> None:
    human = normalize(gw.message("reply_to_human"), bot_id=BOT)
    assert human is not None and not human.replies_to_bot
    assert human.reply_to_message_id == "1350189371637219339"
    unknown = normalize(gw.message("reply_to_bot_uncached_ref"), bot_id=BOT)
    assert unknown is not None and not unknown.replies_to_bot  # nothing says it was ours
    deleted = normalize(gw.message("reply_to_deleted"), bot_id=BOT)
    assert deleted is not None and not deleted.replies_to_bot


def test_attachments_and_stickers(gw: Gateway) -> None:
    inbound = normalize(gw.message("attachments"), bot_id=BOT)
    assert inbound is not None and inbound.text == ""
    kinds = [(a.kind, a.name, a.mime_type) for a in inbound.attachments]
    assert kinds == [
        ("photo", "photo.png", "image/png"),
        ("voice", "voice-message.ogg", "audio/ogg"),
        ("document", "notes.txt", "text/plain"),
        ("sticker", "Wave", None),
    ]
    assert inbound.attachments[0].size == 48213
    assert inbound.attachments[0].file_id.startswith("https://cdn.discordapp.com/attachments/")


def test_ignored_messages(gw: Gateway) -> None:
    for name in ("system_join", "system_pin", "own_message", "bot_message", "embed_only"):
        assert normalize(gw.message(name), bot_id=BOT) is None, name


def test_slash_text_is_a_command_when_it_names_one(gw: Gateway) -> None:
    names = frozenset({"help", "memory"})
    help_ = normalize(gw.message("guild_slash_help"), bot_id=BOT, command_names=names)
    assert help_ is not None and help_.is_command and help_.text == "/help"
    shrug = normalize(gw.message("guild_slash_other"), bot_id=BOT, command_names=names)
    assert shrug is not None and not shrug.is_command  # not ours: no summons in a group
    unregistered = normalize(gw.message("guild_slash_other"), bot_id=BOT)
    assert unregistered is not None and unregistered.is_command  # no names known yet
    dm = normalize(gw.message("dm_slash_unknown"), bot_id=BOT, command_names=names)
    assert dm is not None and dm.is_command  # in a DM the gateway explains unknown ones


def test_guild_interaction(gw: Gateway) -> None:
    interaction = gw.interaction("guild_memory_notes")
    inbound = normalize_interaction(interaction, name="memory", args="notes")
    assert inbound is not None
    assert inbound.is_command and inbound.text == "/memory notes"
    assert (inbound.chat_type, inbound.chat_id, inbound.thread_id) == ("group", GENERAL, None)
    assert inbound.message_id == "1350189371637219500"
    assert inbound.sender.user_id == ALICE and inbound.sender.display_name == "Ali"
    assert inbound.timestamp.tzinfo is not None


def test_thread_and_dm_interactions(gw: Gateway) -> None:
    thread = normalize_interaction(gw.interaction("thread_help"), name="help", args=None)
    assert thread is not None and thread.text == "/help"
    assert (thread.chat_type, thread.chat_id, thread.thread_id) == ("thread", GENERAL, THREAD)
    dm = normalize_interaction(
        gw.interaction("dm_admin"), name="admin", args="  search telegram-1 tea "
    )
    assert dm is not None and dm.text == "/admin search telegram-1 tea"
    assert (dm.chat_type, dm.chat_id) == ("dm", DM)
    assert dm.sender.display_name == "Alice A."


def test_a_button_press_on_our_message(gw: Gateway) -> None:
    interaction = gw.interaction("guild_press")
    press = normalize_press(interaction, bot_id=BOT)
    assert press is not None and press.is_callback and press.addressed_to_bot
    assert (press.text, press.chat_id, press.chat_type) == (
        "/memory approve 1a2b3c",
        GENERAL,
        "group",
    )
    assert press.message_id == "1350189371637219601"  # the interaction: answers go through it
    assert press.reply_to_message_id == "1350189371637219600" and press.private_reply
    assert press.sender.user_id == ALICE
    assert press.pressed == Pressed(
        "I'd like to remember this:\n\nadd to USER.md: «prefers tea»\n"
        "type /memory approve 1a2b3c or /memory reject 1a2b3c",
        (("Approve", "/memory approve 1a2b3c"), ("Reject", "/memory reject 1a2b3c")),
    )


def test_other_components_and_other_apps_messages_are_not_presses(gw: Gateway) -> None:
    assert normalize_press(gw.interaction("guild_select"), bot_id=BOT) is None
    assert normalize_press(gw.interaction("press_on_another_apps_message"), bot_id=BOT) is None
    assert normalize_press(gw.interaction("guild_memory_notes"), bot_id=BOT) is None
