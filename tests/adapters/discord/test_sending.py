"""``sending``'s pure half: a reply's units, their nonces and progress reports, and the
arguments each unit is sent with (channel posts over the wire: test_client.py)."""

from __future__ import annotations

from typing import Unpack

import discord

from adapters.discord.render import nonce
from adapters.discord.sending import Progress, WholeText, content, units, view
from adapters.messages import OutboundMessage
from tests.adapters.outbound import Extras


def out(text: str, **kwargs: Unpack[Extras]) -> OutboundMessage:
    return OutboundMessage("discord", "1", text, **kwargs)


def paragraphs(count: int) -> str:
    return "\n\n".join(f"Paragraph {i}: " + "word " * 300 for i in range(count))


def test_a_reply_within_max_chunks_is_its_chunks() -> None:
    made = units(out(paragraphs(3)))
    assert len(made) >= 2 and all(isinstance(u, str) and len(u) <= 2000 for u in made)


def test_past_max_chunks_the_whole_text_follows_the_first_chunks_as_one_unit() -> None:
    text = paragraphs(12)
    made = units(out(text, max_chunks=3))
    assert all(isinstance(u, str) for u in made[:-1]) and made[-1] == WholeText(text)
    assert len(made) == 3  # counted as one chunk: the whole reply is max_chunks units


def test_a_file_unit_is_a_caption_and_reply_md() -> None:
    assert content("hello") == {"content": "hello"}
    sent = content(WholeText("é" * 10))
    assert sent["content"] == "The whole answer (10 characters) is in this file."
    attached = sent["file"]
    assert isinstance(attached, discord.File) and attached.filename == "reply.md"
    assert attached.fp.read() == ("é" * 10).encode()


def test_buttons_ride_on_the_last_unit_only() -> None:
    buttons = (("Yes", "/yes"), ("No", "/no"))
    assert view(buttons, last=False) == {}
    assert view((), last=True) == {}
    made = view(buttons, last=True)["view"]
    assert [item.custom_id for item in made.children] == ["/yes", "/no"]


async def test_progress_reports_each_unit_counting_earlier_attempts() -> None:
    reports: list[tuple[int, int]] = []

    async def delivered(done: int, total: int) -> None:
        reports.append((done, total))

    progress = Progress("42:1700000000.5", skip=1, total=3, report=delivered)
    assert progress.nonce() == nonce("42:1700000000.5", 1)
    await progress.done(501)
    assert progress.nonce() == nonce("42:1700000000.5", 2)
    await progress.done(502)
    assert progress.sent == ["501", "502"] and reports == [(2, 3), (3, 3)]


def test_without_a_key_there_is_no_nonce() -> None:
    assert Progress("", skip=0, total=1, report=None).nonce() is None
