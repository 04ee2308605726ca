"""The real PTB adapter against the fake Bot API over loopback."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
import random
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest

from adapters.base import (
    Adapter,
    BadRequest,
    BotCommand,
    Forbidden,
    NotFound,
    RateLimited,
    Unavailable,
)
from adapters.chunking import utf16_len
from adapters.messages import InboundMessage, OutboundMessage, Pressed
from adapters.telegram import TelegramAdapter
from adapters.telegram.polling import backoff_delay
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

USER = 205118349
GROUP = -1001789012345


class Inbox:
    """A sink that keeps what it is given."""

    def __init__(self, fail_first: bool = False) -> None:
        self.queue: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self.fail_first = fail_first

    async def __call__(self, message: InboundMessage) -> None:
        if self.fail_first:
            self.fail_first = False
            raise RuntimeError("the sink broke once")
        await self.queue.put(message)

    async def next(self, seconds: float = 3.0) -> InboundMessage:
        return await asyncio.wait_for(self.queue.get(), seconds)


async def eventually(condition: Callable[[], bool], seconds: float = 3.0) -> None:
    """Poll a condition on the adapter's state (it has no event to wait on)."""
    async with asyncio.timeout(seconds):
        while not condition():  # noqa: ASYNC110 -- state owned by the adapter, polled briefly
            await asyncio.sleep(0.02)


def make(api: FakeBotAPI, **options: object) -> TelegramAdapter:
    settings: dict[str, object] = {"poll_timeout": 1.0, "request_timeout": 2.0}
    settings.update(options)
    return TelegramAdapter(DEFAULT_TOKEN, base_url=api.base_url, **settings)  # type: ignore[arg-type]


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI(username="MnemoHomeBot") as server:
        yield server


@pytest.fixture
async def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def adapter(api: FakeBotAPI, inbox: Inbox) -> AsyncIterator[TelegramAdapter]:
    running = make(api)
    await running.start(inbox)
    yield running
    await running.stop()


def reply_with_fence() -> str:
    prose = "The engine weaves algebraic patterns. " * 25
    code = "\n".join(f"result_{i} = bernoulli({i})  # step {i}" for i in range(130))
    return f"{prose}\n\n```python\n{code}\n```\n\nThat is **all**."


# -- receiving -----------------------------------------------------------------------------


async def test_it_satisfies_the_adapter_protocol(adapter: TelegramAdapter) -> None:
    contract: Adapter = adapter
    assert contract.platform == "telegram" and contract.connected


async def test_a_dm_reaches_the_sink_normalised(
    adapter: TelegramAdapter, api: FakeBotAPI, inbox: Inbox
) -> None:
    pushed = api.push_text(USER, api.user(USER, "Ada", "Lovelace", username="ada_l"), "hi there")
    message = await inbox.next()
    assert (message.platform, message.chat_id, message.chat_type) == ("telegram", str(USER), "dm")
    assert message.text == "hi there" and message.update_id == str(pushed["update_id"])
    assert message.sender.display_name == "Ada Lovelace" and message.sender.username == "ada_l"
    assert adapter.bot_username == "MnemoHomeBot"


async def test_group_command_for_us_arrives_stripped(
    adapter: TelegramAdapter, api: FakeBotAPI, inbox: Inbox
) -> None:
    api.push_text(GROUP, USER, "/start@SomeOtherBot", chat_type="supergroup")
    api.push_text(GROUP, USER, "/memory@MnemoHomeBot notes", chat_type="supergroup")
    message = await inbox.next()
    assert (message.text, message.is_command, message.chat_type) == ("/memory notes", True, "group")
    assert inbox.queue.empty()  # the other bot's command never arrived


async def test_a_button_press_is_answered_and_delivered(
    adapter: TelegramAdapter, api: FakeBotAPI, inbox: Inbox
) -> None:
    [sent_id] = await adapter.send(
        OutboundMessage("telegram", str(USER), "Forget?", buttons=(("Yes", "forget:yes"),))
    )
    assert api.sent[0].buttons == [("Yes", "forget:yes")]
    api.push_callback(USER, USER, "forget:yes", int(sent_id))
    message = await inbox.next()
    assert message.is_callback and message.text == "forget:yes"
    assert message.reply_to_message_id == sent_id
    assert list(api.answered_callbacks) == [message.message_id]


async def test_an_edit_replaces_the_text_and_the_buttons_a_press_then_sees(
    adapter: TelegramAdapter, api: FakeBotAPI, inbox: Inbox
) -> None:
    choices = (("Yes 1", "y1"), ("No 1", "n1"), ("Yes 2", "y2"), ("No 2", "n2"))
    [sent_id] = await adapter.send(OutboundMessage("telegram", str(USER), "Two?", buttons=choices))
    rows = api.sent[0].reply_markup["inline_keyboard"]  # type: ignore[index]
    assert [[b["text"] for b in row] for row in rows] == [["Yes 1", "No 1"], ["Yes 2", "No 2"]]
    await adapter.edit(str(USER), sent_id, "1: yes. Two?", buttons=choices[2:])
    await adapter.edit(str(USER), sent_id, "1: yes. Two?", buttons=choices[2:])  # unchanged: ok
    api.push_callback(USER, USER, "y2", int(sent_id))
    press = await inbox.next()
    assert press.pressed == Pressed("1: yes. Two?", choices[2:])
    await adapter.edit(str(USER), sent_id, "1: yes. 2: yes.")
    assert api.message(USER, int(sent_id)).get("reply_markup") is None  # no buttons left
    assert [e.text for e in api.edits] == ["1: yes. Two?", "1: yes. 2: yes."]
    with pytest.raises(NotFound):
        await adapter.edit(str(USER), "999", "gone")


async def test_a_failing_sink_does_not_stop_polling(
    api: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox(fail_first=True)
    adapter = make(api)
    await adapter.start(inbox)
    try:
        api.push_text(USER, USER, "lost to the broken sink")
        api.push_text(USER, USER, "still heard")
        assert (await inbox.next()).text == "still heard"
        assert any("handling update" in r.getMessage() for r in caplog.records)
    finally:
        await adapter.stop()


async def test_a_redelivered_update_reaches_the_sink_again(api: FakeBotAPI, inbox: Inbox) -> None:
    first = make(api)
    await first.start(inbox)
    pushed = api.push_text(USER, USER, "remember the milk")
    assert (await inbox.next()).update_id == str(pushed["update_id"])
    await first.stop()
    assert api.pending_updates == []  # stop confirmed what the sink had
    api.redeliver(pushed)  # as if the confirmation had been lost in a crash
    second = make(api)
    await second.start(inbox)
    try:
        again = await inbox.next()
        assert again.update_id == str(pushed["update_id"]) and again.text == "remember the milk"
    finally:
        await second.stop()


async def test_connected_follows_getupdates_and_backs_off(api: FakeBotAPI, inbox: Inbox) -> None:
    adapter = make(api, poll_timeout=0.2, backoff_base=0.05, backoff_cap=0.2)
    await adapter.start(inbox)
    try:
        assert adapter.connected
        api.fail("getUpdates", 502, times=3, after=1)
        await eventually(lambda: not adapter.connected)
        await eventually(lambda: adapter.poll_failures == 3)
        api.push_text(USER, USER, "back")
        assert (await inbox.next()).text == "back"
        assert adapter.connected and adapter.poll_failures == 0
        failed = [c.time for c in api.calls_of("getUpdates") if c.status == 502]
        gaps = [b - a for a, b in itertools.pairwise(failed)]
        # steps of 0.05 then 0.1 s, each waited between half and all of it
        assert len(gaps) == 2 and gaps[0] >= 0.025 and gaps[1] >= 0.05
    finally:
        await adapter.stop()


def test_backoff_grows_is_jittered_and_capped() -> None:
    rng = random.Random(7)
    samples = [
        [backoff_delay(n, base=1.0, cap=30.0, rng=rng) for _ in range(50)] for n in (1, 3, 9)
    ]
    assert all(0.5 <= s <= 1.0 for s in samples[0])
    assert all(2.0 <= s <= 4.0 for s in samples[1])
    assert all(15.0 <= s <= 30.0 for s in samples[2])  # 2**8 capped at 30
    assert all(len(set(group)) > 40 for group in samples)  # jittered, not a fixed schedule


# -- sending -------------------------------------------------------------------------------


async def test_a_long_reply_arrives_as_two_messages_with_fences_intact(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    text = reply_with_fence()
    assert len(text) > 5000
    ids = await adapter.send(
        OutboundMessage("telegram", str(USER), text, reply_to_message_id="1", thread_id=None)
    )
    sent = await api.wait_sent(2)
    assert ids == [str(s.message_id) for s in sent] and len(ids) == 2
    assert all(s.parse_mode == "HTML" and utf16_len(s.text) <= 4096 for s in sent)
    assert all(s.source.count("<pre>") == s.source.count("</pre>") == 1 for s in sent)
    assert '<code class="language-python">' in sent[1].source  # reopened with its language
    assert sum(s.text.count("bernoulli(") for s in sent) == 130
    assert sent[0].params["reply_parameters"]["message_id"] == 1  # allowed without the original
    assert "reply_parameters" not in sent[1].params


async def test_thread_and_reply_go_with_the_first_chunk(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    pushed = api.push_text(GROUP, USER, "q", chat_type="supergroup", thread_id=877)
    message_id = str(pushed["message"]["message_id"])
    await adapter.send(
        OutboundMessage(
            "telegram", str(GROUP), "answer", thread_id="877", reply_to_message_id=message_id
        )
    )
    [sent] = await api.wait_sent(1)
    assert (sent.chat_id, sent.thread_id, sent.reply_to_message_id) == (GROUP, 877, int(message_id))


async def test_ids_that_are_not_telegram_ids(adapter: TelegramAdapter, api: FakeBotAPI) -> None:
    query_id = "AgADq-881234567890123456"  # a callback's message_id is its query id
    await adapter.send(OutboundMessage("telegram", str(USER), "x", reply_to_message_id=query_id))
    [sent] = await api.wait_sent(1)
    assert "reply_parameters" not in sent.params
    with pytest.raises(BadRequest, match="thread id"):
        await adapter.send(OutboundMessage("telegram", str(GROUP), "x", thread_id="general"))


async def test_an_entity_error_falls_back_to_plain_text(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    api.fail("sendMessage", 400, 'Bad Request: can\'t parse entities: Unsupported start tag "x"')
    ids = await adapter.send(OutboundMessage("telegram", str(USER), "Some **bold** words"))
    [sent] = await api.wait_sent(1)
    assert ids == [str(sent.message_id)]
    assert (sent.parse_mode, sent.text) == (None, "Some **bold** words")  # nothing lost
    assert [c.status for c in api.calls_of("sendMessage")] == [400, 200]


async def test_plain_messages_are_sent_without_parse_mode(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    await adapter.send(OutboundMessage("telegram", str(USER), "a <b> **c**", markdown=False))
    [sent] = await api.wait_sent(1)
    assert (sent.parse_mode, sent.text) == (None, "a <b> **c**")


async def test_flood_control_is_rate_limited_with_what_was_sent(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    message = OutboundMessage("telegram", str(USER), reply_with_fence())
    api.flood(USER, retry_after=5, after=1)
    with pytest.raises(RateLimited) as caught:
        await adapter.send(message)
    assert caught.value.retry_after == 5.0
    assert caught.value.sent == (str(api.sent[0].message_id),)
    rest = await adapter.send(
        OutboundMessage("telegram", str(USER), message.text, skip_chunks=len(caught.value.sent))
    )
    assert len(rest) == 1 and len(api.sent) == 2  # the retry sent only the missing chunk
    assert sum(s.text.count("bernoulli(") for s in api.sent) == 130


async def test_each_chunk_is_reported_once_telegram_confirmed_it(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    """The outbox records progress from these reports: each comes after its sendMessage was
    answered and before the next one is made (a fourth, the file, counts as one chunk)."""
    text = reply_with_fence() + "\n\n" + reply_with_fence()
    message = OutboundMessage("telegram", str(USER), text, max_chunks=3)
    reports: list[tuple[int, int, int]] = []

    async def delivered(done: int, total: int) -> None:
        reports.append((done, total, len(api.calls_of("sendMessage"))))

    await adapter.send(message, delivered=delivered)
    assert reports == [(1, 3, 1), (2, 3, 2), (3, 3, 2)]  # the third is the file
    reports.clear()
    await adapter.send(dataclasses.replace(message, skip_chunks=2), delivered=delivered)
    assert reports == [(3, 3, 2)]


async def test_past_max_chunks_the_whole_text_follows_as_a_file_counted_as_one_chunk(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    text = reply_with_fence() + "\n\n" + reply_with_fence()
    message = OutboundMessage("telegram", str(USER), text, max_chunks=3, buttons=(("Ok", "/ok"),))
    api.fail("sendDocument", 429, "Too Many Requests: retry after 5", retry_after=5)
    with pytest.raises(RateLimited) as caught:
        await adapter.send(message)
    assert len(caught.value.sent) == 2 and len(api.sent) == 2  # two chunks, not the file
    rest = await adapter.send(dataclasses.replace(message, skip_chunks=2))
    assert len(rest) == 1 and len(api.sent) == 3  # the retry sent only the file
    last = api.sent[-1]
    assert last.document == ("reply.md", text.encode()) and last.buttons == [("Ok", "/ok")]
    assert last.text == f"The whole answer ({len(text):,} characters) is in this file."


async def test_blocked_user_is_forbidden(adapter: TelegramAdapter, api: FakeBotAPI) -> None:
    api.blocked(USER)
    with pytest.raises(Forbidden, match="blocked") as caught:
        await adapter.send(OutboundMessage("telegram", str(USER), "hello"))
    assert caught.value.sent == ()


async def test_missing_chats_and_threads_are_not_found(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    api.add_chat(GROUP, is_forum=True, topics=[877])
    with pytest.raises(NotFound):
        await adapter.send(OutboundMessage("telegram", "-100999", "x"))
    with pytest.raises(NotFound):
        await adapter.send(OutboundMessage("telegram", str(GROUP), "x", thread_id="5"))
    await adapter.send(  # a button Telegram cannot carry is left out, not the message
        OutboundMessage("telegram", str(GROUP), "x", buttons=(("Too long", "d" * 65), ("Ok", "o")))
    )
    assert api.sent[-1].buttons == [("Ok", "o")]


async def test_server_errors_and_timeouts_are_unavailable(api: FakeBotAPI, inbox: Inbox) -> None:
    adapter = make(api, request_timeout=0.3)
    await adapter.start(inbox)
    try:
        api.fail("sendMessage", 502)
        with pytest.raises(Unavailable):
            await adapter.send(OutboundMessage("telegram", str(USER), "x"))
        api.hang("sendMessage", 3)
        with pytest.raises(Unavailable):
            await adapter.send(OutboundMessage("telegram", str(USER), "x"))
        assert await adapter.send(OutboundMessage("telegram", str(USER), "x"))
    finally:
        await adapter.stop()


async def test_typing_and_commands_reach_the_server(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    await adapter.typing(str(GROUP), "877")
    [call] = await api.wait_calls("sendChatAction")
    assert call.params == {"chat_id": GROUP, "action": "typing", "message_thread_id": 877}
    menu = [
        BotCommand("memory", "What I remember about you"),
        BotCommand("new", "Start over", args=False),
        BotCommand("admin", "Admins only", admin=True),
    ]
    api.push_text(USER, USER, "/start")  # the admin has a private chat with the bot
    await adapter.set_commands(menu, admins=[str(USER)])
    everyone = [
        {"command": "memory", "description": "What I remember about you"},
        {"command": "new", "description": "Start over"},
    ]
    assert api.commands[('{"type": "default"}', "")] == everyone
    admin_scope = json.dumps({"chat_id": USER, "type": "chat"}, sort_keys=True)
    assert api.commands[(admin_scope, "")] == [
        *everyone,
        {"command": "admin", "description": "Admins only"},
    ]
    # names Telegram cannot take are respelled (a skill called deploy-app is /deploy_app)
    # or, when still unusable or taken, left out of the menu
    await adapter.set_commands(
        [BotCommand("deploy-app", "x"), BotCommand("deploy_app", "dup"), BotCommand("a" * 40, "y")]
    )
    assert api.commands[('{"type": "default"}', "")] == [
        {"command": "deploy_app", "description": "x"}
    ]
    api.fail("setMyCommands", 400, "Bad Request: BOT_COMMAND_INVALID")
    with pytest.raises(BadRequest):
        await adapter.set_commands([BotCommand("memory", "x")])
    api.blocked(USER)
    with pytest.raises(Forbidden):
        await adapter.typing(str(USER))


# -- webhook -------------------------------------------------------------------------------


async def test_webhook_mode_delivers_posted_updates(api: FakeBotAPI, inbox: Inbox) -> None:
    adapter = make(
        api,
        mode="webhook",
        webhook_port=0,
        webhook_url="https://bot.example.org/tg-hook",
        webhook_path="/tg-hook",
        webhook_secret="s3cret-Token",
    )
    await adapter.start(inbox)
    try:
        assert adapter.connected and not api.calls_of("getUpdates")
        assert api.webhook["url"] == "https://bot.example.org/tg-hook"
        assert api.webhook["secret_token"] == "s3cret-Token"
        update = api.push_text(USER, USER, "via webhook")
        url = f"http://127.0.0.1:{adapter.webhook_port}/tg-hook"
        async with aiohttp.ClientSession() as session:
            for secret, expected in (("wrong", 403), ("s3cret-Token", 200)):
                async with session.post(
                    url,
                    data=json.dumps(update),
                    headers={
                        "Content-Type": "application/json",
                        "X-Telegram-Bot-Api-Secret-Token": secret,
                    },
                ) as response:
                    assert response.status == expected
            async with session.post(
                url,
                data="not json",
                headers={
                    "Content-Type": "application/json",
                    "X-Telegram-Bot-Api-Secret-Token": "s3cret-Token",
                },
            ) as response:
                assert response.status == 400
        message = await inbox.next()
        assert message.text == "via webhook" and message.update_id == str(update["update_id"])
        assert inbox.queue.empty()  # the wrong secret delivered nothing
    finally:
        await adapter.stop()
    assert not adapter.connected


# -- lifecycle and secrets -----------------------------------------------------------------


async def test_stop_is_clean_and_idempotent(api: FakeBotAPI, inbox: Inbox) -> None:
    adapter = make(api, poll_timeout=30.0)
    await adapter.start(inbox)
    try:
        await eventually(lambda: bool(api.calls_of("getUpdates")))  # a long poll is in flight
    finally:
        started = asyncio.get_running_loop().time()
        await adapter.stop()
    assert asyncio.get_running_loop().time() - started < 1.0  # the long poll was cancelled
    await asyncio.gather(adapter.stop(), adapter.stop())
    assert not adapter.connected
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("telegram:")]
    with pytest.raises(Unavailable, match="not running"):
        await adapter.send(OutboundMessage("telegram", str(USER), "x"))
    await adapter.start(inbox)  # and it can start again
    api.push_text(USER, USER, "after restart")
    assert (await inbox.next()).text == "after restart"
    await adapter.stop()


async def test_a_bad_token_fails_start_without_revealing_it(
    api: FakeBotAPI, inbox: Inbox, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = "987654:TotallySecretTokenValue_xyz"
    adapter = TelegramAdapter(token, base_url=api.base_url)
    with pytest.raises(Forbidden, match="token was rejected") as caught:
        await adapter.start(inbox)
    assert token not in str(caught.value) and token not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert not adapter.connected
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert logged and token not in logged and "TotallySecret" not in logged


async def test_the_token_never_reaches_the_logs(
    api: FakeBotAPI, inbox: Inbox, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    adapter = make(api)
    await adapter.start(inbox)
    api.push_text(USER, USER, "hi")
    await inbox.next()
    await adapter.send(OutboundMessage("telegram", str(USER), "hello"))
    await adapter.stop()
    messages = [r.getMessage() for r in caplog.records]
    httpx_lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert any("/bot<token>/sendMessage" in line for line in httpx_lines)  # httpx logs URLs
    assert not [m for m in messages if DEFAULT_TOKEN in m or DEFAULT_TOKEN.split(":")[1] in m]


async def test_unreachable_api_fails_start_as_unavailable(inbox: Inbox) -> None:
    adapter = TelegramAdapter(DEFAULT_TOKEN, base_url="http://127.0.0.1:9/bot", request_timeout=0.5)
    with pytest.raises(Unavailable):
        await adapter.start(inbox)
    assert not adapter.connected
