"""Chunking replies to platform limits: sizes, fences, UTF-16, nothing lost."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.chunking import fold, split_message, utf16_len

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def balanced(chunk: str) -> bool:
    open_marker = None
    for line in chunk.split("\n"):
        match = FENCE.match(line)
        if not match:
            continue
        marker = match.group(1)
        rest = line.strip()[len(marker) :].strip()
        if open_marker is None:
            open_marker = marker
        elif marker[0] == open_marker[0] and len(marker) >= len(open_marker) and not rest:
            open_marker = None
    return open_marker is None


def words(text: str) -> list[str]:
    return [w for w in text.split() if not FENCE.match(w)]


def test_short_text_is_one_chunk_and_empty_is_none() -> None:
    assert split_message("hello", 100) == ["hello"]
    assert split_message("\n\n", 100) == []


def test_prefers_paragraphs_then_lines() -> None:
    text = "first paragraph line one\nline two\n\nsecond paragraph " + "x" * 30
    chunks = split_message(text, 60)
    assert chunks[0] == "first paragraph line one\nline two"
    assert chunks[1].startswith("second paragraph")


def test_a_code_block_cut_in_two_is_closed_and_reopened() -> None:
    code = "\n".join(f"print({n})" for n in range(30))
    text = f"Here:\n```python\n{code}\n```\nDone."
    chunks = split_message(text, 120)
    assert len(chunks) > 2
    assert all(balanced(c) for c in chunks)
    assert chunks[1].startswith("```python\n")
    assert chunks[0].endswith("\n```")
    assert words(" ".join(chunks)) == words(text)


def test_telegram_counts_utf16_code_units() -> None:
    text = "😀" * 3000  # 6,000 UTF-16 units, 3,000 characters
    chunks = split_message(text, 4096, measure=utf16_len)
    assert len(chunks) == 2
    assert all(utf16_len(c) <= 4096 for c in chunks)
    assert "".join(chunks) == text
    assert split_message(text, 4096) == [text[: 4096 // 1]] if len(text) <= 4096 else True


_LINE = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=60),
    st.sampled_from(["```", "```python", "~~~", "````", "", "😀 emoji 👍🏽 line", "a b c"]),
)


@given(st.lists(_LINE, max_size=80), st.sampled_from([60, 100, 2000, 4096]), st.booleans())
@settings(max_examples=300, deadline=None)
def test_every_chunk_fits_is_balanced_and_nothing_is_lost(
    lines: list[str], limit: int, telegram: bool
) -> None:
    text = "\n".join(lines)
    measure = utf16_len if telegram else len
    chunks = split_message(text, limit, measure=measure)
    assert all(measure(c) <= limit for c in chunks)
    opened_at_start = all(balanced(c) for c in chunks)
    # a text whose own fences are unbalanced cannot yield balanced chunks at its end only
    if balanced(text):
        assert opened_at_start
    # nothing lost: the same non-blank characters in the same order (a word longer than a
    # chunk has to be cut, so compare characters, not words)
    assert "".join(words(" ".join(chunks))) == "".join(words(text))


def test_a_long_fence_info_string_is_not_repeated_if_it_would_not_fit() -> None:
    text = "```" + "x" * 50 + "\n" + "\n".join(f"line {n}" for n in range(40)) + "\n```"
    chunks = split_message(text, 80)
    assert all(len(c) <= 80 and balanced(c) for c in chunks)
    assert chunks[1].startswith("```\n")


def test_tiny_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        split_message("x", 10)


def test_fold_keeps_short_replies_and_ends_long_ones_with_the_file() -> None:
    assert fold(3, 0) == (3, False)  # no limit
    assert fold(6, 6) == (6, False)
    assert fold(7, 6) == (5, True)  # five chunks, then the whole text as a file
    assert fold(40, 2) == (1, True)
