"""Helpers' keywords for building an ``OutboundMessage`` in tests."""

from __future__ import annotations

from typing import TypedDict

from adapters.messages import Button


class Extras(TypedDict, total=False):
    """``OutboundMessage``'s fields after platform, chat and text (``**`` them into it)."""

    thread_id: str | None
    reply_to_message_id: str | None
    markdown: bool
    buttons: tuple[Button, ...]
    skip_chunks: int
    max_chunks: int
    key: str
