"""``OutboundMessage`` -> Telegram-sized chunks: the pure half of sending.

Order matters: the *Markdown source* is split first, with
``split_message(text, 4096, measure=utf16_len)`` (Telegram counts UTF-16 code units), which
keeps code fences intact by closing and reopening them at a cut. Each chunk is then converted
on its own with ``markdown_to_html``, whose visible text is never longer than its source, so
every HTML chunk still fits after Telegram parses it. Splitting the HTML instead could cut a
tag or an entity in half.

A :class:`Chunk` carries what to send (``text`` + ``parse_mode``) and ``fallback``: the
Markdown source of the chunk, sent with no parse mode when Telegram refuses the HTML
("can't parse entities"), so a rendering bug costs formatting, never the words. Plain
messages (``markdown=False``, command output) are sent as they are, ``parse_mode`` None.

Buttons ride on the last chunk as an inline keyboard (``keyboard``), two to a row. A button
whose data is over Telegram's 64 bytes of ``callback_data`` is left out (and logged) rather
than have Telegram refuse the whole message: a message with buttons says in its text what
to type instead.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.chunking import split_message, utf16_len
from adapters.messages import Button, OutboundMessage
from adapters.telegram.markup import markdown_to_html

__all__ = ["MAX_CALLBACK_DATA", "MAX_MESSAGE_UTF16", "Chunk", "keyboard", "render"]

_LOGGER = logging.getLogger(__name__)
MAX_MESSAGE_UTF16 = 4096
MAX_CALLBACK_DATA = 64  # bytes


@dataclass(frozen=True, slots=True)
class Chunk:
    """One Telegram message: ``text`` sent with ``parse_mode``; ``fallback`` is the plain
    text to send instead if Telegram cannot parse ``text``."""

    text: str
    parse_mode: Literal["HTML"] | None
    fallback: str
    buttons: tuple[Button, ...] = ()


def render(message: OutboundMessage) -> list[Chunk]:
    """The chunks of ``message`` in order (none for empty text); buttons on the last one."""
    pieces = split_message(message.text, MAX_MESSAGE_UTF16, measure=utf16_len)
    chunks = [
        Chunk(markdown_to_html(piece), "HTML", piece)
        if message.markdown
        else Chunk(piece, None, piece)
        for piece in pieces
    ]
    if chunks and message.buttons:
        last = chunks[-1]
        chunks[-1] = Chunk(last.text, last.parse_mode, last.fallback, tuple(message.buttons))
    return chunks


def keyboard(buttons: Sequence[Button]) -> InlineKeyboardMarkup | None:
    """The inline keyboard for ``buttons``, two to a row; None when there is none (which
    also removes a keyboard from a message being edited)."""
    kept = []
    for label, data in buttons:
        if len(data.encode()) > MAX_CALLBACK_DATA:
            _LOGGER.warning("telegram: left out the button %r: its data is over 64 bytes", label)
            continue
        kept.append(InlineKeyboardButton(label, callback_data=data))
    if not kept:
        return None
    return InlineKeyboardMarkup([kept[i : i + 2] for i in range(0, len(kept), 2)])
