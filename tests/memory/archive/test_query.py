"""Search queries (memory/archive/query.py): hostile text, the FTS5 expressions built from
it, and which index serves it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.archive.database import Archive
from memory.archive.query import (
    MAX_QUERY_CHARS,
    Grams,
    Ranked,
    Substring,
    cjk_pieces,
    fts_all,
    fts_any,
    parse_query,
    route,
    trigram_terms,
)
from memory.archive.search import Searcher
from tests.memory.conftest import make_session, say

# -- parsing ------------------------------------------------------------------------------


def test_balanced_phrases_survive_and_an_unbalanced_quote_is_ignored() -> None:
    q = parse_query('deploy "blue green" rollout "unfinished')
    assert q.phrases == ("blue green",)
    assert q.terms == ("deploy", "rollout", "unfinished")


def test_operators_and_syntax_are_neutralised() -> None:
    q = parse_query("cats AND dogs OR NOT birds NEAR(fish) ^start col:value (group) -x *")
    assert q.terms == ("cats", "dogs", "birds", "fish", "start", "col:value", "group", "x")
    assert fts_all(q) == (
        '"cats" AND "dogs" AND "birds" AND "fish" AND "start" AND "col:value" AND "group" AND "x"'
    )


def test_dotted_and_hyphenated_terms_stay_whole_and_quoted() -> None:
    q = parse_query("where is my-app.config.ts?")
    assert q.terms == ("my-app.config.ts",)
    assert fts_all(q) == '"my-app.config.ts"'


def test_stop_words_are_dropped_unless_nothing_else_is_left() -> None:
    assert parse_query("what did I say about the wedding?").terms == ("wedding",)
    assert parse_query("what did I say").terms == ("what", "did", "I", "say")


def test_prefix_and_or_forms() -> None:
    q = parse_query("deploying stag*")
    assert q.prefixes == ("stag",)
    assert fts_any(q) == '"deploying" OR "stag"*'  # the porter index stems "deploying"


def test_possessives_are_the_name() -> None:
    for text in ("What did Tom's sister say?", "What did Tom\u2019s sister say?"):
        assert parse_query(text).terms == ("Tom", "sister")
    assert parse_query("the dogs' bowls").terms == ("dogs", "bowls")
    assert parse_query("don't").terms == ("don't",)  # only a stop word: kept as typed


def test_question_words_are_dropped() -> None:
    q = parse_query("Which kind of car does Maya drive nowadays?")
    assert q.terms == ("car", "Maya", "drive")


def test_names_and_numbers_count_twice() -> None:
    q = parse_query("Where did Maya park the Volvo V70 last week?")
    assert q.keys == ("Maya", "Volvo", "V70")
    assert fts_any(q) == (
        '"Maya" OR "Maya" OR "park" OR "Volvo" OR "Volvo" OR "V70" OR "V70" OR "last" OR "week"'
    )
    assert parse_query("Where is it").keys == ()  # a capital that only starts the question


def test_long_words_also_match_their_other_forms_by_prefix() -> None:
    assert fts_any(parse_query("allergy")) == '"allergy" OR "allerg"*'
    assert fts_any(parse_query("injured")) == '"injured" OR "injur"*'
    assert fts_any(parse_query("show")) == '"show"'  # no "shower"
    assert fts_any(parse_query("Juniper")) == '"Juniper"'  # a name stays exact


def test_long_queries_are_capped_with_a_note() -> None:
    q = parse_query("word " * 500)
    assert q.note is not None and str(MAX_QUERY_CHARS) in q.note
    many = parse_query(" ".join(f"t{i}" for i in range(40)))
    assert len(many.terms) == 12 and "first 12" in (many.note or "")


def test_cjk_is_detected() -> None:
    assert parse_query("東京タワー").cjk
    assert parse_query("서울 여행").cjk
    assert not parse_query("Tokyo tower").cjk


_HOSTILE = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(
            [
                '"',
                "'",
                "*",
                "^",
                ":",
                "(",
                ")",
                "NEAR(",
                "AND",
                "OR",
                "NOT",
                "{",
                "}",
                "-",
                "+",
                "search_text:",
                "scope:",
                "\\",
                "%",
                "_",
                "東京",
                "李娜对什么过敏？",
                "a_b%c",
                "東京都庁に",
                "ｘ",
                "\x00",
                "\u202e",
                "a",
                "bc",
                "col:",
                "NEAR(a b, 3)",
                '""',
                "'''",
                "rank",
                "bm25(",
                "*)",
                "deploy",
            ]
        ),
        max_size=12,
    ).map(" ".join),
)


@given(_HOSTILE)
@settings(max_examples=300, deadline=None)
def test_every_built_match_expression_is_valid_fts5(text: str) -> None:
    q = parse_query(text)
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE w USING fts5(search_text, scope,"
        " tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE t USING fts5(search_text, scope, tokenize='trigram')")
    for expr in (fts_all(q), fts_any(q)):
        if expr is not None:
            db.execute("SELECT * FROM w WHERE w MATCH ?", (f"search_text : ({expr})",))
    for term in trigram_terms(q):  # LIKE patterns: no wildcard of the person's own
        assert len(term) >= 3 and "%" not in term and "_" not in term
        db.execute("SELECT * FROM t WHERE search_text LIKE ?", (f"%{term}%",))
    for step in route(q):  # the CJK pieces too: 3+ characters for the trigram index
        if isinstance(step, Substring):
            assert all(len(term) >= 3 for term in step.terms)
            for term in step.terms + step.short:
                assert term and "%" not in term and "_" not in term


# -- routing --------------------------------------------------------------------------------


def test_latin_text_goes_to_the_word_index_then_substrings_as_a_fallback() -> None:
    assert route(parse_query("deploying stag*")) == [
        Ranked('"deploying" AND "stag"*'),
        Ranked('"deploying" OR "stag"*', loose=True),
        Substring(("deploying", "stag"), fallback=True),
    ]
    assert route(parse_query("xy zq")) == [
        Ranked('"xy" AND "zq"'),
        Ranked('"xy" OR "zq"', loose=True),
    ]


def test_cjk_text_goes_to_the_trigram_index_and_the_scan() -> None:
    assert route(parse_query("東京タワー 東京")) == [Substring(("東京タワー",), ("東京",))]


# -- what the expressions find in an archive ------------------------------------------------


async def test_natural_questions_find_other_forms_of_their_words(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "So it turns out I'm allergic to sesame.")  # ids 1, 2
    await say(archive, "s1", "p1", "Sprained my knee playing volleyball.")  # 3, 4
    await say(archive, "s1", "p1", "Took a hot shower after the match.")  # 5, 6
    await make_session(archive, "s2", "p1")
    await say(archive, "s2", "p1", "Tom's new car is a Volvo V70.")  # 7, 8
    searcher = Searcher(archive)
    for question, first in (
        ("What did Maya's allergy test show?", 1),
        ("Which knee injury did I get playing volleyball games?", 3),
        ("What car does Tom drive?", 7),
        ("tom's", 7),
    ):
        hits, _ = await searcher.find(question, viewer="p1", limit=3)
        assert hits and hits[0].message_id == first, question
    hits, _ = await searcher.find("What did the allergy test show?", viewer="p1")
    assert 5 not in [h.message_id for h in hits]  # "show" is not "shower"


def test_a_cjk_question_is_cut_into_its_content_pieces() -> None:
    q = parse_query("张伟是做什么工作的？")
    assert cjk_pieces(q) == ["张伟", "工作"]
    assert route(q) == [
        Substring(("张伟是做什么工作的",)),
        Substring((), ("张伟", "工作")),
        Substring((), ("张伟",)),
        Substring((), ("工作",)),
        Grams(("张伟", "工作", "张", "伟", "工", "作")),  # last, loosest: the content grams
    ]
    assert cjk_pieces(parse_query("昨日はどこで寿司を食べましたか")) == ["昨日", "寿司"]
    # a piece of 3+ characters also by its first and last two ("新疆" of "新疆住")
    assert cjk_pieces(parse_query("李娜在新疆住在哪里？")) == ["新疆住", "李娜", "新疆", "疆住"]
    # a word typed alone is not a question: no more pieces, no more steps
    assert cjk_pieces(parse_query("软件工程师")) == ["软件工程师"]
    assert route(parse_query("软件工程师")) == [Substring(("软件工程师",))]
    # with kana it is Japanese: cut at hiragana only (都 is no particle there)
    assert cjk_pieces(parse_query("東京都庁にいつ行った")) == ["東京都庁", "東京", "都庁"]


async def test_a_cjk_question_finds_the_message_with_one_of_its_pieces(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "过敏测试结果出来了，我对牛奶过敏。")  # ids 1, 2
    await say(archive, "s1", "p1", "今天天气很好。")  # 3, 4
    hits, _ = await Searcher(archive).find("李娜对什么过敏？", viewer="p1")
    assert [h.message_id for h in hits] == [1]


def test_a_named_month_is_the_questions_period() -> None:
    dec_2024 = (
        datetime(2024, 12, 1, tzinfo=UTC).timestamp(),
        datetime(2025, 1, 1, tzinfo=UTC).timestamp(),
    )
    for text in (
        "Where was Maya travelling in December 2024?",
        "what did we deploy in dec. 2024",
        "the 2024-12 release",
        "2024年12月李娜在哪里旅行？",
    ):
        assert parse_query(text).period == dec_2024, text
    for text in ("may I ask about 2024", "in May 2024 and June 2024", "December"):
        assert parse_query(text).period is None, text
