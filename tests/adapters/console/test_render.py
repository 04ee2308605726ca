"""What the console prints: nobody's text drives the terminal; buttons are commands."""

from __future__ import annotations

import unicodedata
from typing import Unpack

from adapters.console import render, visible
from adapters.messages import OutboundMessage
from gateway.terminal import visible as gateway_visible
from memory.scan.scanner import INVISIBLE_CHARS
from tests.adapters.outbound import Extras


def reply(text: str, **kwargs: Unpack[Extras]) -> OutboundMessage:
    return OutboundMessage("console", "console-ada", text, **kwargs)


def test_escape_sequences_bidi_and_invisible_characters_are_shown_not_obeyed() -> None:
    hostile = "fine\x1b[2J\x1b]0;pwned\x07\r\u202eexe.txt\u200b\U000e0041\u2028end"
    assert visible(hostile) == (
        "fine<U+001B>[2J<U+001B>]0;pwned<U+0007><U+000D><U+202E>exe.txt<U+200B><U+E0041><U+2028>end"
    )
    kept = "line one\n\tindented — café, 日本語, emoji 🙂"
    assert visible(kept) == kept
    assert visible(visible(hostile)) == visible(hostile)


def test_it_escapes_at_least_what_the_gateways_terminal_function_does() -> None:
    controls = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cc"]
    for char in [*INVISIBLE_CHARS, *controls]:
        if gateway_visible(char) != char:
            assert visible(char) != char, f"U+{ord(char):04X}"


def test_a_reply_is_its_text_and_buttons_are_the_commands_to_type() -> None:
    assert render(reply("Hello **there**\n\n")) == "Hello **there**"
    staged = reply(
        "I'd like to remember something (1 change(s)).",
        buttons=(("Approve p1", "/memory approve p1"), ("Reject p1", "/memory reject p1")),
    )
    assert render(staged) == (
        "I'd like to remember something (1 change(s)).\n"
        "  Approve p1 → /memory approve p1\n"
        "  Reject p1 → /memory reject p1"
    )
    long = reply("word " * 5000, max_chunks=6)  # a terminal has no message size
    assert render(long) == ("word " * 5000).rstrip()
    assert render(reply("already shown", skip_chunks=1)) is None
