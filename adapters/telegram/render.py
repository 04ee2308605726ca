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

Buttons ride on the last chunk as an inline keyboard, one button per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from adapters.chunking import split_message, utf16_len
from adapters.messages import Button, OutboundMessage
from adapters.telegram.markup import markdown_to_html

__all__ = ["MAX_MESSAGE_UTF16", "Chunk", "render"]

MAX_MESSAGE_UTF16 = 4096


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
