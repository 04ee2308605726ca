"""Sending to Telegram: a reply's chunks (sendMessage), the whole text as a file
(sendDocument), the typing indicator (sendChatAction).

``send`` renders the reply (``render``: HTML chunks of at most 4,096 UTF-16 code units,
fences intact), skips ``skip_chunks`` and sends the rest in order; the first chunk replies
to ``reply_to_message_id`` when that is a message id (``allow_sending_without_reply``: the
original may be gone). Past ``max_chunks`` the whole text goes as ``reply.md`` after the
first chunks (``fold``), counted as one chunk. Buttons ride on the last unit. After each
unit Telegram confirmed, ``delivered(done, total)`` is awaited.

When Telegram cannot parse a chunk's HTML ("can't parse entities", "message text is
empty"), that chunk is sent again as its plain Markdown source (``Chunk.fallback``).

Nothing here retries or waits: there is no ``AIORateLimiter``; a 429 becomes
``RateLimited(retry_after, sent=...)`` at once (``errors.translate``) and the gateway waits
for that chat only. Telegram has no idempotency key: a chunk in flight when the process dies
may arrive twice.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from telegram import InputFile, Message, ReplyParameters
from telegram import error as tg
from telegram.constants import ChatAction
from telegram.ext import ExtBot

from adapters.base import BadRequest, Delivered
from adapters.chunking import REPLY_FILE, file_caption, fold
from adapters.messages import OutboundMessage
from adapters.telegram.errors import call, translate
from adapters.telegram.render import Chunk, keyboard, render

__all__ = ["chat_id", "send", "thread_id", "typing"]

_LOGGER = logging.getLogger(__name__)
_PARSE_FAILURES = ("can't parse entities", "message text is empty")


async def send(
    bot: ExtBot[Any], message: OutboundMessage, *, token: str, delivered: Delivered | None
) -> list[str]:
    """Render, split and send ``message``; the ids of the messages sent, in order. Errors
    are the ``adapters.base`` family with the ids already sent (``token``: kept out of
    their text)."""
    chat = chat_id(message.chat_id)
    thread = thread_id(message.thread_id)
    chunks = render(message)
    kept, as_file = fold(len(chunks), message.max_chunks)
    total = kept + as_file
    sent: list[str] = []
    for index in range(total):
        if index < message.skip_chunks:
            continue
        reply = None
        reply_to = message.reply_to_message_id
        if index == 0 and reply_to and reply_to.isdigit():  # a callback's query id is not
            reply = ReplyParameters(message_id=int(reply_to), allow_sending_without_reply=True)
        try:
            if index < kept:
                posted = await _send_chunk(bot, chat, thread, chunks[index], reply)
            else:
                posted = await _send_file(bot, chat, thread, message, reply)
        except tg.TelegramError as exc:
            raise translate(exc, sent, "sendMessage", token=token) from None
        sent.append(str(posted.message_id))
        if delivered is not None:
            await delivered(index + 1, total)
    return sent


async def typing(bot: ExtBot[Any], chat: str, thread: str | None, *, token: str) -> None:
    """sendChatAction "typing" once (Telegram shows it for 5 s or until the next message)."""
    await call(
        bot.send_chat_action(chat_id(chat), ChatAction.TYPING, message_thread_id=thread_id(thread)),
        "sendChatAction",
        token=token,
    )


def chat_id(value: str) -> int | str:
    """Telegram chat ids are integers; ``@channelname`` stays a string."""
    try:
        return int(value)
    except ValueError:
        return value


def thread_id(value: str | None) -> int | None:
    """A forum topic's id, an integer; None for none. Raises ``BadRequest`` for a value
    that is not a number."""
    if not value:
        return None
    if not value.isdigit():
        raise BadRequest(f"telegram: a message thread id is a number, not {value!r}")
    return int(value)


async def _send_file(
    bot: ExtBot[Any],
    chat: int | str,
    thread: int | None,
    message: OutboundMessage,
    reply: ReplyParameters | None,
) -> Message:
    """The whole reply as ``reply.md`` (sendDocument), with the buttons, if any."""
    return await bot.send_document(
        chat,
        InputFile(message.text.encode("utf-8"), filename=REPLY_FILE),
        caption=file_caption(message.text),
        message_thread_id=thread,
        reply_parameters=reply,
        reply_markup=keyboard(message.buttons),
    )


async def _send_chunk(
    bot: ExtBot[Any],
    chat: int | str,
    thread: int | None,
    chunk: Chunk,
    reply: ReplyParameters | None,
) -> Message:
    """One chunk as HTML; again as its plain source when Telegram cannot parse the HTML."""
    markup = keyboard(chunk.buttons)

    def attempt(text: str, parse_mode: str | None) -> Coroutine[Any, Any, Message]:
        return bot.send_message(
            chat,
            text,
            parse_mode=parse_mode,
            message_thread_id=thread,
            reply_parameters=reply,
            reply_markup=markup,
        )

    try:
        return await attempt(chunk.text, chunk.parse_mode)
    except tg.BadRequest as exc:
        lowered = exc.message.lower()
        if chunk.parse_mode is None or not any(p in lowered for p in _PARSE_FAILURES):
            raise
        _LOGGER.warning("telegram: HTML refused (%s); sending the chunk as plain text", exc.message)
        return await attempt(chunk.fallback, None)
