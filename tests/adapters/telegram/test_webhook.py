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
from telegram import Update
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler

from adapters.skips import Skips
from adapters.telegram.webhook import SECRET_HEADER, Listener
from tests.adapters.telegram.test_client import Inbox, make
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

USER = 205118349
JSON = {"Content-Type": "application/json"}

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


def listener(app: App, *, secret: str | None = None) -> Listener:
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


async def post(port: int, body: str, headers: dict[str, str]) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"http://127.0.0.1:{port}/hook", data=body, headers=headers) as response,
    ):
        return response.status


async def test_start_listens_then_sets_the_webhook_and_close_stops_listening(
    api: FakeBotAPI, handled: tuple[App, asyncio.Queue[Update]]
) -> None:
    app, queue = handled
    hook = listener(app)
    with pytest.raises(RuntimeError, match="not running"):
        hook.port  # noqa: B018 -- the property raises
    await hook.start()
    try:
        webhook = api.webhook
        assert (webhook["url"], webhook["secret_token"]) == ("https://bot.example.org/hook", None)
        assert int(webhook["max_connections"]) == 7
        assert webhook["allowed_updates"] == ["message"]
        update = api.push_text(USER, USER, "hello")
        port = hook.port
        assert await post(port, json.dumps(update), JSON) == 200  # no secret: none asked
        assert (await asyncio.wait_for(queue.get(), 3)).update_id == update["update_id"]
    finally:
        await hook.close()
    await hook.close()  # idempotent
    with pytest.raises(RuntimeError, match="not running"):
        hook.port  # noqa: B018
    with pytest.raises(aiohttp.ClientConnectionError):
        await post(port, json.dumps(update), JSON)


async def test_only_json_with_the_secret_reaches_the_application(
    api: FakeBotAPI, handled: tuple[App, asyncio.Queue[Update]]
) -> None:
    app, queue = handled
    hook = listener(app, secret="s3cret-Token")
    await hook.start()
    try:
        body = json.dumps(api.push_text(USER, USER, "hello"))
        right = JSON | {SECRET_HEADER: "s3cret-Token"}
        assert await post(hook.port, body, right | {"Content-Type": "text/plain"}) == 403
        assert await post(hook.port, body, JSON) == 403  # no secret
        assert await post(hook.port, body, JSON | {SECRET_HEADER: "s3cret-Tokem"}) == 403
        assert await post(hook.port, "{", right) == 400
        assert queue.empty()
        assert await post(hook.port, body, right) == 200
        update = await asyncio.wait_for(queue.get(), 3)
        assert update.message is not None and update.message.text == "hello"
    finally:
        await hook.close()


async def test_an_update_it_cannot_read_is_acknowledged_and_counted(
    handled: tuple[App, asyncio.Queue[Update]],
) -> None:
    app, queue = handled
    hook = listener(app)
    await hook.start()
    try:
        bad = {"update_id": 9, "message": {"message_id": 1, "date": "yesterday", "chat": "x"}}
        assert await post(hook.port, json.dumps(bad), JSON) == 200  # else it comes back forever
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
    finally:
        await adapter.stop()
    assert not adapter.connected


async def test_leaving_async_with_closes_the_webhook_listener(
    api: FakeBotAPI, inbox: Inbox
) -> None:
    adapter = make(api, mode="webhook", webhook_port=0, webhook_url="https://bot.example.org/tg")
    async with adapter:
        await adapter.start(inbox)
        url = f"http://127.0.0.1:{adapter.webhook_port}/telegram"
    assert not adapter.connected
    with pytest.raises(RuntimeError, match="not running"):
        adapter.webhook_port  # noqa: B018 -- the property raises
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectionError):
            await session.post(url, json={"update_id": 1})
