"""Search: hostile queries, routing, ranking, scoping, and the session_search contract."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.archive.database import Archive, NewMessage
from memory.archive.search import (
    MAX_QUERY_CHARS,
    Searcher,
    SearchTool,
    fts_all,
    fts_any,
    parse_query,
    trigram_terms,
)
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
    assert fts_any(q) == '"deploy"* OR "stag"*'


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
    db.execute("CREATE VIRTUAL TABLE w USING fts5(search_text, scope)")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(search_text, scope, tokenize='trigram')")
    for expr in (fts_all(q), fts_any(q)):
        if expr is not None:
            db.execute("SELECT * FROM w WHERE w MATCH ?", (f"search_text : ({expr})",))
    for term in trigram_terms(q):  # LIKE patterns: no wildcard of the person's own
        assert len(term) >= 3 and "%" not in term and "_" not in term
        db.execute("SELECT * FROM t WHERE search_text LIKE ?", (f"%{term}%",))


@given(_HOSTILE)
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
async def test_no_query_ever_raises(archive: Archive, text: str) -> None:
    if not await archive.get_session("s1", viewer=None):
        await make_session(archive, "s1", "p1")
        await say(archive, "s1", "p1", "deploy the 東京 app (v2) with scope: NEAR rank")
    result = await SearchTool(archive).call({"query": text}, viewer="p1")
    assert result["success"] is True
    assert result["mode"] == ("discover" if text.strip() else "browse")


# -- routing and ranking --------------------------------------------------------------------


async def test_cjk_long_and_short_terms(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "昨日は東京タワーに行きました")
    await say(archive, "s1", "p1", "서울 여행 계획을 세웠어요")
    searcher = Searcher(archive)
    for query in ("東京タワー", "タワー", "東京", "여행"):
        hits, parsed = await searcher.find(query, viewer="p1")
        assert parsed.cjk and len(hits) == 1, query


async def test_substring_falls_back_to_the_trigram_index(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "the file is supercalifragilistic.yaml")
    hits, _ = await Searcher(archive).find("califragil", viewer="p1")
    assert len(hits) == 1


async def test_natural_questions_find_inflected_words(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "We deployed the billing service to staging on Tuesday")
    await make_session(archive, "s2", "p1")
    await say(archive, "s2", "p1", "Lunch was pasta")
    hits, _ = await Searcher(archive).find("when did we deploy billing?", viewer="p1")
    assert [h.session_id for h in hits] == ["s1"]


async def test_bm25_ranks_the_better_match_first_and_sort_orders_by_time(archive: Archive) -> None:
    await make_session(archive, "old", "p1")
    await say(archive, "old", "p1", "otters otters otters swim", at=1_000_000.0)
    await make_session(archive, "new", "p1")
    await say(
        archive, "new", "p1", "one otters mention among many other words here", at=2_000_000.0
    )
    searcher = Searcher(archive)
    ranked, _ = await searcher.find("otters", viewer="p1")
    assert [h.session_id for h in ranked] == ["old", "new"]
    newest, _ = await searcher.find("otters", viewer="p1", sort="newest")
    assert [h.session_id for h in newest] == ["new", "old"]
    oldest, _ = await searcher.find("otters", viewer="p1", sort="oldest")
    assert [h.session_id for h in oldest] == ["old", "new"]


async def test_results_are_deduplicated_by_lineage(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "the narwhal project kicked off")
    await make_session(archive, "s2", "p1", parent="s1")  # continued after compression
    await say(archive, "s2", "p1", "narwhal project status: narwhal narwhal")
    await make_session(archive, "s3", "p1")
    await say(archive, "s3", "p1", "unrelated narwhal trivia")
    hits, _ = await Searcher(archive).find("narwhal", viewer="p1", limit=5)
    assert sorted(h.root_id for h in hits) == ["s1", "s3"]


# -- the tool contract ----------------------------------------------------------------------

MESSAGE_KEYS = {"id", "role", "created_at", "when", "content", "truncated"}
SESSION_KEYS = {"session_id", "title", "platform", "chat_type", "started_at", "last_active_at",
                "when", "message_count"}  # fmt: skip


@pytest.fixture
async def history(archive: Archive) -> Archive:
    await make_session(archive, "mine", "telegram-1")
    for n in range(16):
        await say(archive, "mine", "telegram-1", f"note {n} about the lighthouse", f"reply {n}")
    await make_session(archive, "theirs", "telegram-2")
    await say(
        archive, "theirs", "telegram-2", "my lighthouse password is hunter2 zebra", "zebra ok"
    )
    return archive


async def test_discover_shape(history: Archive) -> None:
    result = await SearchTool(history).call({"query": "lighthouse note 7"}, viewer="telegram-1")
    assert result["success"] is True and result["mode"] == "discover"
    (best,) = result["results"]
    assert set(best) >= SESSION_KEYS and best["session_id"] == "mine"
    assert set(best["message"]) >= MESSAGE_KEYS and "note 7" in best["message"]["content"]
    assert "[lighthouse]" in best["snippet"]
    ids = [m["id"] for m in best["context"]]
    assert best["message"]["id"] in ids and len(ids) == 11  # ±5 around the anchor
    assert [m["content"] for m in best["bookends"]["first"]][:1] == ["note 0 about the lighthouse"]
    assert best["bookends"]["last"][-1]["content"] == "reply 15"


async def test_discover_compact_results_after_the_best(archive: Archive) -> None:
    for n in range(3):
        await make_session(archive, f"s{n}", "p1")
        await say(archive, "s" + str(n), "p1", f"pelican sighting number {n}")
    result = await SearchTool(archive).call({"query": "pelican", "limit": 3}, viewer="p1")
    best, *rest = result["results"]
    assert "context" in best and "bookends" in best
    assert len(rest) == 2 and all("context" not in r and "message" in r for r in rest)


async def test_discover_excludes_the_current_session(history: Archive) -> None:
    tool = SearchTool(history)
    result = await tool.call(
        {"query": "lighthouse"}, viewer="telegram-1", current_session_id="mine"
    )
    assert result["results"] == [] and "No past messages" in result["note"]


async def test_read_short_and_long_sessions(history: Archive) -> None:
    tool = SearchTool(history)
    long = await tool.call({"session_id": "mine"}, viewer="telegram-1")
    assert long["mode"] == "read" and set(long["session"]) >= SESSION_KEYS
    assert len(long["messages"]) == 30  # first 20 + last 10 of 32
    assert [m["id"] for m in long["messages"]] == [*range(1, 21), *range(23, 33)]
    assert long["messages"][-1]["content"] == "reply 15"
    assert "around_message_id" in long["hint"] and "between 20 and 23" in long["hint"]
    assert long["omitted"] == {"after_message_id": 20, "before_message_id": 23}
    await make_session(history, "short", "telegram-1")
    await say(history, "short", "telegram-1", "hi")
    short = await tool.call({"session_id": "short"}, viewer="telegram-1")
    assert [m["content"] for m in short["messages"]] == ["hi", "noted"]
    assert "hint" not in short


async def test_scroll_window_and_edges(history: Archive) -> None:
    tool = SearchTool(history)
    result = await tool.call(
        {"session_id": "mine", "around_message_id": 10, "window": 2}, viewer="telegram-1"
    )
    assert result["mode"] == "scroll" and result["anchor_message_id"] == 10
    assert [m["id"] for m in result["messages"]] == [8, 9, 10, 11, 12]
    assert result["more_before"] and result["more_after"]
    edge = await tool.call(
        {"session_id": "mine", "around_message_id": 1, "window": 20}, viewer="telegram-1"
    )
    assert edge["messages"][0]["id"] == 1 and not edge["more_before"]
    missing = await tool.call({"session_id": "mine", "around_message_id": 999}, viewer="telegram-1")
    assert missing["success"] is False


async def test_browse_lists_recent_sessions_with_previews(history: Archive) -> None:
    result = await SearchTool(history).call({}, viewer="telegram-1")
    assert result["mode"] == "browse"
    (only,) = result["sessions"]
    assert set(only) >= SESSION_KEYS and only["preview"] == "note 0 about the lighthouse"
    assert only["message_count"] == 32


async def test_long_messages_are_truncated_with_a_flag(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "albatross " + "x" * 5000, "y" * 2000)
    result = await SearchTool(archive).call({"query": "albatross"}, viewer="p1")
    best = result["results"][0]
    assert best["message"]["truncated"] is True and len(best["message"]["content"]) == 4001
    first = best["bookends"]["first"][0]
    assert first["truncated"] is True and len(first["content"]) == 1201


@pytest.mark.parametrize(
    "args",
    [
        {"limit": "many"},
        {"sort": "random"},
        {"session_id": 5},
        {"around_message_id": 3},
        {"query": ["x"]},
        {"unknown": 1},
        {"window": True},
    ],
)
async def test_bad_arguments_are_results(history: Archive, args: dict[str, Any]) -> None:
    result = await SearchTool(history).call(args, viewer="telegram-1")
    assert result["success"] is False and isinstance(result["error"], str)


async def test_limits_are_clamped(archive: Archive) -> None:
    for n in range(12):
        await make_session(archive, f"s{n:02d}", "p1")
        await say(archive, f"s{n:02d}", "p1", "puffin")
    tool = SearchTool(archive)
    assert len((await tool.call({"query": "puffin", "limit": 50}, viewer="p1"))["results"]) == 10
    assert len((await tool.call({"query": "puffin"}, viewer="p1"))["results"]) == 3


# -- privacy ----------------------------------------------------------------------------------


async def test_a_person_never_reaches_another_persons_messages(history: Archive) -> None:
    tool = SearchTool(history)
    attempts: list[dict[str, Any]] = [
        {"query": "hunter2"},
        {"query": "password"},
        {"query": "lighthouse password", "limit": 10},
        {"query": "hunter2", "sort": "newest"},
        {"query": "unte"},  # trigram fallback
        {},
        {"session_id": "theirs"},
        {"query": "zebra"},
        {"session_id": "theirs", "around_message_id": 33},
        {"session_id": "theirs", "around_message_id": 34, "window": 20},
        {"session_id": "mine", "around_message_id": 33},  # their message id in my session
    ]
    for args in attempts:
        result = await tool.call(args, viewer="telegram-1")
        dumped = json.dumps(result)
        assert "zebra" not in dumped.replace('"query": "zebra"', ""), args
        assert '"session_id": "theirs"' not in dumped, args
        assert not {33, 34} & {m["id"] for m in _messages_in(result)}, args
    missing = await tool.call({"session_id": "does-not-exist"}, viewer="telegram-1")
    guessed = await tool.call({"session_id": "theirs"}, viewer="telegram-1")
    assert missing["error"].replace("does-not-exist", "X") == guessed["error"].replace(
        "theirs", "X"
    )
    # the owner does find it
    owner = await tool.call({"query": "hunter2"}, viewer="telegram-2")
    assert owner["results"][0]["session_id"] == "theirs"


def _messages_in(result: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(result.get("messages", []))
    for item in result.get("results", []):
        found += [item["message"], *item.get("context", [])]
        found += [
            *item.get("bookends", {}).get("first", []),
            *item.get("bookends", {}).get("last", []),
        ]
    return found


async def test_global_search_is_for_operators_only(history: Archive) -> None:
    hits, _ = await Searcher(history).find("lighthouse", viewer=None, limit=10)
    assert {h.session_id for h in hits} == {"mine", "theirs"}


async def test_import_then_search_returns_external_ids(archive: Archive) -> None:
    lines = [
        json.dumps({"session": "chat-9", "person": "telegram-5", "platform": "telegram",
                    "chat": "9", "role": "user", "content": "the kestrel nest is on the roof",
                    "created_at": "2025-05-01T10:00:00+00:00", "external_id": "tg-9-1"}),
        json.dumps({"session": "chat-9", "person": "telegram-5", "platform": "telegram",
                    "chat": "9", "role": "assistant", "content": "Noted the kestrel.",
                    "created_at": "2025-05-01T10:00:05Z", "external_id": "tg-9-2"}),
    ]  # fmt: skip
    report = await archive.import_records(lines)
    assert (report.read, report.imported, report.skipped_duplicates) == (2, 2, 0)
    again = await archive.import_records(lines)
    assert (again.imported, again.skipped_duplicates) == (0, 2)
    result = await SearchTool(archive).call({"query": "kestrel nest"}, viewer="telegram-5")
    best = result["results"][0]
    assert best["message"]["external_id"] == "tg-9-1"
    assert best["started_at"] == pytest.approx(1746093600.0)
    exported = [r async for r in archive.export_records(viewer="telegram-5")]
    assert [r["external_id"] for r in exported] == ["tg-9-1", "tg-9-2"]
    assert exported[0]["person"] == "telegram-5" and exported[1]["role"] == "assistant"
    assert [r async for r in archive.export_records(viewer="telegram-6")] == []
    assert (await SearchTool(archive).call({"query": "kestrel"}, viewer="telegram-6"))[
        "results"
    ] == []


async def test_assistant_tool_calls_are_named_in_results(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await archive.append_exchange(
        "s1",
        [
            NewMessage("user", "save that I like jasmine tea", speaker="p1"),
            NewMessage("assistant", "saving jasmine preference",
                       tool_calls=[{"id": "c", "type": "function",
                                    "function": {"name": "memory", "arguments": "{}"}}]),
        ],
    )  # fmt: skip
    result = await SearchTool(archive).call({"query": "jasmine saving"}, viewer="p1")
    assert result["results"][0]["message"]["tool_calls"] == [{"name": "memory"}]


@pytest.mark.parametrize("scan_rows", [20_000, 1], ids=["history-scan", "trigram-index"])
async def test_substring_search_is_exact_and_scoped_on_both_paths(
    archive: Archive, scan_rows: int
) -> None:
    """A small history is scanned whole; a large one (forced here with scan_rows=1) goes
    through the trigram index. Either way: exact matches, and only the viewer's sessions."""
    await make_session(archive, "mine", "p1")
    await say(archive, "mine", "p1", "config lives in supercalifragilistic.yaml")
    await say(archive, "mine", "p1", "昨日は東京タワーに行きました")
    await make_session(archive, "theirs", "p2")
    await say(archive, "theirs", "p2", "their supercalifragilistic secret and 東京タワー trip")
    searcher = Searcher(archive, like_scan_rows=scan_rows)
    for query in ("califragil", "東京タワー", "タワー"):
        hits, _ = await searcher.find(query, viewer="p1", limit=5)
        assert [h.session_id for h in hits] == ["mine"], query
        everyone, _ = await searcher.find(query, viewer=None, limit=5)
        assert {h.session_id for h in everyone} == {"mine", "theirs"}, query
    near_miss, _ = await searcher.find("califragilX", viewer="p1")
    assert near_miss == []
    snippet = (await searcher.find("califragil", viewer="p1"))[0][0].snippet
    assert "supercalifragilistic.yaml" in snippet
