"""Sending to Discord as plain channel messages, and what every send shares.

``units`` is a reply as the units it goes in: ``render``'s 2,000-character chunks (fences
intact) and, past ``max_chunks``, the first chunks and then the whole text as ``reply.md``
(``WholeText``; ``fold``). ``Progress`` follows one ``send``: the ids delivered, the
``delivered`` report after each unit Discord confirmed, and each unit's nonce.

``post`` sends units to a channel: ``thread_id or chat_id``, the cached channel, else a
``PartialMessageable`` (e.g. a DM after a restart); the first unit as a reply
(``fail_if_not_exists=False``), every one with ``AllowedMentions.none()`` (nothing in a
reply can ping) and the nonce ``render.nonce`` derives from ``OutboundMessage.key`` and its
index, so Discord answers a unit sent again after a restart with the message it already
made (for a few minutes: its ``enforce_nonce`` window); without a key discord.py draws a
random nonce. Buttons (``components.make_view``) ride on the last unit. Answers to an
interaction go through its token instead: ``interactions``.

Rate limits are discord.py's: it buckets routes by their major parameter (the channel id)
and on a 429 sleeps ``retry_after`` and retries inside that bucket only, so flood control on
one channel delays that channel alone. Waits longer than ``max_ratelimit_timeout`` (its
minimum is 30 s) raise ``discord.RateLimited`` instead, translated to ``RateLimited`` for the
gateway to retry later. discord.py also retries 500/502/504/524 itself (sleeping 1, 3, 5, 7,
9 s), so one request may take 25 s: ``timeout`` bounds each one. Errors are the
``adapters.base`` family (``errors.translate``), always with the ids already sent.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.base import Delivered
from adapters.chunking import REPLY_FILE, file_caption, fold
from adapters.discord.components import make_view
from adapters.discord.errors import NO_PINGS, translate
from adapters.discord.render import nonce, render
from adapters.messages import Button, OutboundMessage

__all__ = ["Progress", "Unit", "WholeText", "content", "post", "units", "view"]


@dataclass(frozen=True, slots=True)
class WholeText:
    """The last unit of a reply past ``max_chunks``: its whole text, as a Markdown file."""

    text: str


Unit = str | WholeText
"""One message of a reply: a chunk of text, or the whole text as a file."""


def units(message: OutboundMessage) -> list[Unit]:
    """The units ``message`` goes in, ``skip_chunks`` included (see the module docstring)."""
    chunks: list[Unit] = list(render(message))
    kept, as_file = fold(len(chunks), message.max_chunks)
    if as_file:  # past max_chunks: the first chunks, then the whole text as a file
        chunks = [*chunks[:kept], WholeText(message.text)]
    return chunks


@dataclass(slots=True)
class Progress:
    """One ``send`` under way: the ids delivered, the next unit's nonce, the report."""

    key: str  # OutboundMessage.key: units get stable nonces only with one
    skip: int  # units delivered by earlier attempts
    total: int
    report: Delivered | None
    sent: list[str] = field(default_factory=list)

    def nonce(self) -> str | None:
        """None: discord.py draws a random one (a re-send is then a new message)."""
        return nonce(self.key, self.skip + len(self.sent)) if self.key else None

    async def done(self, message_id: int) -> None:
        self.sent.append(str(message_id))
        if self.report is not None:
            await self.report(self.skip + len(self.sent), self.total)


def content(unit: Unit) -> dict[str, Any]:
    """``Messageable.send`` / ``followup.send`` arguments for one unit of a reply."""
    if isinstance(unit, str):
        return {"content": unit}
    data = io.BytesIO(unit.text.encode("utf-8"))
    return {"content": file_caption(unit.text), "file": discord.File(data, REPLY_FILE)}


def view(buttons: tuple[Button, ...], last: bool) -> dict[str, Any]:
    """``view=`` for a send: the buttons ride on the last unit only."""
    made = make_view(buttons) if last else None
    return {"view": made} if made is not None else {}


async def post(
    client: discord.Client, target: int, chunks: Sequence[Unit], reply: str | None,
    progress: Progress, *, buttons: tuple[Button, ...] = (), timeout: float,  # noqa: ASYNC109
) -> list[str]:  # fmt: skip
    """Send ``chunks`` to the channel ``target``, the first as a reply to ``reply``; the
    ids delivered (``progress.sent``)."""
    channel: Any = client.get_channel(target)
    if not isinstance(channel, discord.abc.Messageable):
        channel = client.get_partial_messageable(target)
    for index, chunk in enumerate(chunks):
        reference = None
        if index == 0 and reply is not None and reply.isdigit():
            reference = discord.MessageReference(
                message_id=int(reply), channel_id=target, fail_if_not_exists=False
            )
        try:
            async with asyncio.timeout(timeout):
                posted = await channel.send(
                    **content(chunk), reference=reference, allowed_mentions=NO_PINGS,
                    nonce=progress.nonce(), **view(buttons, index == len(chunks) - 1),
                )  # fmt: skip
        except Exception as exc:
            raise (translate(exc, progress.sent) or exc) from exc
        await progress.done(posted.id)
    return progress.sent
