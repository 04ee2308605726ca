"""Parse / join / render: the pure entry arithmetic, with hypothesis round trips."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memory.curated.entries import (
    DELIMITER,
    AmbiguousMatch,
    ContentError,
    NoMatch,
    clean_content,
    find_entry,
    format_usage,
    join_entries,
    parse_entries,
    render_block,
)


def test_parse_splits_on_the_full_delimiter_strips_drops_empties_and_dedupes() -> None:
    raw = "  first \n§\n\n§\nsecond\nline two\n§\nfirst\n§\n a § b \n§\n"
    assert parse_entries(raw) == ["first", "second\nline two", "a § b"]


def test_a_bare_section_sign_inside_a_line_is_not_a_delimiter() -> None:
    assert parse_entries("costs 5 § 3\n§\nx") == ["costs 5 § 3", "x"]


def test_usage_is_floored_percent_with_thousands_separators() -> None:
    assert format_usage(1474, 2200) == "67% — 1,474/2,200 chars"
    assert format_usage(2199, 2200) == "99% — 2,199/2,200 chars"
    assert format_usage(0, 1375) == "0% — 0/1,375 chars"


# Entries as the store can hold them: cleaned, no delimiter line, unique.
_entry_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r")
    | st.sampled_from(["\n", "§", " ", "\t"]),
    min_size=1,
    max_size=40,
)


def _storable(text: str) -> str | None:
    try:
        return clean_content(text)
    except ContentError:
        return None


@given(st.lists(_entry_text, max_size=12))
def test_join_then_parse_gives_back_the_stored_entries(texts: list[str]) -> None:
    entries = list(dict.fromkeys(e for t in texts if (e := _storable(t)) is not None))
    assert parse_entries(join_entries(entries)) == entries


@example(raw="a\n§ \n§\na")  # a § line beside the delimiter (it became part of an entry)
@example(raw="§\n \n§\nx\n§\n§ ")
@given(st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", "§", "\t"]), max_size=60))
def test_parse_of_any_text_is_a_fixed_point_of_join_then_parse(raw: str) -> None:
    once = parse_entries(raw)
    assert parse_entries(join_entries(once)) == once


@given(st.lists(_entry_text, max_size=8), st.integers(min_value=1, max_value=5000))
def test_render_is_deterministic_and_carries_every_entry(texts: list[str], limit: int) -> None:
    entries = list(dict.fromkeys(e for t in texts if (e := _storable(t)) is not None))
    chars = len(join_entries(entries))
    first = render_block("memory", entries, limit, chars=chars)
    assert first == render_block("memory", list(entries), limit, chars=chars)
    if not entries:
        assert first == ""
    elif chars <= max(2 * limit, 1000):
        assert first.endswith(join_entries(entries))


def test_render_block_exact_shape() -> None:
    block = render_block("user", ["likes tea", "lives in Lyon"], 1375, chars=24)
    rule = "═" * 46
    assert block == (
        f"{rule}\nUSER PROFILE (who the user is) [1% — 24/1,375 chars]\n{rule}\n"
        "likes tea\n§\nlives in Lyon"
    )


def test_render_cuts_a_file_grown_far_past_its_limit() -> None:
    entries = ["x" * 5000, "y" * 5000]
    block = render_block("memory", entries, 1000, chars=10003)
    assert "OVER LIMIT" in block
    assert "chars cut" in block
    assert len(block) < 2600


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty"),
        ("  \n\t ", "empty"),
        ("a\n§\nb", "separator"),
        ("a\n§", "separator"),
        ("bell\x07", "control character"),
    ],
)
def test_clean_content_refuses_what_cannot_be_one_entry(content: str, problem: str) -> None:
    with pytest.raises(ContentError, match=problem):
        clean_content(content)


def test_clean_content_normalises_newlines_and_strips() -> None:
    assert clean_content("  a\r\nb\rc  ") == "a\nb\nc"


def test_find_entry_prefers_exact_then_unique_substring() -> None:
    entries = ["cat food brand: Felix", "cat"]
    assert find_entry(entries, "cat") == 1  # exact beats the earlier substring match
    assert find_entry(entries, "Felix") == 0
    with pytest.raises(NoMatch):
        find_entry(entries, "dog")
    with pytest.raises(NoMatch):
        find_entry(entries, "   ")


def test_find_entry_ambiguity_and_identical_duplicates() -> None:
    with pytest.raises(AmbiguousMatch) as info:
        find_entry(["tea in the morning", "tea at night"], "tea")
    assert info.value.matches == ["tea in the morning", "tea at night"]
    assert find_entry(["x tea", "y", "x tea"], "tea") == 0


def test_delimiter_is_newline_section_newline() -> None:
    assert DELIMITER == "\n§\n"
