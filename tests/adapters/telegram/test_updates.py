"""One bad update never stops Telegram: the real adapter polling the fake Bot API, which
serves malformed updates exactly as given (``push_raw``), and its webhook taking them."""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from adapters.telegram import TelegramAdapter
from tests.adapters.telegram.test_client import Inbox, eventually, make
from tests.fakes.telegram_server import OMIT, FakeBotAPI

USER = 205118349
SECRET = "TOPSECRET-what-someone-wrote"  # in every bad update: it must reach no log line
_IDS = itertools.count(1)


def message(text: object = SECRET, **changes: Any) -> dict[str, Any]:
    """A valid private ``message`` (``from_`` for ``from``), with ``changes`` applied
    (``None`` removes the field). Any JSON value goes, ``text`` too: these are bad updates."""
    fields: dict[str, Any] = {
        "message_id": next(_IDS),
        "from": FakeBotAPI.user(USER, "Ada"),
        "chat": {"id": USER, "type": "private", "first_name": "Ada"},
        "date": int(time.time()),
        "text": text,
    }
    for key, value in changes.items():
        key = "from" if key == "from_" else key
        if value is None:
            fields.pop(key, None)
        else:
            fields[key] = value
    return fields


UNPARSABLE = {  # PTB's Update.de_json raises on each
    "a date that is not a number": message(date="yesterday"),
    "a chat that is not an object": message(chat="private"),
    "a sender without a name": message(from_={"id": USER, "is_bot": False}),
    "a photo that is not a list": message(photo={"file_id": "x"}),
}
UNNORMALISABLE = {  # PTB accepts each; normalize cannot map it
    "no chat": message(chat=None),
    "a chat type nobody knows": message(chat={"id": USER, "type": "martian"}),
    "text that is not text": message(text=5),
}


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI(username="MnemoHomeBot") as server:
        yield server


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_bad_updates_first_middle_and_last_are_skipped_and_the_rest_delivered_in_order(
    api: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bad = list(UNPARSABLE.values())
    first = api.push_raw({"message": bad[0]})
    api.push_text(USER, USER, "one")
    middle = api.push_raw({"message": bad[1]})
    api.push_text(USER, USER, "two")
    last = api.push_raw({"message": bad[2]})
    inbox = Inbox()
    adapter = make(api)
    await adapter.start(inbox)  # its first getUpdates brings the five at once
    try:
        assert [(await inbox.next()).text, (await inbox.next()).text] == ["one", "two"]
        await eventually(lambda: api.pending_updates == [])  # the offset moved past the last
        assert adapter.skipped == {"unparsable": 3, "unnormalisable": 0}
        assert adapter.connected and adapter.poll_failures == 0
        api.push_text(USER, USER, "three")  # and polling goes on
        assert (await inbox.next()).text == "three"
    finally:
        await adapter.stop()
    logged = warnings_of(caplog)
    for update in (first, middle, last):
        assert any(f"update {update['update_id']} (message): unparsable" in m for m in logged)
    assert not any(SECRET in r.getMessage() for r in caplog.records)  # no payload dump
    assert not any(r.levelno >= logging.CRITICAL for r in caplog.records)  # PTB's batch dump
    assert inbox.queue.empty()


@pytest.mark.parametrize("kind", list(UNPARSABLE))
async def test_each_kind_of_unparsable_update_is_skipped(
    api: FakeBotAPI, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox()
    adapter = make(api)
    await adapter.start(inbox)
    try:
        bad = api.push_raw({"message": UNPARSABLE[kind]})
        api.push_text(USER, USER, "after it")
        assert (await inbox.next()).text == "after it"
        assert adapter.skipped == {"unparsable": 1, "unnormalisable": 0}
        await eventually(lambda: api.pending_updates == [])
    finally:
        await adapter.stop()
    [line] = [m for m in warnings_of(caplog) if "skipped" in m]
    assert line.startswith(f"telegram: skipped update {bad['update_id']} (message): unparsable (")
    assert SECRET not in caplog.text


@pytest.mark.parametrize("kind", list(UNNORMALISABLE))
async def test_each_kind_of_update_normalize_cannot_map_is_skipped(
    api: FakeBotAPI, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox()
    adapter = make(api)
    await adapter.start(inbox)
    try:
        bad = api.push_raw({"message": UNNORMALISABLE[kind]})
        api.push_text(USER, USER, "after it")
        assert (await inbox.next()).text == "after it"
        assert adapter.skipped == {"unparsable": 0, "unnormalisable": 1}
        await eventually(lambda: api.pending_updates == [])
    finally:
        await adapter.stop()
    [line] = [m for m in warnings_of(caplog) if "skipped" in m]
    assert f"update {bad['update_id']} (message): unnormalisable (" in line
    assert "handling update" not in caplog.text  # not taken for a failing sink
    assert SECRET not in caplog.text


async def test_the_log_names_the_field_when_the_error_does(
    api: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox()
    adapter = make(api)
    await adapter.start(inbox)
    try:
        api.push_raw({"message": UNPARSABLE["a sender without a name"]})
        api.push_raw({"message": UNNORMALISABLE["a chat type nobody knows"]})
        api.push_text(USER, USER, "after them")
        assert (await inbox.next()).text == "after them"
    finally:
        await adapter.stop()
    lines = [m for m in warnings_of(caplog) if "skipped" in m]
    assert [line.rsplit(" (", 1)[1] for line in lines] == [
        "TypeError: first_name)",
        "Unusable: chat.type)",
    ]


async def test_an_update_without_a_usable_id_is_counted_once_and_confirmed_by_the_next(
    api: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """Telegram always sends an ``update_id``; a broken server or proxy might not. Such an
    update cannot be confirmed on its own: it comes back until a later one confirms it."""
    inbox = Inbox()
    adapter = make(api, backoff_base=0.05)
    api.push_text(USER, USER, "one")
    api.push_raw({"message": message("no id")}, served_update_id=OMIT)
    api.push_raw({"message": message("an id that is text")}, served_update_id="ten")
    await adapter.start(inbox)
    try:
        assert (await inbox.next()).text == "one"
        polls = len(api.calls_of("getUpdates"))
        await api.wait_calls("getUpdates", polls + 3)  # they came back, again and again
        assert adapter.skipped == {"unparsable": 2, "unnormalisable": 0}  # counted once each
        assert len(api.pending_updates) == 2 and adapter.connected
        api.push_text(USER, USER, "two")
        assert (await inbox.next()).text == "two"
        await eventually(lambda: api.pending_updates == [])  # "two" confirmed them too
        assert adapter.skipped == {"unparsable": 2, "unnormalisable": 0}
    finally:
        await adapter.stop()
    lines = [m for m in warnings_of(caplog) if "skipped" in m]
    assert (
        lines
        == [
            "telegram: skipped an update without an update_id (message): unparsable "
            "(Unusable: update_id)"
        ]
        * 2
    )
    assert inbox.queue.empty()


async def test_skips_survive_a_restart_of_the_adapter_object(api: FakeBotAPI) -> None:
    """The counter belongs to the adapter, not to one run: the gateway's metric never
    goes back."""
    inbox = Inbox()
    adapter: TelegramAdapter = make(api)
    await adapter.start(inbox)
    api.push_raw({"message": UNPARSABLE["a date that is not a number"]})
    api.push_text(USER, USER, "x")
    await inbox.next()
    await adapter.stop()
    await adapter.start(inbox)
    try:
        api.push_raw({"message": UNNORMALISABLE["no chat"]})
        api.push_text(USER, USER, "y")
        assert (await inbox.next()).text == "y"
        assert adapter.skipped == {"unparsable": 1, "unnormalisable": 1}
    finally:
        await adapter.stop()


async def test_the_webhook_acknowledges_an_update_it_cannot_use(
    api: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    """Telegram retries every delivery not answered 2xx: one that can never be read is
    answered 200 and skipped, or it would come back forever."""
    inbox = Inbox()
    adapter = make(
        api, mode="webhook", webhook_port=0, webhook_url="https://bot.example.org/hook",
        webhook_path="/hook", webhook_secret="s3cret-Token",
    )  # fmt: skip
    await adapter.start(inbox)
    url = f"http://127.0.0.1:{adapter.webhook_port}/hook"
    headers = {
        "Content-Type": "application/json",
        "X-Telegram-Bot-Api-Secret-Token": "s3cret-Token",
    }
    bodies = [
        {"update_id": 801, "message": UNPARSABLE["a date that is not a number"]},
        {"update_id": 802, "message": UNNORMALISABLE["no chat"]},
        {"message": message()},  # no update_id
        [],
        {"update_id": 803, "message": message("good")},
    ]
    try:
        async with aiohttp.ClientSession() as http:
            for body in bodies:
                async with http.post(url, data=json.dumps(body), headers=headers) as response:
                    assert response.status == 200
            async with http.post(url, data="{not json", headers=headers) as response:
                assert response.status == 400  # not an update at all
        good = await inbox.next()
        assert (good.text, good.update_id) == ("good", "803")
        assert adapter.skipped == {"unparsable": 3, "unnormalisable": 1}
        assert adapter.connected
    finally:
        await adapter.stop()
    logged = warnings_of(caplog)
    assert any("update 801 (message): unparsable" in m for m in logged)
    assert any("update 802 (message): unnormalisable (Unusable: chat)" in m for m in logged)
    assert SECRET not in caplog.text
