"""The real PTB adapter against the fake Bot API over loopback."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Literal, TypedDict, Unpack

import pytest

from adapters.base import (
    Adapter,
    BadRequest,
    BotCommand,
    Forbidden,
    NotFound,
    Unavailable,
)
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


class Options(TypedDict, total=False):
    """``TelegramAdapter``'s keywords but ``base_url`` (``make`` points it at the fake)."""

    base_file_url: str | None
    mode: Literal["polling", "webhook"]
    webhook_listen: str
    webhook_port: int
    webhook_url: str | None
    webhook_path: str
    webhook_secret: str | None
    webhook_max_connections: int
    poll_timeout: float
    request_timeout: float
    backoff_base: float
    backoff_cap: float
    allowed_updates: Sequence[str]


def make(api: FakeBotAPI, **options: Unpack[Options]) -> TelegramAdapter:
    options.setdefault("poll_timeout", 1.0)
    options.setdefault("request_timeout", 2.0)
    return TelegramAdapter(DEFAULT_TOKEN, base_url=api.base_url, **options)


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
    markup = api.sent[0].reply_markup
    assert markup is not None
    rows = markup["inline_keyboard"]
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


# -- typing and the command menu -----------------------------------------------------------


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


async def test_leaving_async_with_stops_it_as_stop_does(api: FakeBotAPI, inbox: Inbox) -> None:
    adapter = make(api, poll_timeout=30.0)
    async with adapter as entered:
        assert entered is adapter and not adapter.connected  # entering does not start it
        await adapter.start(inbox)
        api.push_text(USER, USER, "inside")
        assert (await inbox.next()).text == "inside"
        await eventually(lambda: len(api.calls_of("getUpdates")) >= 2)  # a long poll waits
        started = asyncio.get_running_loop().time()
    assert asyncio.get_running_loop().time() - started < 1.0  # the long poll was cancelled
    assert not adapter.connected and api.pending_updates == []  # what the sink had: confirmed
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("telegram:")]
    with pytest.raises(Unavailable, match="not running"):
        await adapter.send(OutboundMessage("telegram", str(USER), "x"))

    async def failing_block() -> None:
        async with adapter:
            await adapter.start(inbox)
            raise RuntimeError("the block failed")

    with pytest.raises(RuntimeError, match="the block failed"):  # not swallowed
        await failing_block()
    assert not adapter.connected
    async with adapter:  # stopped inside the block too: idempotent
        await adapter.start(inbox)
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
