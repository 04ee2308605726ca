"""``normalize`` on recorded Bot API payloads, de-serialised offline with ``Update.de_json``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from telegram import Bot, Update

from adapters.messages import Attachment, Identity, InboundMessage, Pressed
from adapters.telegram import normalize

PAYLOADS = Path(__file__).parent / "payloads"
BOT_ID = 7012345678
BOT_USERNAME = "MnemoHomeBot"
ADA = Identity("telegram", "205118349", "Ada Lovelace", "ada_l")
PRESSED_AT = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text(encoding="utf-8"))
    return data


def run(payload: dict[str, Any]) -> InboundMessage | None:
    update = Update.de_json(payload, Bot("123:offline"))  # no network: PTB's offline path
    return normalize(update, bot_id=BOT_ID, bot_username=BOT_USERNAME, received_at=PRESSED_AT)


def message_of(name: str) -> InboundMessage:
    result = run(load(name))
    assert result is not None, name
    return result


def test_private_text() -> None:
    m = message_of("dm_text")
    assert m == InboundMessage(
        platform="telegram",
        chat_id="205118349",
        chat_type="dm",
        sender=ADA,
        text="What did I tell you about the engine? 🙂",
        message_id="1187",
        timestamp=datetime(2025, 1, 1, 0, 0, tzinfo=UTC),
        update_id="871234501",
    )
    assert m.timestamp.tzinfo is not None and m.addressed_to_bot
    assert m.dedup_key == "telegram:205118349:871234501"


def test_private_command() -> None:
    m = message_of("dm_command")
    assert (m.text, m.is_command, m.mentions_bot) == ("/memory notes", True, False)


def test_group_command_addressed_to_us_loses_the_suffix() -> None:
    m = message_of("group_command_ours")
    assert (m.chat_type, m.text, m.is_command) == ("group", "/memory notes", True)
    assert m.addressed_to_bot


def test_group_command_for_another_bot_is_ignored() -> None:
    assert run(load("group_command_other_bot")) is None


def test_leading_mention_is_stripped_case_insensitively() -> None:
    m = message_of("group_mention")
    assert m.chat_type == "group" and m.chat_id == "-4012345678"
    assert m.mentions_bot and not m.is_command
    assert m.text == "what is the plan for 🚂 tomorrow?"
    assert m.sender == Identity("telegram", "311402977", "Charles Babbage")


def test_group_chatter_is_not_addressed_to_the_bot() -> None:
    m = message_of("group_plain")
    assert (m.mentions_bot, m.replies_to_bot, m.is_command) == (False, False, False)
    assert m.text == "ask @someone_else about the gears"
    assert not m.addressed_to_bot


def test_reply_to_a_bot_message() -> None:
    m = message_of("reply_to_bot")
    assert (m.reply_to_message_id, m.replies_to_bot) == ("5529", True)
    assert m.addressed_to_bot and m.chat_type == "group"


def test_forum_topic_is_a_thread_and_its_root_is_no_reply() -> None:
    m = message_of("forum_topic")
    assert (m.chat_type, m.thread_id, m.chat_id) == ("thread", "877", "-1002233445566")
    assert m.reply_to_message_id is None and not m.replies_to_bot
    assert m.mentions_bot and m.text == "summarise this topic"


def test_supergroup_reply_thread_outside_forums_stays_a_group() -> None:
    m = message_of("supergroup_reply_thread")
    assert (m.chat_type, m.thread_id, m.reply_to_message_id) == ("group", None, "5538")
    assert not m.replies_to_bot


def test_photo_caption_and_largest_size() -> None:
    m = message_of("photo_caption")
    assert m.text == "the /memory of the loom" and not m.is_command  # not at offset 0
    assert m.attachments == (Attachment("photo", "AgACAgIAAxkBAAIBXGd-large", size=98344),)


@pytest.mark.parametrize(
    ("name", "attachment"),
    [
        (
            "document",
            Attachment(
                "document", "BQACAgIAAxkBAAIBXWd-doc", "note_g.pdf", "application/pdf", 482113
            ),
        ),
        ("voice", Attachment("voice", "AwACAgIAAxkBAAIBXmd-voice", None, "audio/ogg", 14790)),
        (
            "animation",
            Attachment("video", "CgACAgIAAxkBAAIBX2d-anim", "gears.mp4", "video/mp4", 210344),
        ),
        (
            "sticker",
            Attachment(
                "sticker", "CAACAgIAAxkBAAIBYGd-sticker", "👍", "application/x-tgsticker", 30113
            ),
        ),
    ],
)
def test_media_without_text_keeps_its_metadata(name: str, attachment: Attachment) -> None:
    m = message_of(name)
    assert m.text == ""
    assert m.attachments == (attachment,)  # an animation is not reported twice


def test_text_mention_of_the_bot() -> None:
    m = message_of("text_mention")
    assert m.mentions_bot and m.text == "thanks Mnemo"


def test_message_sent_as_the_group_is_attributed_to_the_chat() -> None:
    m = message_of("anonymous_admin")
    assert m.sender == Identity("telegram", "-1001789012345", "Analytical Society")
    assert m.text == "remember the meeting is on Friday"


@pytest.mark.parametrize("name", ["edited", "channel_post", "new_member", "bot_own_message"])
def test_ignored_updates(name: str) -> None:
    assert run(load(name)) is None


def test_callback_query() -> None:
    m = message_of("callback_query")
    assert m.is_callback and m.text == "forget:yes"
    assert m.message_id == "881234567890123456"  # what answerCallbackQuery needs
    assert (m.chat_type, m.thread_id, m.chat_id) == ("thread", "877", "-1002233445566")
    assert (m.reply_to_message_id, m.replies_to_bot) == ("5560", True)
    assert m.sender.user_id == "311402977" and m.timestamp == PRESSED_AT
    assert m.addressed_to_bot and m.update_id == "871234520"
    assert m.pressed == Pressed(  # the message as it was pressed, with the buttons it had
        "Forget everything about gears?", (("Yes", "forget:yes"), ("No", "forget:no"))
    )


def test_callback_without_data_or_message_is_ignored() -> None:
    payload = load("callback_query")
    del payload["callback_query"]["data"]
    payload["callback_query"]["game_short_name"] = "loom"
    assert run(payload) is None
    inline = load("callback_query")
    del inline["callback_query"]["message"]
    inline["callback_query"]["inline_message_id"] = "AAAAAA"
    assert run(inline) is None


def test_callback_on_an_inaccessible_message_still_counts() -> None:
    payload = load("callback_query")
    payload["callback_query"]["message"] = {
        "chat": {"id": 205118349, "first_name": "Ada", "type": "private"},
        "message_id": 12,
        "date": 0,
    }
    m = message_of_payload(payload)
    assert (m.chat_type, m.chat_id, m.reply_to_message_id) == ("dm", "205118349", "12")
    assert m.pressed == Pressed("")  # Telegram no longer shows it to the bot


def message_of_payload(payload: dict[str, Any]) -> InboundMessage:
    result = run(payload)
    assert result is not None
    return result


def test_command_for_us_in_a_dm_with_suffix_and_no_arguments() -> None:
    payload = load("dm_command")
    payload["message"]["text"] = "/new@mnemohomebot"
    payload["message"]["entities"][0]["length"] = 17
    m = message_of_payload(payload)
    assert (m.text, m.is_command) == ("/new", True)


def test_whitespace_only_text_without_attachments_is_ignored() -> None:
    payload = load("dm_text")
    payload["message"]["text"] = "   "
    assert run(payload) is None
