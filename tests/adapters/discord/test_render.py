"""Rendering replies into Discord-sized chunks (pure)."""

from __future__ import annotations

import re
from typing import Unpack

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord import render
from adapters.messages import OutboundMessage
from tests.adapters.outbound import Extras


def _out(text: str, **kwargs: Unpack[Extras]) -> OutboundMessage:
    return OutboundMessage("discord", "1", text, **kwargs)


def _fences_balanced(chunk: str) -> bool:
    return len(re.findall(r"^```", chunk, flags=re.MULTILINE)) % 2 == 0


def test_short_text_is_one_chunk_unchanged() -> None:
    text = "**bold** and `code` — Markdown is native on Discord"
    assert render(_out(text)) == [text]


def test_long_reply_with_a_fence_splits_in_three_with_fences_intact() -> None:
    code = "\n".join(f"print('line {i:03d}')" for i in range(202))
    text = "Intro paragraph.\n\n" + "x " * 400 + "\n\n```python\n" + code + "\n```\n\nThe end."
    assert 4400 < len(text) < 4600
    chunks = render(_out(text))
    assert len(chunks) == 3
    assert all(len(c) <= 2000 for c in chunks)
    assert all(_fences_balanced(c) for c in chunks)
    assert any(c.startswith("```python\n") for c in chunks[1:])  # reopened with its language
    assert "".join(chunks).count("print('line") == 202


def test_plain_text_is_not_mangled() -> None:
    text = "@everyone look: <@123> <@&456> *not bold*"
    assert render(_out(text, markdown=False)) == [text]


def test_buttons_become_command_lines_at_the_end() -> None:
    message = _out(
        "Waiting for your approval:",
        buttons=(("Approve 3", "/memory approve 3"), ("Reject 3", "/memory reject 3")),
    )
    [chunk] = render(message)
    assert chunk.splitlines()[-2:] == [
        "Approve 3 → /memory approve 3",
        "Reject 3 → /memory reject 3",
    ]


def test_buttons_count_toward_the_limit() -> None:
    message = _out("y" * 1990, buttons=(("Go", "/memory approve 1"),))
    chunks = render(message)
    assert len(chunks) == 2 and all(len(c) <= 2000 for c in chunks)
    assert chunks[-1].endswith("Go → /memory approve 1")


def test_nothing_to_say_gives_no_chunk() -> None:
    assert render(_out("\n\n")) == []


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(["a", " ", "\n", "`", "é", "😀", "#"]), min_size=0, max_size=7000
    )
)
def test_every_chunk_fits(text: str) -> None:
    assert all(len(chunk) <= 2000 for chunk in render(_out(text)))


def test_a_button_whose_command_the_text_shows_gets_no_extra_line() -> None:
    text = "add to USER.md: «tea»\ntype /memory approve 1a2b3c or /memory reject 1a2b3c"
    buttons = (
        ("Approve", "/memory approve 1a2b3c"),
        ("Reject", "/memory reject 1a2b3c"),
        ("Approve 1a2b3", "/memory approve 1a2b3"),  # a prefix of a shown command is not it
    )
    [chunk] = render(_out(text, buttons=buttons))
    assert chunk == f"{text}\n\nApprove 1a2b3 → /memory approve 1a2b3"
