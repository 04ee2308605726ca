"""The webhook: ``webhook.Listener`` on its own (a real PTB ``Application`` against the fake
Bot API, the listener on loopback, updates posted to it as Telegram would), then the
adapter in webhook mode (unusable updates: test_updates.py)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from telegram import Bot, Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler

from adapters.skips import Skips
from adapters.telegram.webhook import SECRET_HEADER, Listener
from tests.adapters.telegram.test_client import Inbox, make
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

USER = 205118349
JSON = {"Content-Type": "application/json"}
SECRET = "s3cret-Token"
SIGNED = JSON | {SECRET_HEADER: SECRET}

App = Application[Any, Any, Any, Any, Any, Any]


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI(username="MnemoHomeBot") as server:
        yield server


@pytest.fixture
async def handled(api: FakeBotAPI) -> AsyncIterator[tuple[App, asyncio.Queue[Update]]]:
    """A started Application whose one handler queues every update it is given."""
    queue: asyncio.Queue[Update] = asyncio.Queue()

    async def keep(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await queue.put(update)

    app = ApplicationBuilder().token(DEFAULT_TOKEN).base_url(api.base_url).updater(None).build()
    await app.initialize()
    app.add_handler(TypeHandler(Update, keep))
    await app.start()
    yield app, queue
    await app.stop()
    await app.shutdown()


def listener(app: App, *, secret: str = SECRET) -> Listener:
    return Listener(
        app,
        skips=Skips("telegram", logging.getLogger(__name__)),
        listen="127.0.0.1",
        port=0,
        path="/hook",
        url="https://bot.example.org/hook",
        secret=secret,
        max_connections=7,
        allowed_updates=["message"],
    )


async def post(port: int, body: str | bytes, headers: dict[str, str]) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"http://127.0.0.1:{port}/hook", data=body, headers=headers) as response,
    ):
        return response.status


@pytest.mark.parametrize("secret", ["", "has space", "semi;colon", "é" * 3, "x" * 257])
def test_a_listener_needs_a_secret_telegram_accepts(
    handled: tuple[App, asyncio.Queue[Update]], secret: str
) -> None:
    app, _ = handled
    with pytest.raises(ValueError, match="secret token of 1-256 characters"):
        listener(app, secret=secret)
    assert listener(app, secret="A-z_09" * 40).refused == {"secret": 0, "content_type": 0,
                                                          "body": 0}  # fmt: skip


async def test_start_listens_then_sets_the_webhook_and_close_stops_listening(
    api: FakeBotAPI, handled: tuple[App, asyncio.Queue[Update]]
) -> None:
    app, queue = handled
    hook = listener(app)
    with pytest.raises(RuntimeError, match="not running"):
        hook.port  # noqa: B018 -- the property raises
    await hook.start()
    try:
        [call] = api.calls_of("setWebhook")  # what PTB put on the wire, as the fake read it
        assert call.params == {
            "url": "https://bot.example.org/hook",
            "secret_token": SECRET,
            "allowed_updates": ["message"],
            "max_connections": 7,
            "drop_pending_updates": False,
        }
        assert api.webhook["url"] == "https://bot.example.org/hook"
        update = api.push_text(USER, USER, "hello")
        port = hook.port
        assert await post(port, json.dumps(update), SIGNED) == 200
        assert (await asyncio.wait_for(queue.get(), 3)).update_id == update["update_id"]
    finally:
        await hook.close()
    await hook.close()  # idempotent
    with pytest.raises(RuntimeError, match="not running"):
        hook.port  # noqa: B018
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(port, json.dumps(update), SIGNED)
    assert api.webhook["url"]  # closing one listener leaves the webhook to the other replicas
    assert not api.calls_of("deleteWebhook")


async def test_only_json_with_the_secret_reaches_the_application(
    api: FakeBotAPI, handled: tuple[App, asyncio.Queue[Update]], caplog: pytest.LogCaptureFixture
) -> None:
    """Every post without the right secret is 403 (checked first: before the content type),
    handed on to nothing, counted, and logged without the header it carried."""
    app, queue = handled
    hook = listener(app)
    await hook.start()
    wrong = ["s3cret-Tokem", "s3cret-Token-and-more", "s3cret", "pasted-SECRET-guess-42"]
    try:
        body = json.dumps(api.push_text(USER, USER, "hello"))
        assert await post(hook.port, body, JSON) == 403  # no secret
        for guess in wrong:
            assert await post(hook.port, body, JSON | {SECRET_HEADER: guess}) == 403
        assert await post(hook.port, body, {SECRET_HEADER: "é"} | JSON) == 403  # no crash
        assert await post(hook.port, body, {"Content-Type": "text/plain"}) == 403
        assert await post(hook.port, body, SIGNED | {"Content-Type": "text/plain"}) == 403
        assert await post(hook.port, "{", SIGNED) == 400
        assert await post(hook.port, b"\xff\xfe{}", SIGNED) == 400  # not UTF-8
        assert await post(hook.port, "[" * 200_000, SIGNED) == 400  # deeper than json can go
        assert queue.empty()
        assert hook.refused == {"secret": 7, "content_type": 1, "body": 3}
        assert await post(hook.port, body, SIGNED) == 200
        update = await asyncio.wait_for(queue.get(), 3)
        assert update.message is not None and update.message.text == "hello"
    finally:
        await hook.close()
    refusals = [r.getMessage() for r in caplog.records if "refused a post" in r.getMessage()]
    assert refusals == [
        "telegram: the webhook refused a post from 127.0.0.1 (a missing or wrong secret"
        " token): 1 so far",
        "telegram: the webhook refused a post from 127.0.0.1 (not application/json): 1 so far",
        "telegram: the webhook refused a post from 127.0.0.1 (a body that is not JSON): 1 so far",
    ]
    assert not [guess for guess in [*wrong, SECRET] if guess in caplog.text]


async def test_a_flood_of_refused_posts_is_logged_at_1_10_100(
    handled: tuple[App, asyncio.Queue[Update]], caplog: pytest.LogCaptureFixture
) -> None:
    app, queue = handled
    hook = listener(app)
    await hook.start()
    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(120):
                url = f"http://127.0.0.1:{hook.port}/hook"
                async with session.post(url, data="{}", headers=JSON) as response:
                    assert response.status == 403
    finally:
        await hook.close()
    assert hook.refused["secret"] == 120 and queue.empty()
    counts = [r.getMessage().rsplit(": ", 1)[1] for r in caplog.records if "refused" in r.message]
    assert counts == ["1 so far", "10 so far", "100 so far"]


async def test_an_update_it_cannot_read_is_acknowledged_and_counted(
    handled: tuple[App, asyncio.Queue[Update]],
) -> None:
    app, queue = handled
    hook = listener(app)
    await hook.start()
    try:
        bad = {"update_id": 9, "message": {"message_id": 1, "date": "yesterday", "chat": "x"}}
        assert await post(hook.port, json.dumps(bad), SIGNED) == 200  # else it comes back forever
        assert queue.empty()
        assert hook._skips.counts["unparsable"] == 1
    finally:
        await hook.close()


# -- the adapter in webhook mode -----------------------------------------------------------


@pytest.fixture
async def inbox() -> Inbox:
    return Inbox()


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
        assert adapter.webhook_refused == {"secret": 1, "content_type": 0, "body": 1}
    finally:
        await adapter.stop()
    assert not adapter.connected


@pytest.mark.parametrize("secret", [None, "", "not a valid secret"])
def test_webhook_mode_refuses_to_be_made_without_a_usable_secret(
    api: FakeBotAPI, secret: str | None
) -> None:
    with pytest.raises(ValueError, match="webhook mode needs a webhook secret"):
        make(api, mode="webhook", webhook_url="https://bot.example.org/tg", webhook_secret=secret)
    make(api, mode="polling", webhook_secret=secret)  # polling needs none


async def test_polling_deletes_a_webhook_before_its_first_getupdates(
    api: FakeBotAPI, inbox: Inbox
) -> None:
    """Telegram answers getUpdates 409 while a webhook is set (the fake does too): a replica
    started with polling (``mnemo run --polling``) deletes it first."""
    async with Bot(DEFAULT_TOKEN, base_url=api.base_url) as other_replica:
        await other_replica.set_webhook("https://bot.example.org/tg", secret_token=SECRET)
    adapter = make(api)  # polling
    async with adapter:
        await adapter.start(inbox)
        api.push_text(USER, USER, "polled")
        assert (await inbox.next()).text == "polled"
    methods = [c.method for c in api.calls if c.method in ("deleteWebhook", "getUpdates")]
    assert methods[0] == "deleteWebhook" and "getUpdates" in methods
    assert api.webhook == {}
    assert not [c for c in api.calls_of("getUpdates") if c.status == 409]


async def test_two_replicas_in_webhook_mode_each_accept_any_update(api: FakeBotAPI) -> None:
    """Stateless listeners: whichever replica a load balancer picks takes the update. Both
    set the same webhook; one stopping leaves it set for the other."""
    inboxes = [Inbox(), Inbox()]
    replicas = [
        make(api, mode="webhook", webhook_port=0, webhook_url="https://bot.example.org/tg",
             webhook_secret=SECRET)
        for _ in inboxes
    ]  # fmt: skip
    for replica, inbox in zip(replicas, inboxes, strict=True):
        await replica.start(inbox)
    try:
        first, second = api.calls_of("setWebhook")
        assert first.params == second.params and first.params["secret_token"] == SECRET
        chats = [USER, USER + 1, USER + 2, USER + 3]
        async with aiohttp.ClientSession() as session:
            for n, chat in enumerate(chats):  # round robin
                url = f"http://127.0.0.1:{replicas[n % 2].webhook_port}/telegram"
                update = api.push_text(chat, chat, f"to replica {n % 2}")
                async with session.post(url, data=json.dumps(update), headers=SIGNED) as answer:
                    assert answer.status == 200
            for n, inbox in enumerate(inboxes):
                got = [await inbox.next(), await inbox.next()]
                assert [m.chat_id for m in got] == [str(c) for c in chats[n::2]]
                assert {m.text for m in got} == {f"to replica {n}"}
            await replicas[0].stop()
            assert api.webhook["url"] == "https://bot.example.org/tg"
            update = api.push_text(USER, USER, "after one stopped")
            url = f"http://127.0.0.1:{replicas[1].webhook_port}/telegram"
            async with session.post(url, data=json.dumps(update), headers=SIGNED) as answer:
                assert answer.status == 200
        assert (await inboxes[1].next()).text == "after one stopped"
    finally:
        for replica in replicas:
            await replica.stop()


async def test_leaving_async_with_closes_the_webhook_listener(
    api: FakeBotAPI, inbox: Inbox
) -> None:
    adapter = make(
        api, mode="webhook", webhook_port=0, webhook_url="https://bot.example.org/tg",
        webhook_secret=SECRET,
    )  # fmt: skip
    async with adapter:
        await adapter.start(inbox)
        url = f"http://127.0.0.1:{adapter.webhook_port}/telegram"
    assert not adapter.connected
    with pytest.raises(RuntimeError, match="not running"):
        adapter.webhook_port  # noqa: B018 -- the property raises
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.post(url, json={"update_id": 1})
