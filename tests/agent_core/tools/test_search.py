"""The session_search tool's JSON (agent_core/tools/search.py) over a real archive: the
contract the model reads, and that no result ever reaches another person's messages (that,
hostile queries and import on SQLite and PostgreSQL alike)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from agent_core.tools.search import SearchTool, session_search_tool
from memory.archive.database import Archive, NewMessage
from memory.archive.store import ArchiveStore
from tests.memory.archive.test_query import _HOSTILE
from tests.memory.conftest import make_session, say


@given(_HOSTILE)
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
async def test_no_query_ever_raises(archive_store: ArchiveStore, text: str) -> None:
    if not await archive_store.get_session("s1", viewer=None):
        await make_session(archive_store, "s1", "p1")
        await say(archive_store, "s1", "p1", "deploy the 東京 app (v2) with scope: NEAR rank")
    result = await tool_of(archive_store).call({"query": text}, viewer="p1")
    assert result["success"] is True
    assert result["mode"] == ("discover" if text.strip() else "browse")


def tool_of(archive: ArchiveStore) -> SearchTool:
    """The tool over either backend's archive (``tests.archives.archive_store``)."""
    return SearchTool(archive)


# -- the tool contract ----------------------------------------------------------------------

MESSAGE_KEYS = {"id", "role", "created_at", "when", "content", "truncated"}
SESSION_KEYS = {"session_id", "title", "platform", "chat_type", "started_at", "last_active_at",
                "when", "message_count"}  # fmt: skip


async def fill_history(archive: ArchiveStore) -> ArchiveStore:
    """telegram-1's session "mine" (messages 1-32) and telegram-2's "theirs" (33, 34)."""
    await make_session(archive, "mine", "telegram-1")
    for n in range(16):
        await say(archive, "mine", "telegram-1", f"note {n} about the lighthouse", f"reply {n}")
    await make_session(archive, "theirs", "telegram-2")
    await say(
        archive, "theirs", "telegram-2", "my lighthouse password is hunter2 zebra", "zebra ok"
    )
    return archive


@pytest.fixture
async def history(archive: Archive) -> Archive:
    await fill_history(archive)
    return archive


RESULT_KEYS = {"session_id", "title", "platform", "chat_type", "when", "message_count",
               "matches"}  # fmt: skip


async def test_discover_shape(history: Archive) -> None:
    result = await SearchTool(history).call({"query": "lighthouse note 7"}, viewer="telegram-1")
    assert result["success"] is True and result["mode"] == "discover"
    (best,) = result["results"]
    assert set(best) == RESULT_KEYS and best["session_id"] == "mine"
    first, *others = best["matches"]
    assert first["id"] == 15 and first["role"] == "user" and "UTC" in first["when"]
    assert first["content"] == "note 7 about the lighthouse"
    assert first["before"] == {"id": 14, "role": "assistant", "content": "reply 6"}
    # "reply 7" matches "7" (any word, after all words found one session): it is a match of
    # its own, so it is not repeated as the neighbour after note 7
    assert "after" not in first and 16 in {m["id"] for m in others}
    assert len(others) == 2


async def test_every_result_shows_its_own_matches(archive: Archive) -> None:
    for n in range(3):
        await make_session(archive, f"s{n}", "p1")
        await say(archive, "s" + str(n), "p1", f"pelican sighting number {n}")
    result = await SearchTool(archive).call({"query": "pelican", "limit": 3}, viewer="p1")
    assert len(result["results"]) == 3
    for item in result["results"]:
        (match,) = item["matches"]
        assert match["content"].startswith("pelican sighting") and match["after"]["id"]


async def test_a_message_is_shown_once_per_result(archive: Archive) -> None:
    """A neighbour that is a match, or already another match's neighbour, is not repeated."""
    await make_session(archive, "s", "p1")
    await say(archive, "s", "p1", "the heron came back", "a heron, nice")
    result = await SearchTool(archive).call({"query": "heron"}, viewer="p1")
    matches = result["results"][0]["matches"]
    assert {m["id"] for m in matches} == {1, 2}
    assert all("before" not in m or m["before"]["id"] not in {1, 2} for m in matches)
    assert all("after" not in m or m["after"]["id"] not in {1, 2} for m in matches)


async def test_the_default_call_stays_small_on_long_chatty_messages(archive: Archive) -> None:
    """3 sessions x 3 matches with neighbours: excerpts around the words, not whole
    messages (scroll reads those), so the default JSON stays near 4,000 characters."""
    filler = "and then we talked about the weather and the trains for a long while " * 30
    for n in range(5):
        await make_session(archive, f"s{n}", "p1")
        for k in range(6):
            await say(archive, f"s{n}", "p1", f"{filler} the osprey {k}", f"{filler} ok {k}")
    result = await SearchTool(archive).call({"query": "osprey"}, viewer="p1")
    assert [len(r["matches"]) for r in result["results"]] == [3, 3, 3]
    assert len(json.dumps(result, ensure_ascii=False)) <= 5000
    for item in result["results"]:
        ids = [m["id"] for m in _messages_in({"results": [item]})]
        assert len(ids) == len(set(ids))  # the neighbour between two matches is shown once
    assert all("osprey" in m["content"] for r in result["results"] for m in r["matches"])


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


async def test_long_messages_are_excerpts_around_the_words(archive: Archive) -> None:
    await make_session(archive, "s1", "p1")
    await say(archive, "s1", "p1", "x" * 3000 + " albatross " + "z" * 3000, "y" * 2000)
    result = await SearchTool(archive).call({"query": "albatross"}, viewer="p1")
    match = result["results"][0]["matches"][0]
    assert "albatross" in match["content"] and len(match["content"]) <= 202
    assert match["content"].startswith("…") and match["content"].endswith("…")
    assert len(match["after"]["content"]) <= 82
    scrolled = await SearchTool(archive).call(
        {"session_id": "s1", "around_message_id": match["id"], "window": 1}, viewer="p1"
    )
    assert scrolled["messages"][0]["truncated"] is True  # scroll reads up to 4,000


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
    tool = session_search_tool(
        SearchTool(history), person="telegram-1", current_session=lambda: None
    )
    result = json.loads(await tool.invoke(json.dumps(args)))
    assert result["success"] is False and isinstance(result["error"], str)


async def test_limits_are_clamped(archive: Archive) -> None:
    for n in range(12):
        await make_session(archive, f"s{n:02d}", "p1")
        await say(archive, f"s{n:02d}", "p1", "puffin")
    tool = SearchTool(archive)
    assert len((await tool.call({"query": "puffin", "limit": 50}, viewer="p1"))["results"]) == 10
    assert len((await tool.call({"query": "puffin"}, viewer="p1"))["results"]) == 3


# -- privacy ----------------------------------------------------------------------------------


#: What telegram-1 tries to reach telegram-2's session "theirs" (messages 33 and 34) with.
ATTEMPTS: list[dict[str, Any]] = [
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


async def attempt_theirs(tool: SearchTool) -> None:
    """Every attempt of ``ATTEMPTS`` answers nothing of "theirs"."""
    for args in ATTEMPTS:
        result = await tool.call(args, viewer="telegram-1")
        dumped = json.dumps(result)
        assert "zebra" not in dumped.replace('"query": "zebra"', ""), args
        assert '"session_id": "theirs"' not in dumped, args
        assert not {33, 34} & {m["id"] for m in _messages_in(result)}, args


async def test_a_person_never_reaches_another_persons_messages(archive_store: ArchiveStore) -> None:
    """On both backends: the tool's every mode, with every attempt, shows nothing of theirs."""
    tool = tool_of(await fill_history(archive_store))
    await attempt_theirs(tool)
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
        for match in item["matches"]:
            found += [match, *(match[side] for side in ("before", "after") if side in match)]
    return found


async def test_import_then_search_returns_external_ids(archive_store: ArchiveStore) -> None:
    lines = [
        json.dumps({"session": "chat-9", "person": "telegram-5", "platform": "telegram",
                    "chat": "9", "role": "user", "content": "the kestrel nest is on the roof",
                    "created_at": "2025-05-01T10:00:00+00:00", "external_id": "tg-9-1"}),
        json.dumps({"session": "chat-9", "person": "telegram-5", "platform": "telegram",
                    "chat": "9", "role": "assistant", "content": "Noted the kestrel.",
                    "created_at": "2025-05-01T10:00:05Z", "external_id": "tg-9-2"}),
    ]  # fmt: skip
    report = await archive_store.import_records(lines)
    assert (report.read, report.imported, report.skipped_duplicates) == (2, 2, 0)
    again = await archive_store.import_records(lines)
    assert (again.imported, again.skipped_duplicates) == (0, 2)
    result = await tool_of(archive_store).call({"query": "kestrel nest"}, viewer="telegram-5")
    best = result["results"][0]
    assert best["matches"][0]["external_id"] == "tg-9-1"
    assert best["matches"][0]["when"].startswith("2025-05-01 10:00 UTC")
    exported = [r async for r in archive_store.export_records(viewer="telegram-5")]
    assert [r["external_id"] for r in exported] == ["tg-9-1", "tg-9-2"]
    assert exported[0]["person"] == "telegram-5" and exported[1]["role"] == "assistant"
    assert [r async for r in archive_store.export_records(viewer="telegram-6")] == []
    assert (await tool_of(archive_store).call({"query": "kestrel"}, viewer="telegram-6"))[
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
    (match,) = (m for m in result["results"][0]["matches"] if m["role"] == "assistant")
    assert match["tool_calls"] == [{"name": "memory"}]
