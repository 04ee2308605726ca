"""Search (memory/archive/search.py): routing, ranking and scoping of hits, and the typed reads
behind session_search (discover, read, scroll, browse), on SQLite and on PostgreSQL.

The tool's JSON built from these reads: tests/agent_core/tools/test_search.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from memory.archive.database import Archive, NewMessage
from memory.archive.results import (
    Discovery,
    Listed,
    MessageNotInSession,
    Reading,
    Scroll,
    SessionNotFound,
)
from memory.archive.store import ArchiveStore
from tests.archives import searcher_of
from tests.memory.conftest import make_session, say

# -- routing and ranking --------------------------------------------------------------------


async def test_cjk_long_and_short_terms(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await say(archive_store, "s1", "p1", "昨日は東京タワーに行きました")
    await say(archive_store, "s1", "p1", "서울 여행 계획을 세웠어요")
    searcher = searcher_of(archive_store)
    for query in ("東京タワー", "タワー", "東京", "여행"):
        hits, parsed = await searcher.find(query, viewer="p1")
        assert parsed.cjk and len(hits) == 1, query


async def test_substring_falls_back_to_the_trigram_index(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await say(archive_store, "s1", "p1", "the file is supercalifragilistic.yaml")
    hits, _ = await searcher_of(archive_store).find("califragil", viewer="p1")
    assert len(hits) == 1


async def test_the_trigram_index_leads_a_substring_search_before_any_statistics(
    archive: Archive,
) -> None:
    """A new archive has no planner statistics until it is reopened (``PRAGMA optimize``).
    Left to itself, SQLite then walked every message of the person's sessions and probed the
    trigram index once per row: 3 s for one long DM of 40,000 messages, 1 ms with the index
    leading (measured by hand). The plan is checked here, since no timing is."""
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "東京タワーに行きました, supercalifragilistic.yaml")
    searcher = searcher_of(archive, like_scan_rows=0)  # a history larger than the scan
    ran: list[tuple[str, dict[str, Any]]] = []
    hits = searcher.indexes.hits  # type: ignore[attr-defined]

    async def recorded(sql: str, params: dict[str, Any]) -> list[Any]:
        ran.append((sql, params))
        return await hits(sql, params)

    searcher.indexes.hits = recorded  # type: ignore[attr-defined]
    for query in ("東京タワー", "califragil"):
        ran.clear()
        assert len((await searcher.find(query, viewer="p1"))[0]) == 1, query
        sql, params = next((sql, p) for sql, p in ran if "messages_trigram" in sql)
        async with archive.reader() as db:
            assert not await db.execute_fetchall(
                "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'"
            )  # no statistics yet: the case this is about
            plan = await db.execute_fetchall(f"EXPLAIN QUERY PLAN {sql}", params)
        first = next(row[3] for row in plan if row[3].startswith(("SCAN", "SEARCH")))
        assert first.startswith("SCAN t VIRTUAL TABLE"), (query, [row[3] for row in plan])


async def test_natural_questions_find_inflected_words(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await say(archive_store, "s1", "p1", "We deployed the billing service to staging on Tuesday")
    await make_session(archive_store, "s2", "p1")
    await say(archive_store, "s2", "p1", "Lunch was pasta")
    hits, _ = await searcher_of(archive_store).find("when did we deploy billing?", viewer="p1")
    assert [h.session_id for h in hits] == ["s1"]


async def test_bm25_ranks_the_better_match_first_and_sort_orders_by_time(
    archive_store: ArchiveStore,
) -> None:
    await make_session(archive_store, "old", "p1")
    await say(archive_store, "old", "p1", "otters otters otters swim", at=1_000_000.0)
    await make_session(archive_store, "new", "p1")
    await say(
        archive_store, "new", "p1", "one otters mention among many other words here", at=2_000_000.0
    )
    searcher = searcher_of(archive_store)
    ranked, _ = await searcher.find("otters", viewer="p1")
    assert [h.session_id for h in ranked] == ["old", "new"]
    newest, _ = await searcher.find("otters", viewer="p1", sort="newest")
    assert [h.session_id for h in newest] == ["new", "old"]
    oldest, _ = await searcher.find("otters", viewer="p1", sort="oldest")
    assert [h.session_id for h in oldest] == ["old", "new"]


async def test_results_are_deduplicated_by_lineage(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await say(archive_store, "s1", "p1", "the narwhal project kicked off")
    await make_session(archive_store, "s2", "p1", parent="s1")  # continued after compression
    await say(archive_store, "s2", "p1", "narwhal project status: narwhal narwhal")
    await make_session(archive_store, "s3", "p1")
    await say(archive_store, "s3", "p1", "unrelated narwhal trivia")
    hits, _ = await searcher_of(archive_store).find("narwhal", viewer="p1", limit=5)
    assert sorted(h.root_id for h in hits) == ["s1", "s3"]


async def test_global_search_is_for_operators_only(history: ArchiveStore) -> None:
    hits, _ = await searcher_of(history).find("lighthouse", viewer=None, limit=10)
    assert {h.session_id for h in hits} == {"mine", "theirs"}


@pytest.mark.parametrize("scan_rows", [20_000, 1], ids=["history-scan", "trigram-index"])
async def test_substring_search_is_exact_and_scoped_on_both_paths(
    archive_store: ArchiveStore, scan_rows: int
) -> None:
    """A small history is scanned whole; a large one (forced here with scan_rows=1) goes
    through the trigram index. Either way: exact matches, and only the viewer's sessions."""
    await make_session(archive_store, "mine", "p1")
    await say(archive_store, "mine", "p1", "config lives in supercalifragilistic.yaml")
    await say(archive_store, "mine", "p1", "昨日は東京タワーに行きました")
    await make_session(archive_store, "theirs", "p2")
    await say(
        archive_store, "theirs", "p2", "their supercalifragilistic secret and 東京タワー trip"
    )
    searcher = searcher_of(archive_store, like_scan_rows=scan_rows)
    for query in ("califragil", "東京タワー", "タワー"):
        hits, _ = await searcher.find(query, viewer="p1", limit=5)
        assert [h.session_id for h in hits] == ["mine"], query
        everyone, _ = await searcher.find(query, viewer=None, limit=5)
        assert {h.session_id for h in everyone} == {"mine", "theirs"}, query
    near_miss, _ = await searcher.find("califragilX", viewer="p1")
    assert near_miss == []
    snippet = (await searcher.find("califragil", viewer="p1"))[0][0].snippet
    assert "supercalifragilistic.yaml" in snippet


# -- the typed reads ------------------------------------------------------------------------


@pytest.fixture
async def history(archive_store: ArchiveStore) -> ArchiveStore:
    await make_session(archive_store, "mine", "telegram-1")
    for n in range(16):
        await say(
            archive_store, "mine", "telegram-1", f"note {n} about the lighthouse", f"reply {n}"
        )
    await make_session(archive_store, "theirs", "telegram-2")
    await say(archive_store, "theirs", "telegram-2", "my lighthouse password is hunter2", "ok")
    return archive_store


async def test_discover_gives_sessions_their_best_matches_and_neighbours(
    history: ArchiveStore,
) -> None:
    found = await searcher_of(history).discover("lighthouse note 7", viewer="telegram-1")
    assert isinstance(found, Discovery) and found.query == "lighthouse note 7"
    (best,) = found.results
    assert best.session.id == "mine" and best.message.content == "note 7 about the lighthouse"
    assert "[lighthouse]" in best.snippet and found.note is None
    first = best.matches[0]
    assert first.message.id == 15  # user messages are the odd ids: note n is 2n + 1
    assert first.before is not None and first.before.content == "reply 6"
    assert first.after is not None and first.after.content == "reply 7"
    # all three words: note 7 only; then any word adds more of the session, best first
    assert len(best.matches) == 3 and len({m.message.id for m in best.matches}) == 3
    bare = await searcher_of(history).discover(
        "lighthouse", viewer="telegram-1", hits_per_session=1, neighbours=False
    )
    (only,) = bare.results[0].matches
    assert only.before is None and only.after is None


async def test_two_matches_in_one_session_are_both_shown(archive_store: ArchiveStore) -> None:
    """The session's best match is not always the message asked about: an echo of it by the
    assistant can rank first, and the person's own message must still be there."""
    await make_session(archive_store, "s", "p1")
    await say(
        archive_store, "s", "p1", "we adopted a greyhound called Biscuit", "Biscuit! A greyhound!"
    )
    await say(archive_store, "s", "p1", "what's the weather", "sunny")
    found = await searcher_of(archive_store).discover("greyhound Biscuit", viewer="p1")
    contents = {m.message.content for m in found.results[0].matches}
    assert contents == {"we adopted a greyhound called Biscuit", "Biscuit! A greyhound!"}


async def test_the_match_at_a_sessions_edge_has_no_neighbour_there(
    archive_store: ArchiveStore,
) -> None:
    await make_session(archive_store, "s", "p1")
    await say(archive_store, "s", "p1", "first words: ocelot", "fine")
    found = await searcher_of(archive_store).discover("ocelot", viewer="p1")
    (match,) = found.results[0].matches
    assert match.before is None and match.after is not None and match.after.content == "fine"


async def test_discover_says_why_it_found_nothing(history: ArchiveStore) -> None:
    searcher = searcher_of(history)
    empty = await searcher.discover("!!!", viewer="telegram-1")
    assert (
        empty.results == () and empty.parsed.empty and "nothing was searched" in (empty.note or "")
    )
    missing = await searcher.discover("hunter2", viewer="telegram-1")
    assert missing.results == () and (missing.note or "").startswith("No past messages match")
    mine = await searcher.discover("lighthouse", viewer="telegram-1", exclude_session="mine")
    assert mine.results == ()


async def test_discover_can_leave_tool_output_out(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await archive_store.append_exchange(
        "s1",
        [
            NewMessage("user", "check the heron feed", speaker="p1"),
            NewMessage("tool", "heron feed: 3 items", tool_call_id="c"),
        ],
    )
    everything = await searcher_of(archive_store).discover("items", viewer="p1")
    spoken = await searcher_of(archive_store).discover("items", viewer="p1", conversation_only=True)
    assert [r.message.role for r in everything.results] == ["tool"] and spoken.results == ()


async def test_read_is_whole_or_head_and_tail(history: ArchiveStore) -> None:
    searcher = searcher_of(history)
    long = await searcher.read("mine", viewer="telegram-1")
    assert isinstance(long, Reading) and long.omitted == (20, 23)
    assert [m.id for m in long.messages] == [*range(1, 21), *range(23, 33)]
    await make_session(history, "short", "telegram-1")
    await say(history, "short", "telegram-1", "hi")
    short = await searcher.read("short", viewer="telegram-1")
    assert [m.content for m in short.messages] == ["hi", "noted"] and short.omitted is None


async def test_scroll_reads_around_a_message(history: ArchiveStore) -> None:
    scroll = await searcher_of(history).scroll("mine", 10, 2, viewer="telegram-1")
    assert isinstance(scroll, Scroll) and scroll.anchor == 10
    assert [m.id for m in scroll.messages] == [8, 9, 10, 11, 12]
    assert scroll.more_before and scroll.more_after
    edge = await searcher_of(history).scroll("mine", 1, 20, viewer="telegram-1")
    assert edge.messages[0].id == 1 and not edge.more_before


async def test_another_persons_session_is_not_found_like_a_missing_one(
    history: ArchiveStore,
) -> None:
    searcher = searcher_of(history)
    for session_id in ("theirs", "does-not-exist"):
        with pytest.raises(SessionNotFound, match="in your history"):
            await searcher.read(session_id, viewer="telegram-1")
        with pytest.raises(SessionNotFound):
            await searcher.scroll(session_id, 33, 5, viewer="telegram-1")
    with pytest.raises(MessageNotInSession):
        await searcher.scroll("mine", 33, 5, viewer="telegram-1")  # their message id
    assert (await searcher.read("theirs", viewer="telegram-2")).session.id == "theirs"


async def test_browse_lists_recent_sessions_with_their_first_message(history: ArchiveStore) -> None:
    await make_session(history, "empty", "telegram-1")
    listed = await searcher_of(history).browse(10, viewer="telegram-1")
    assert all(isinstance(item, Listed) for item in listed)
    assert [item.session.id for item in listed] == ["empty", "mine"]
    assert listed[0].first is None and listed[1].first is not None
    assert listed[1].first.content == "note 0 about the lighthouse"
    others = await searcher_of(history).browse(10, viewer="telegram-1", exclude_session="empty")
    assert [item.session.id for item in others] == ["mine"]


async def test_a_month_the_question_names_comes_first(archive_store: ArchiveStore) -> None:
    """'in December 2024': the messages written that month are searched first, merged ahead
    of the rest (the stored text holds no date: the header line is not indexed)."""
    december = datetime(2024, 12, 10, 12, tzinfo=UTC).timestamp()
    june = datetime(2025, 6, 3, 12, tzinfo=UTC).timestamp()
    await make_session(archive_store, "winter", "p1")
    await say(archive_store, "winter", "p1", "a quick trip to Lisbon", at=december)
    await make_session(archive_store, "summer", "p1")
    await say(
        archive_store, "summer", "p1", "trip trip trip: Lisbon again, the Lisbon trip", at=june
    )
    searcher = searcher_of(archive_store)
    dated = await searcher.discover("where did my trip go in December 2024?", viewer="p1")
    assert [r.session.id for r in dated.results] == ["winter", "summer"]
    undated = await searcher.discover("where did my trip go?", viewer="p1")
    assert undated.results[0].session.id == "summer"  # bm25 alone prefers the other
