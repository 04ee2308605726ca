"""``sending``: ids as Telegram takes them (pure), and the plain-text fallback of a chunk
whose HTML Telegram refuses, over the wire (the rest of sending: test_client.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.base import BadRequest
from adapters.messages import OutboundMessage
from adapters.telegram import TelegramAdapter
from adapters.telegram.sending import chat_id, thread_id
from tests.adapters.telegram.test_client import Inbox, make
from tests.fakes.telegram_server import FakeBotAPI

USER = 205118349


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI(username="MnemoHomeBot") as server:
        yield server


@pytest.fixture
async def adapter(api: FakeBotAPI) -> AsyncIterator[TelegramAdapter]:
    async with make(api) as running:
        await running.start(Inbox())
        yield running


def test_chat_ids_are_numbers_and_a_channel_name_stays_text() -> None:
    assert chat_id("-1001789012345") == -1001789012345
    assert chat_id("@mnemo_news") == "@mnemo_news"


def test_thread_ids_are_numbers_or_none() -> None:
    assert thread_id("877") == 877
    assert thread_id(None) is None and thread_id("") is None
    with pytest.raises(BadRequest, match="thread id"):
        thread_id("general")


async def test_html_that_renders_empty_is_sent_again_as_its_source(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    api.fail("sendMessage", 400, "Bad Request: message text is empty")
    [sent_id] = await adapter.send(OutboundMessage("telegram", str(USER), "**  **"))
    [sent] = await api.wait_sent(1)
    assert sent_id == str(sent.message_id) and (sent.parse_mode, sent.text) == (None, "**  **")


async def test_other_refusals_are_not_retried_in_plain_text(
    adapter: TelegramAdapter, api: FakeBotAPI
) -> None:
    api.fail("sendMessage", 400, "Bad Request: message is too long")
    with pytest.raises(BadRequest, match="too long") as caught:
        await adapter.send(OutboundMessage("telegram", str(USER), "Some **bold** words"))
    assert caught.value.sent == () and len(api.calls_of("sendMessage")) == 1
    api.fail("sendMessage", 400, "Bad Request: can't parse entities", chat_id=USER)
    with pytest.raises(BadRequest, match="parse entities"):  # plain already: nothing to drop
        await adapter.send(OutboundMessage("telegram", str(USER), "a <b>", markdown=False))
    assert len(api.calls_of("sendMessage")) == 2
