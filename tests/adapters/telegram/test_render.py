"""``render``: split the Markdown first, then convert each chunk; buttons on the last one."""

from __future__ import annotations

from typing import Unpack

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.chunking import utf16_len
from adapters.messages import OutboundMessage
from adapters.telegram import Chunk, render
from adapters.telegram.render import keyboard
from tests.adapters.outbound import Extras
from tests.fakes.telegram_html import parse_html


def out(text: str, **kw: Unpack[Extras]) -> OutboundMessage:
    return OutboundMessage("telegram", "42", text, **kw)


def long_reply_with_fence() -> str:
    prose = "The engine weaves algebraic patterns. " * 25  # ~950 chars
    code = "\n".join(f"result_{i} = bernoulli({i})  # step {i}" for i in range(130))
    return f"{prose}\n\n```python\n{code}\n```\n\nThat is **all**."


def test_short_markdown_is_one_html_chunk_with_its_source_as_fallback() -> None:
    [chunk] = render(out("Hello **Ada** & <friends>"))
    assert chunk == Chunk(
        "Hello <b>Ada</b> &amp; &lt;friends&gt;", "HTML", "Hello **Ada** & <friends>"
    )


def test_plain_messages_are_sent_as_they_are() -> None:
    [chunk] = render(out("/memory: **not** markup <b>", markdown=False))
    assert chunk == Chunk("/memory: **not** markup <b>", None, "/memory: **not** markup <b>")


def test_empty_text_gives_no_chunk() -> None:
    assert render(out("")) == []
    assert render(out("\n\n", buttons=(("Yes", "y"),))) == []


def test_a_long_reply_splits_on_the_source_with_fences_intact() -> None:
    text = long_reply_with_fence()
    assert len(text) > 5000
    chunks = render(out(text))
    assert len(chunks) == 2
    for chunk in chunks:
        assert utf16_len(chunk.fallback) <= 4096
        assert chunk.fallback.count("```") % 2 == 0  # every chunk closes what it opens
        visible, _ = parse_html(chunk.text)  # Telegram's rules: it parses
        assert utf16_len(visible) <= 4096
    assert chunks[0].fallback.rstrip().endswith("```")
    assert chunks[1].fallback.startswith("```python\n")
    assert '<pre><code class="language-python">' in chunks[1].text
    assert "".join(c.fallback for c in chunks).count("bernoulli(") == 130  # nothing lost


def test_length_is_measured_in_utf16() -> None:
    text = "😀" * 3000  # 3,000 characters but 6,000 UTF-16 units
    chunks = render(out(text, markdown=False))
    assert len(chunks) == 2
    assert all(utf16_len(c.text) <= 4096 for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_buttons_go_on_the_last_chunk_only() -> None:
    buttons = (("Yes", "forget:yes"), ("No", "forget:no"))
    chunks = render(out(long_reply_with_fence(), buttons=buttons))
    assert [c.buttons for c in chunks] == [(), buttons]


def test_render_ignores_skip_chunks_the_client_skips() -> None:
    text = long_reply_with_fence()
    assert render(out(text, skip_chunks=1)) == render(out(text))


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab *_`~|\n#>-[]()<&😀"), max_size=9000))
def test_every_chunk_is_valid_telegram_html_within_the_limit(text: str) -> None:
    for chunk in render(out(text)):
        visible, _ = parse_html(chunk.text)
        assert utf16_len(visible) <= 4096
        assert utf16_len(chunk.fallback) <= 4096


def test_the_keyboard_puts_buttons_two_to_a_row_and_leaves_out_what_cannot_fit() -> None:
    buttons = (("Approve", "/memory approve 1"), ("Reject", "/memory reject 1"), ("Go", "g"))
    markup = keyboard((*buttons, ("Too long", "é" * 33)))  # 66 bytes
    assert markup is not None
    assert [[b.callback_data for b in row] for row in markup.inline_keyboard] == [
        ["/memory approve 1", "/memory reject 1"],
        ["g"],
    ]
    assert keyboard(()) is None and keyboard((("Too long", "x" * 65),)) is None
