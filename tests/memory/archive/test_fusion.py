"""A ranking by meaning fused into discover (memory/archive/fusion.py, ``Searcher(semantic=)``)
over a real archive, with rankers that answer what each test needs: the fused order, the
groups, and that whatever a ranker answers, only what the viewer may see comes back.

The real ranker (the local provider's vectors, wired through agent_core.recall):
tests/agent_core/tools/test_search_fused.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Sequence

import pytest

from memory.archive.database import Archive
from memory.archive.fusion import Fusion, fuse, grouped
from memory.archive.results import Hit
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore
from tests.archives import searcher_of
from tests.memory.conftest import make_session, say


class Ranker:
    """Answers ``ids`` (or raises ``fails``), and records what it was asked."""

    def __init__(self, ids: Sequence[int] = (), fails: BaseException | None = None) -> None:
        self.ids = list(ids)
        self.fails = fails
        self.asked: list[tuple[str, str, int]] = []
        self.names: list[tuple[str, ...]] = []  # what the viewer was called, per call

    async def __call__(
        self, viewer: str, query: str, limit: int, *, names: Sequence[str]
    ) -> Sequence[int]:
        self.asked.append((viewer, query, limit))
        self.names.append(tuple(names))
        if self.fails is not None:
            raise self.fails
        return self.ids[:limit]


def test_fuse_adds_reciprocal_ranks_with_weights() -> None:
    assert fuse([1, 2, 3], [3, 4]) == [3, 1, 2, 4]  # 3 is in both rankings
    assert fuse([1, 2], []) == [1, 2] and fuse([], [5, 6]) == [5, 6]
    assert fuse([1], [2]) == [1, 2]  # equal scores: the words' first
    assert fuse([1], [2], Fusion(words=1.0, meaning=2.0)) == [2, 1]
    assert fuse([1, 2, 3, 4], [4], Fusion(k=0)) == [4, 1, 2, 3]  # 1/4 + 1/1 beats 1/1
    # a loose step's hit (any of the terms) weighs less than one that had all of them
    assert fuse([1, 2], [3], loose={1}) == [3, 2, 1]
    assert fuse([1, 2], [], loose={2}) == [1, 2]  # alone, the words keep their order


def test_grouped_keeps_lineages_in_order_and_further_matches_from_the_top() -> None:
    hits = [Hit(n, f"s{n % 3}", f"s{n % 3}", 0.0, "") for n in range(12)]
    groups = grouped(hits, 2, 3)
    assert [[h.message_id for h in group] for group in groups] == [[0, 3, 6], [1, 4, 7]]
    top = grouped(hits, 3, 3, further_within=5)  # 5..11 may only open a lineage
    assert [[h.message_id for h in group] for group in top] == [[0, 3], [1, 4], [2]]


@pytest.fixture
async def two_people(archive_store: ArchiveStore) -> ArchiveStore:
    """Ana's sessions a1 (her kitten) and a2 (running), Ben's b1; ids 1-4, 5-6, 7-8."""
    return await fill_two_people(archive_store)


async def fill_two_people(archive_store: ArchiveStore) -> ArchiveStore:
    await make_session(archive_store, "a1", "telegram-1")
    await say(archive_store, "a1", "telegram-1", "I adopted a grey kitten called Miso", "lovely")
    await say(archive_store, "a1", "telegram-1", "the vet said Miso is healthy", "good news")
    await make_session(archive_store, "a2", "telegram-1")
    await say(archive_store, "a2", "telegram-1", "training for a half marathon", "go for it")
    await make_session(archive_store, "b1", "telegram-2")
    await say(archive_store, "b1", "telegram-2", "my cat Pixel knocks things over", "cats do")
    return archive_store


async def test_what_meaning_finds_joins_the_words_and_is_shown_like_them(
    two_people: ArchiveStore,
) -> None:
    ranker = Ranker([1, 5])  # "which pet lives with me": no word of it is in either message
    found = await searcher_of(two_people, semantic=ranker).discover(
        "which pet lives with me", viewer="telegram-1"
    )
    assert ranker.asked == [("telegram-1", "which pet lives with me", 100)]
    assert ranker.names == [()]  # no names given: none passed on
    assert [r.session.id for r in found.results] == ["a1", "a2"]
    assert [m.message.id for m in found.results[0].matches] == [1]
    assert found.results[0].matches[0].after is not None  # with its neighbours, as a match
    words_only = await searcher_of(two_people).discover(
        "which pet lives with me", viewer="telegram-1"
    )
    assert words_only.results == () and words_only.note is not None


async def test_the_viewers_names_reach_the_ranker_and_change_nothing_else(
    two_people: ArchiveStore,
) -> None:
    """What the viewer is called goes to the ranker as given; the words and the answer do
    not depend on it (the ranker here answers the same either way)."""
    ranker = Ranker([1, 5])
    searcher = searcher_of(two_people, semantic=ranker)
    named = await searcher.discover("which pet", viewer="telegram-1", names=("Ana", "Ana S"))
    unnamed = await searcher.discover("which pet", viewer="telegram-1")
    assert ranker.names == [("Ana", "Ana S"), ()]
    assert named == unnamed


async def test_a_ranker_never_reaches_past_the_viewers_scope(two_people: ArchiveStore) -> None:
    """Every id of the archive_store, another person's and the running session's first: none of
    them comes back, for the viewer and for the excluded session alike."""
    ranker = Ranker([7, 8, 5, 6, 1, 2, 3, 4])
    searcher = searcher_of(two_people, semantic=ranker, fusion=Fusion(further_within=0))
    found = await searcher.discover(
        "cat", viewer="telegram-1", limit=10, exclude_session="a2", hits_per_session=10
    )
    shown = {m.message.id for r in found.results for m in r.matches}
    assert shown == {1, 2, 3, 4}
    assert {r.session.id for r in found.results} == {"a1"}
    for result in found.results:
        for match in result.matches:
            assert {n.id for n in (match.before, match.after) if n is not None} <= {1, 2, 3, 4}
    theirs = await searcher.discover("cat", viewer="telegram-3", limit=10)
    assert theirs.results == ()


async def test_an_operators_search_and_one_by_time_use_the_words_alone(
    two_people: ArchiveStore,
) -> None:
    ranker = Ranker([5, 1])
    searcher = searcher_of(two_people, semantic=ranker)
    await searcher.discover("marathon", viewer=None)
    newest = await searcher.discover("marathon", viewer="telegram-1", sort="newest")
    assert ranker.asked == [] and [m.message.id for m in newest.results[0].matches] == [5]


@pytest.mark.parametrize(
    "ranker", [Ranker(), Ranker(fails=OSError("vectors gone")), Ranker(fails=TimeoutError())]
)
async def test_a_ranker_that_answers_nothing_or_fails_leaves_the_words_exactly(
    two_people: ArchiveStore, ranker: Ranker, caplog: pytest.LogCaptureFixture
) -> None:
    plain, fused = searcher_of(two_people), searcher_of(two_people, semantic=ranker)
    for query in ("Miso", "kitten vet", "cat", "marathon kitten", "nothing here", "", "??"):
        for limit in (1, 3, 10):
            expected = await plain.discover(query, viewer="telegram-1", limit=limit)
            with caplog.at_level(logging.WARNING):
                assert await fused.discover(query, viewer="telegram-1", limit=limit) == expected
    if ranker.fails is not None:
        assert "the ranking by meaning failed" in caplog.text


async def test_a_word_search_that_fails_cancels_the_ranker(archive: Archive) -> None:
    """The word index is gone (renamed under the archive by another connection): discover
    raises what SQLite said, and the ranker it started meanwhile is cancelled, not leaked."""
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def slow(viewer: str, query: str, limit: int, *, names: Sequence[str]) -> Sequence[int]:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return []

    await fill_two_people(archive)
    with contextlib.closing(sqlite3.connect(archive.path)) as other, other:
        other.execute("ALTER TABLE messages_fts RENAME TO messages_fts_gone")
    searcher = Searcher(archive, semantic=slow)
    with pytest.raises(sqlite3.OperationalError, match="messages_fts"):
        await searcher.discover("Miso", viewer="telegram-1")
    assert started.is_set()
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_a_named_month_keeps_meaning_to_that_month(archive_store: ArchiveStore) -> None:
    march, june = 1_741_000_000.0, 1_749_000_000.0  # 2025-03-03, 2025-06-04
    await make_session(archive_store, "m", "p1")
    await say(archive_store, "m", "p1", "we hiked up the volcano", at=march)
    await make_session(archive_store, "j", "p1")
    await say(archive_store, "j", "p1", "we climbed the mountain", at=june)
    ranker = Ranker([3, 1])  # June's first
    fused = searcher_of(archive_store, semantic=ranker)
    found = await fused.discover("what did we do outdoors in March 2025", viewer="p1")
    assert {m.message.id for r in found.results for m in r.matches} <= {1, 2}
    anywhen = searcher_of(archive_store, semantic=ranker, fusion=Fusion(in_period=False))
    found = await anywhen.discover("what did we do outdoors in March 2025", viewer="p1")
    assert 3 in {m.message.id for r in found.results for m in r.matches}
