"""The archive's contract on both backends (``archive_store``: SQLite and PostgreSQL): a
person never reaches another person's messages through any read, hostile queries are only
text, and JSONL import and export round-trip the same way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from memory.archive.records import NewMessage
from memory.archive.results import MessageNotInSession, SessionNotFound
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore
from tests.archives import searcher_of
from tests.memory.archive.test_query import _HOSTILE
from tests.memory.conftest import make_session, say

SECRET = ("hunter2", "zebra", "東京の秘密", "califragil")


@pytest.fixture
async def two(archive_store: ArchiveStore) -> ArchiveStore:
    """telegram-1's "mine" (messages 1-32) and telegram-2's "theirs" (33-36); a group both
    are in (37, 38)."""
    await make_session(archive_store, "mine", "telegram-1")
    for n in range(16):
        await say(
            archive_store, "mine", "telegram-1", f"note {n} about the lighthouse", f"reply {n}"
        )
    await make_session(archive_store, "theirs", "telegram-2")
    await say(
        archive_store, "theirs", "telegram-2", "my lighthouse password is hunter2 zebra", "ok"
    )
    await say(archive_store, "theirs", "telegram-2", "東京の秘密 supercalifragilistic", "東京")
    await make_session(archive_store, "group", "telegram-1", "telegram-2", chat_type="group")
    await say(archive_store, "group", "telegram-2", "lighthouse picnic on Sunday", "fun")
    return archive_store


QUERIES = [
    "hunter2",
    "password",
    "lighthouse password",
    "unte",
    "califragil",
    "zebra",
    "東京",
    "秘密",
    "京の",
    "hunter*",
    '"my lighthouse password"',
    "lighthouse",
]


def _leaks(text: str) -> bool:
    return any(secret in text for secret in SECRET)


async def test_a_person_never_reaches_another_persons_messages(two: ArchiveStore) -> None:
    """Every read telegram-1 can make, with every query, sort and window: nothing of
    "theirs" (ids 33-36) and "theirs" is not found exactly like a missing session."""
    theirs = {33, 34, 35, 36}
    for scan_rows in (20_000, 1):  # the small-history scan and the indexes
        search = searcher_of(two, like_scan_rows=scan_rows)
        for query in QUERIES:
            for sort in ("relevance", "newest", "oldest"):
                found = await search.discover(query, viewer="telegram-1", limit=10, sort=sort)
                for result in found.results:
                    assert result.session.id != "theirs", (query, sort)
                    for match in result.matches:
                        shown = [match.message, match.before, match.after]
                        ids = {m.id for m in shown if m is not None}
                        assert not ids & theirs, (query, sort)
                        assert not _leaks(match.snippet) or result.session.id == "group"
            hits, _ = await search.find(query, viewer="telegram-1", limit=10)
            assert not {h.message_id for h in hits} & theirs, query
    await _reads_refuse_theirs(searcher_of(two), two)


async def _reads_refuse_theirs(search: Searcher, archive: ArchiveStore) -> None:
    for session_id in ("theirs", "does-not-exist"):
        with pytest.raises(SessionNotFound) as refused:
            await search.read(session_id, viewer="telegram-1")
        assert str(refused.value) == f"No session {session_id!r} in your history."
        with pytest.raises(SessionNotFound):
            await search.scroll(session_id, 33, 20, viewer="telegram-1")
        assert await archive.get_session(session_id, viewer="telegram-1") is None
        assert await archive.messages(session_id, viewer="telegram-1") == []
    with pytest.raises(MessageNotInSession):
        await search.scroll("mine", 33, 5, viewer="telegram-1")  # their id in my session
    listed = await search.browse(50, viewer="telegram-1")
    assert {item.session.id for item in listed} == {"mine", "group"}
    assert {s.id for s in await archive.sessions(viewer="telegram-1", limit=50)} == {
        "mine",
        "group",
    }
    exported = [r async for r in archive.export_records(viewer="telegram-1")]
    assert exported and not any(_leaks(r["content"]) for r in exported)
    assert (await archive.usage_since(0, viewer="telegram-1"))["turns"] == 17
    # the owner does reach it, and so does someone who joins the session later
    owner = await search.discover("hunter2", viewer="telegram-2")
    assert owner.results[0].session.id == "theirs"
    await archive.append_exchange(
        "theirs", [NewMessage("user", "hello", speaker="telegram-3")], people=["telegram-3"]
    )
    joined = await search.discover("东京 秘密 hunter2", viewer="telegram-3")
    assert joined.results == ()  # 东 is not 東: nothing, rather than a guess
    late = await search.discover("hunter2", viewer="telegram-3")
    assert late.results[0].session.id == "theirs"


async def test_an_operator_sees_everything(two: ArchiveStore) -> None:
    hits, _ = await searcher_of(two).find("lighthouse", viewer=None, limit=10)
    assert {h.session_id for h in hits} == {"mine", "theirs", "group"}
    assert await two.people() == ["telegram-1", "telegram-2"]
    assert await two.counts() == {"sessions": 3, "messages": 38, "people": 2}


@given(_HOSTILE)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
async def test_no_query_ever_raises(archive_store: ArchiveStore, text: str) -> None:
    """Quotes, operators of FTS5 and of tsquery, LIKE wildcards, backslashes: only text."""
    if not await archive_store.get_session("s1", viewer=None):
        await make_session(archive_store, "s1", "p1")
        await say(
            archive_store, "s1", "p1", "deploy the 東京 app (v2) with scope: NEAR rank & <-> :*"
        )
    search = searcher_of(archive_store, like_scan_rows=1)
    for sort in ("relevance", "newest"):
        found = await search.discover(text, viewer="p1", sort=sort)
        assert found.query == text


def _record(content: str, external_id: str, role: str = "user", **more: Any) -> str:
    base = {"session": "chat-9", "person": "telegram-5", "platform": "telegram", "chat": "9",
            "role": role, "content": content, "created_at": "2025-05-01T10:00:00+00:00",
            "external_id": external_id}  # fmt: skip
    return json.dumps(base | more)


async def test_import_export_round_trip(archive_store: ArchiveStore) -> None:
    lines = [
        _record("the kestrel nest is on the roof, 東京", "tg-9-1"),
        _record("Noted the kestrel.", "tg-9-2", role="assistant"),
        _record("no id here", "tg-9-3").replace(', "external_id": "tg-9-3"', ""),
    ]
    report = await archive_store.import_records(lines)
    assert (report.read, report.imported, report.skipped_duplicates) == (3, 3, 0)
    again = await archive_store.import_records(lines[:2])
    assert (again.imported, again.skipped_duplicates) == (0, 2)
    (sid,) = report.sessions
    session = await archive_store.get_session(sid, viewer="telegram-5")
    assert session is not None and session.message_count == 3
    assert session.title == "the kestrel nest is on the roof, 東京"
    assert session.people == ("telegram-5",) and session.chat_type == "imported"
    search = searcher_of(archive_store, like_scan_rows=1)
    for query in ("kestrel nest", "東京"):
        found = await search.discover(query, viewer="telegram-5")
        assert found.results[0].message.external_id == "tg-9-1", query
        assert (await search.discover(query, viewer="telegram-6")).results == ()
    exported = [r async for r in archive_store.export_records(viewer="telegram-5")]
    assert [r["external_id"] for r in exported[:2]] == ["tg-9-1", "tg-9-2"]
    assert exported[2]["external_id"].startswith("mnemo:")
    assert [r async for r in archive_store.export_records(viewer="telegram-6")] == []
    # the export imports again as nothing new: its session ids and mnemo: ids are ours
    back = await archive_store.import_records(json.dumps(r) for r in exported)
    assert (back.imported, back.skipped_duplicates) == (0, 3)
    assert await archive_store.check() == []


async def test_the_header_line_is_left_out_of_the_index_but_the_name(
    archive_store: ArchiveStore,
) -> None:
    """``[2026-11-30 09:30 UTC · Tom Hardy]``: the speaker's name is searchable, the date and
    time (the message's ``created_at``) are not, and tool output counts to 8,192 chars."""
    await make_session(archive_store, "g", "p1", chat_type="group")
    await say(
        archive_store, "g", "p1", "[2026-11-30 09:30 UTC · Tom Hardy]\nthe ferry leaves at noon"
    )
    search = searcher_of(archive_store)
    for query in ("Hardy", "ferry noon", "Tom ferry"):
        assert len((await search.find(query, viewer="p1"))[0]) == 1, query
    for query in ("UTC", "09:30", "2026-11-30"):
        assert (await search.find(query, viewer="p1"))[0] == [], query


async def test_an_empty_viewer_is_a_person_who_took_part_in_nothing(two: ArchiveStore) -> None:
    """Only None is the operator: a falsy viewer must not drop the scope anywhere."""
    assert (await searcher_of(two).find("lighthouse", viewer=""))[0] == []
    assert (await searcher_of(two).discover("lighthouse", viewer="")).results == ()
    assert await two.sessions(viewer="") == []
    assert await two.get_session("mine", viewer="") is None
    assert await two.messages("mine", viewer="") == []
    assert await two.usage_since(0, viewer="") == {
        "turns": 0,
        "prompt": 0,
        "completion": 0,
        "cached": 0,
    }
    assert [r async for r in two.export_records(viewer="")] == []


async def test_an_archive_knows_its_size_and_it_grows(archive_store: ArchiveStore) -> None:
    empty = await archive_store.size_bytes()
    await make_session(archive_store, "s1", "telegram-5")
    for n in range(50):
        await say(archive_store, "s1", "telegram-5", f"message {n} " + "lorem ipsum " * 400)
    assert await archive_store.size_bytes() > empty > 0
