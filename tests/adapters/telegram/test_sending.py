"""``sending``: ids as Telegram takes them (pure), and the real PTB adapter sending to the
fake Bot API over loopback: chunks, files, replies, threads, fallbacks and errors."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from adapters.base import BadRequest, Forbidden, NotFound, RateLimited, Unavailable
from adapters.chunking import utf16_len
from adapters.messages import OutboundMessage
from adapters.telegram import TelegramAdapter
from adapters.telegram.sending import chat_id, thread_id
from tests.adapters.telegram.test_client import Inbox, make
from tests.fakes.telegram_server import FakeBotAPI

USER = 205118349
GROUP = -1001789012345


@pytest.fixture
async def api() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI(username="MnemoHomeBot") as server:
        yield server


@pytest.fixture
async def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def adapter(api: FakeBotAPI, inbox: Inbox) -> AsyncIterator[TelegramAdapter]:
    async with make(api) as running:
        await running.start(inbox)
        yield running


def reply_with_fence() -> str:
    prose = "The engine weaves algebraic patterns. " * 25
    code = "\n".join(f"result_{i} = bernoulli({i})  # step {i}" for i in range(130))
    return f"{prose}\n\n```python\n{code}\n```\n\nThat is **all**."


def test_chat_ids_are_numbers_and_a_channel_name_stays_text() -> None:
    assert chat_id("-1001789012345") == -1001789012345
    assert chat_id("@mnemo_news") == "@mnemo_news"


def test_thread_ids_are_numbers_or_none() -> None:
    assert thread_id("877") == 877
    assert thread_id(None) is None and thread_id("") is None
    with pytest.raises(BadRequest, match="thread id"):
        thread_id("general")


# -- over the wire -------------------------------------------------------------------------


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
