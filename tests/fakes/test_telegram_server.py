"""The fake Bot API, driven by the real python-telegram-bot ``Bot`` over loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
)
from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TimedOut,
)
from telegram.request import HTTPXRequest

from tests.fakes.telegram_html import HtmlError, parse_html, trim
from tests.fakes.telegram_server import DEFAULT_TOKEN, OMIT, FakeBotAPI

USER = 4242


@pytest.fixture(autouse=True)
def _timedelta_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    """PTB >= 22.2 warns on every RetryAfter it builds unless this opt-in is set."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI() as server:
        yield server


@pytest.fixture
async def bot(api: FakeBotAPI) -> AsyncIterator[Bot]:
    async with Bot(DEFAULT_TOKEN, base_url=api.base_url) as client:
        yield client


# -- identity and auth ---------------------------------------------------------------------


async def test_get_me_reports_the_configured_identity() -> None:
    async with (
        FakeBotAPI("555:secret", username="other_bot", first_name="Other") as api,
        Bot("555:secret", base_url=api.base_url) as bot,
    ):
        assert (bot.id, bot.username, bot.first_name) == (555, "other_bot", "Other")
        assert api.calls_of("getMe")[0].status == 200


async def test_a_wrong_token_is_unauthorized(api: FakeBotAPI) -> None:
    bot = Bot("1:wrong", base_url=api.base_url)
    with pytest.raises(InvalidToken):
        await bot.initialize()
    await bot.shutdown()
    assert api.calls[-1].status == 401
    assert api.calls[-1].description == "Unauthorized"


async def test_an_unknown_method_is_not_found(bot: Bot, api: FakeBotAPI) -> None:
    with pytest.raises(Exception, match=r"(?i)not found"):
        await bot.do_api_request("sendTeleportation", api_kwargs={"chat_id": 1})
    assert api.calls[-1].status == 404


# -- getUpdates ----------------------------------------------------------------------------


async def test_long_poll_answers_as_soon_as_an_update_arrives(bot: Bot, api: FakeBotAPI) -> None:
    started = time.monotonic()
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.2)
    assert not poll.done()  # held, not answered empty
    pushed = api.push_text(USER, USER, "hello")
    updates = await asyncio.wait_for(poll, 2)
    assert time.monotonic() - started < 2
    assert [u.update_id for u in updates] == [pushed["update_id"]]
    assert updates[0].message is not None and updates[0].message.text == "hello"


async def test_long_poll_returns_empty_after_its_timeout(bot: Bot) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=1) == ()
    assert 0.9 <= time.monotonic() - started < 2.5


async def test_unconfirmed_updates_come_again_and_offset_confirms(
    bot: Bot, api: FakeBotAPI
) -> None:
    first = api.push_text(USER, USER, "one")
    second = api.push_text(USER, USER, "two")
    ids = [first["update_id"], second["update_id"]]
    assert [u.update_id for u in await bot.get_updates()] == ids
    assert [u.update_id for u in await bot.get_updates()] == ids  # not confirmed yet
    assert [u.update_id for u in await bot.get_updates(offset=ids[0] + 1)] == ids[1:]
    assert await bot.get_updates(offset=ids[1] + 1) == ()
    assert api.pending_updates == []


async def test_limit_and_negative_offset(bot: Bot, api: FakeBotAPI) -> None:
    pushed = [api.push_text(USER, USER, f"m{i}")["update_id"] for i in range(5)]
    assert [u.update_id for u in await bot.get_updates(limit=2)] == pushed[:2]
    assert [u.update_id for u in await bot.get_updates(offset=-1)] == pushed[-1:]
    assert [u["update_id"] for u in api.pending_updates] == pushed[-1:]


async def test_allowed_updates_filter_and_are_remembered(bot: Bot, api: FakeBotAPI) -> None:
    message = api.push_text(USER, USER, "text")
    yes = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="yes")]])
    sent = await bot.send_message(USER, "pick", reply_markup=yes)
    callback = api.push_callback(USER, USER, "yes", sent.message_id)
    only = await bot.get_updates(allowed_updates=["callback_query"])
    assert [u.update_id for u in only] == [callback["update_id"]]
    assert [u.update_id for u in await bot.get_updates()] == [callback["update_id"]]
    both = await bot.get_updates(allowed_updates=["message", "callback_query"])
    assert [u.update_id for u in both] == [message["update_id"], callback["update_id"]]


async def test_malformed_updates_are_served_as_given(bot: Bot, api: FakeBotAPI) -> None:
    good = api.push_text(USER, USER, "fine")
    message = {**good["message"], "date": "yesterday"}
    bad = api.push_raw({"message": message})
    with pytest.raises(TypeError):  # PTB reads the batch as a whole: one bad update fails it
        await bot.get_updates()
    idless = api.push_raw({"message": good["message"]}, served_update_id=OMIT)
    raw = await bot.do_api_request("getupdates")  # the lower-case name skips PTB's parsing
    assert [u.get("update_id") for u in raw] == [good["update_id"], bad["update_id"], None]
    assert raw[1]["message"]["date"] == "yesterday"
    # the id-less update is still queued under its own id, and confirmed by offset
    assert await bot.do_api_request("getupdates", {"offset": idless["update_id"] + 1}) == []
    assert api.pending_updates == []


async def test_redeliver_repeats_the_same_update_id(bot: Bot, api: FakeBotAPI) -> None:
    pushed = api.push_text(USER, USER, "once")
    [update] = await bot.get_updates()
    assert await bot.get_updates(offset=update.update_id + 1) == ()
    api.redeliver(pushed)
    [again] = await bot.get_updates()
    assert again.update_id == pushed["update_id"]
    assert again.message is not None and again.message.text == "once"


async def test_a_second_poll_ends_the_first_with_conflict(api: FakeBotAPI) -> None:
    async with (
        Bot(DEFAULT_TOKEN, base_url=api.base_url) as first,
        Bot(DEFAULT_TOKEN, base_url=api.base_url) as second,
    ):
        waiting = asyncio.create_task(first.get_updates(timeout=5))
        await asyncio.sleep(0.2)
        await second.get_updates(timeout=0)
        with pytest.raises(Conflict, match="terminated by other getUpdates"):
            await asyncio.wait_for(waiting, 2)


async def test_leaving_the_context_wakes_a_long_poll() -> None:
    api = FakeBotAPI()
    await api.start()
    async with Bot(DEFAULT_TOKEN, base_url=api.base_url) as bot:
        poll = asyncio.create_task(bot.get_updates(timeout=30))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await api.close()
        try:
            result: object = await asyncio.wait_for(poll, 3)
        except NetworkError:  # the connection closed before the empty answer
            result = "closed"
        assert result in ((), "closed")
        assert time.monotonic() - started < 3


# -- sendMessage ---------------------------------------------------------------------------


async def test_html_is_parsed_into_visible_text_and_entities(bot: Bot, api: FakeBotAPI) -> None:
    message = await bot.send_message(
        USER, '<b>bold</b> &amp; <a href="https://x.org">link</a> 😀<i>é</i>', parse_mode="HTML"
    )
    [sent] = await api.wait_sent(1)
    assert sent.text == message.text == "bold & link 😀é"
    assert sent.source.startswith("<b>bold</b>")
    assert sent.html == sent.source and sent.parse_mode == "HTML"
    assert [(e.type, e.offset, e.length) for e in message.entities] == [
        ("bold", 0, 4),
        ("text_link", 7, 4),
        ("italic", 14, 1),  # the emoji counts two UTF-16 units
    ]
    assert message.parse_entities()[message.entities[2]] == "é"


@pytest.mark.parametrize(
    ("html", "error"),
    [
        ("<blink>x</blink>", 'Unsupported start tag "blink" at byte offset 0'),
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<b><i>x</b></i>", 'expected "</i>", found "</b>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ('<span class="x">y</span>', 'Tag "span" must have class "tg-spoiler"'),
    ],
)
async def test_bad_html_cannot_be_parsed(bot: Bot, api: FakeBotAPI, html: str, error: str) -> None:
    with pytest.raises(BadRequest, match="Can't parse entities") as caught:
        await bot.send_message(USER, html, parse_mode="HTML")
    assert error.lower() in caught.value.message.lower()
    assert api.sent == []


async def test_unknown_character_references_stay_literal_as_in_telegram(bot: Bot) -> None:
    message = await bot.send_message(USER, "AT&T &copy; &#60;ok&gt", parse_mode="HTML")
    assert message.text == "AT&T &copy; <ok>"


async def test_length_is_counted_in_utf16_after_parsing(bot: Bot) -> None:
    fits = "😀" * 2048  # 4096 UTF-16 units
    assert (await bot.send_message(USER, f"<b>{fits}</b>", parse_mode="HTML")).text == fits
    with pytest.raises(BadRequest, match="too long"):
        await bot.send_message(USER, fits + "x")


async def test_empty_or_blank_text_is_refused(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="text is empty"):
        await bot.send_message(USER, "  \n ")
    with pytest.raises(BadRequest, match="text is empty"):
        await bot.send_message(USER, "<b> </b>", parse_mode="HTML")


async def test_other_parse_modes_are_refused(bot: Bot) -> None:
    with pytest.raises(BadRequest, match="Unsupported parse_mode"):
        await bot.send_message(USER, "*x*", parse_mode="MarkdownV2")


async def test_unknown_chats_once_chats_are_registered(bot: Bot, api: FakeBotAPI) -> None:
    await bot.send_message(999, "anyone goes while nothing is registered")
    api.add_chat(USER)
    await bot.send_message(USER, "known")
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_message(777, "stranger")


async def test_threads_replies_and_buttons(bot: Bot, api: FakeBotAPI) -> None:
    group = -1001234
    api.add_chat(group, is_forum=True, topics=[7])
    pushed = api.push_text(group, USER, "q", chat_type="supergroup", thread_id=7)
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="y")]])
    message = await bot.send_message(
        group,
        "a",
        message_thread_id=7,
        reply_parameters=ReplyParameters(pushed["message"]["message_id"]),
        reply_markup=markup,
    )
    [sent] = await api.wait_sent(1, chat_id=group)
    assert (sent.thread_id, sent.reply_to_message_id) == (7, pushed["message"]["message_id"])
    assert sent.buttons == [("Yes", "y")]
    assert message.is_topic_message and message.reply_to_message is not None
    with pytest.raises(BadRequest, match="thread not found"):
        await bot.send_message(group, "b", message_thread_id=8)
    with pytest.raises(BadRequest, match="replied not found"):
        await bot.send_message(group, "c", reply_parameters=ReplyParameters(9999))
    kept = await bot.send_message(
        group, "d", reply_parameters=ReplyParameters(9999, allow_sending_without_reply=True)
    )
    assert kept.reply_to_message is None
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
    with pytest.raises(BadRequest, match="Button_data_invalid"):
        await bot.send_message(group, "e", reply_markup=too_long)


# -- scripted failures ---------------------------------------------------------------------


async def test_flood_control_answers_429_with_retry_after(bot: Bot, api: FakeBotAPI) -> None:
    api.flood(USER, retry_after=7)
    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(USER, "x")
    assert caught.value.retry_after == timedelta(seconds=7)
    assert api.calls[-1].status == 429
    await bot.send_message(USER + 1, "other chats are not affected")
    await bot.send_message(USER, "the flood was for one message")
    assert len(api.sent) == 2


async def test_blocked_user_is_forbidden(bot: Bot, api: FakeBotAPI) -> None:
    api.blocked(USER)
    with pytest.raises(Forbidden, match="blocked by the user"):
        await bot.send_message(USER, "x")
    with pytest.raises(Forbidden):
        await bot.send_chat_action(USER, "typing")
    api.unblock(USER)
    await bot.send_message(USER, "x")


async def test_a_person_seen_only_in_groups_cannot_be_written_to_privately(
    bot: Bot, api: FakeBotAPI
) -> None:
    api.push_text(-100, USER, "hi all", chat_type="supergroup")
    with pytest.raises(Forbidden, match="can't initiate conversation"):
        await bot.send_message(USER, "x")
    api.push_text(USER, USER, "/start")  # they open the bot
    await bot.send_message(USER, "x")


async def test_fail_scripts_a_server_error(bot: Bot, api: FakeBotAPI) -> None:
    api.fail("sendMessage", 502, times=2)
    for _ in range(2):
        with pytest.raises(NetworkError, match="Bad Gateway") as caught:
            await bot.send_message(USER, "x")
        assert not isinstance(caught.value, BadRequest)
    await bot.send_message(USER, "x")


async def test_hang_trips_the_client_timeout(api: FakeBotAPI) -> None:
    api.hang("sendMessage", 5)
    request = HTTPXRequest(read_timeout=0.3)
    async with Bot(DEFAULT_TOKEN, base_url=api.base_url, request=request) as bot:
        with pytest.raises(TimedOut):
            await bot.send_message(USER, "x")
        await bot.send_message(USER, "the hang was for one call")


# -- other methods -------------------------------------------------------------------------


async def test_edit_message_text(bot: Bot, api: FakeBotAPI) -> None:
    message = await bot.send_message(USER, "draft")
    edited = await bot.edit_message_text(
        "<i>final</i>", USER, message.message_id, parse_mode="HTML"
    )
    assert isinstance(edited, type(message)) and edited.text == "final"
    assert api.edits[0].text == "final"
    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_text("<i>final</i>", USER, message.message_id, parse_mode="HTML")
    with pytest.raises(BadRequest, match="to edit not found"):
        await bot.edit_message_text("x", USER, 999)


async def test_chat_action_and_commands(bot: Bot, api: FakeBotAPI) -> None:
    assert await bot.send_chat_action(USER, "typing")
    [call] = await api.wait_calls("sendChatAction")
    assert call.params == {"chat_id": USER, "action": "typing"}
    with pytest.raises(BadRequest, match="action"):
        await bot.send_chat_action(USER, "dancing")
    await bot.set_my_commands([BotCommand("memory", "What I remember"), BotCommand("new", "Reset")])
    assert [c.command for c in await bot.get_my_commands()] == ["memory", "new"]
    with pytest.raises(BadRequest, match="Bot_command_invalid"):
        await bot.set_my_commands([BotCommand("Bad-Name", "x")])
    await bot.delete_my_commands()
    assert await bot.get_my_commands() == ()


async def test_callback_queries_can_be_answered_once(bot: Bot, api: FakeBotAPI) -> None:
    yes = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="yes")]])
    message = await bot.send_message(USER, "pick", reply_markup=yes)
    api.push_callback(USER, USER, "yes", message.message_id)
    [update] = await bot.get_updates()
    query = update.callback_query
    assert query is not None and query.data == "yes"
    assert query.message is not None and query.message.message_id == message.message_id
    assert await bot.answer_callback_query(query.id)
    assert query.id in api.answered_callbacks
    with pytest.raises(BadRequest, match=r"(?i)query is too old"):
        await bot.answer_callback_query(query.id)


async def test_webhook_lifecycle(bot: Bot, api: FakeBotAPI) -> None:
    with pytest.raises(BadRequest, match=r"(?i)https url"):
        await bot.set_webhook("http://example.org/hook")
    with pytest.raises(BadRequest, match=r"(?i)secret token"):
        await bot.set_webhook("https://example.org/hook", secret_token="no spaces")
    await bot.set_webhook("https://example.org/hook", secret_token="s3cret")
    assert api.webhook["url"] == "https://example.org/hook"
    assert (await bot.get_webhook_info()).url == "https://example.org/hook"
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()
    api.push_text(USER, USER, "queued")
    await bot.delete_webhook(drop_pending_updates=True)
    assert (await bot.get_webhook_info()).url == ""
    assert await bot.get_updates() == ()


# -- realistic pushes ----------------------------------------------------------------------


async def test_push_text_detects_commands_and_mentions(bot: Bot, api: FakeBotAPI) -> None:
    api.push_text(-100, USER, "/memory@mnemo_test_bot notes for @someone", chat_type="group")
    [update] = await bot.get_updates()
    message = update.message
    assert message is not None and message.chat.type == "group"
    found = {e.type: text for e, text in message.parse_entities().items()}
    assert found == {"bot_command": "/memory@mnemo_test_bot", "mention": "@someone"}


async def test_topic_messages_reply_to_the_topic_root(bot: Bot, api: FakeBotAPI) -> None:
    api.push_text(-1009, USER, "in a topic", chat_type="supergroup", thread_id=5)
    [update] = await bot.get_updates()
    message = update.message
    assert message is not None and message.is_topic_message and message.message_thread_id == 5
    assert message.reply_to_message is not None
    assert message.reply_to_message.forum_topic_created is not None


async def test_replies_to_a_bot_message_by_id(bot: Bot, api: FakeBotAPI) -> None:
    sent = await bot.send_message(USER, "question?")
    api.push_text(USER, USER, "answer", reply_to=sent.message_id)
    [update] = await bot.get_updates()
    assert update.message is not None and update.message.reply_to_message is not None
    replied = update.message.reply_to_message
    assert replied.from_user is not None and replied.from_user.id == bot.id


async def test_wait_sent_times_out_with_what_happened(api: FakeBotAPI) -> None:
    with pytest.raises(TimeoutError, match="calls so far"):
        await api.wait_sent(1, timeout=0.1)


# -- the HTML parser on its own ------------------------------------------------------------


def test_pre_takes_the_language_of_its_code() -> None:
    text, entities = parse_html('<pre><code class="language-python">x = 1</code></pre>')
    assert text == "x = 1"
    assert entities == [{"type": "pre", "offset": 0, "length": 5, "language": "python"}]


def test_expandable_blockquote_and_spoiler() -> None:
    _, entities = parse_html(
        '<blockquote expandable>q</blockquote><span class="tg-spoiler">s</span>'
    )
    assert [e["type"] for e in entities] == ["expandable_blockquote", "spoiler"]


def test_error_offsets_are_utf8_bytes() -> None:
    with pytest.raises(HtmlError, match="byte offset 3"):
        parse_html("é <x>")


def test_trim_moves_and_clips_entities() -> None:
    text, entities = trim("  ab  ", [{"type": "bold", "offset": 1, "length": 4}])
    assert text == "ab"
    assert entities == [{"type": "bold", "offset": 0, "length": 2}]


async def test_a_press_carries_the_message_as_edited_and_only_its_buttons(
    bot: Bot, api: FakeBotAPI
) -> None:
    two = InlineKeyboardMarkup([[InlineKeyboardButton("Yes", callback_data="yes")],
                                [InlineKeyboardButton("No", callback_data="no")]])  # fmt: skip
    message = await bot.send_message(USER, "pick", reply_markup=two)
    await bot.edit_message_text("picked?", chat_id=USER, message_id=message.message_id)
    with pytest.raises(LookupError):  # the edit dropped the keyboard: nothing to press
        api.push_callback(USER, USER, "yes", message.message_id)
    again = await bot.send_message(USER, "pick again", reply_markup=two)
    api.push_callback(USER, USER, "no", again.message_id)
    [update] = await bot.get_updates()
    query = update.callback_query
    assert query is not None and isinstance(query.message, Message)
    assert query.message.text == "pick again" and query.message.reply_markup == two
