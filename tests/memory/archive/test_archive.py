"""The archive's write path and invariants: the contract on SQLite and PostgreSQL
(``archive_store``), and SQLite's own machinery (group commit, WAL, checkpoints, a killed
writer) on real files."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
from pathlib import Path

import pytest

from memory.archive.database import Archive, ArchiveError, NewMessage, read_deadline, scope_token
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore
from tests.archives import searcher_of
from tests.memory.conftest import make_session, say
from tests.memory.zygote import Zygote


async def test_exchange_is_stored_in_order_with_its_metadata(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "telegram-1", key="telegram:dm:1")
    ids = await archive_store.append_exchange(
        "s1",
        [
            NewMessage("user", "What is the weather in Lyon?", speaker="telegram-1"),
            NewMessage(
                "assistant",
                "",
                tool_calls=[
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": "{}"},
                    }
                ],
                prompt_tokens=120,
                completion_tokens=12,
                cached_tokens=100,
            ),
            NewMessage("tool", '{"temp": 12}', tool_call_id="c1", tool_name="weather"),
            NewMessage("assistant", "12 °C and cloudy.", prompt_tokens=150, cached_tokens=120),
        ],
    )
    assert ids == sorted(ids) and len(ids) == 4
    messages = await archive_store.messages("s1", viewer="telegram-1")
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert (
        messages[1].tool_calls is not None
        and messages[1].tool_calls[0]["function"]["name"] == "weather"
    )
    assert (messages[1].prompt_tokens, messages[1].cached_tokens) == (120, 100)
    assert messages[2].tool_name == "weather" and messages[2].tool_call_id == "c1"
    session = await archive_store.get_session("s1", viewer="telegram-1")
    assert session is not None
    assert session.message_count == 4
    assert session.title == "What is the weather in Lyon?"
    assert session.people == ("telegram-1",)
    latest = await archive_store.latest_session("telegram:dm:1")
    assert latest is not None and latest.id == "s1"


async def test_a_failing_exchange_writes_nothing(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    robot = NewMessage("robot", "beep")  # type: ignore[arg-type]  # the point: no such role
    bad = [NewMessage("user", "hello", speaker="p1"), robot]
    with pytest.raises(ArchiveError):
        await archive_store.append_exchange("s1", bad)
    assert await archive_store.messages("s1", viewer=None) == []
    session = await archive_store.get_session("s1", viewer=None)
    assert session is not None and session.message_count == 0
    with pytest.raises(ArchiveError, match="does not exist"):
        await archive_store.append_exchange("nope", [NewMessage("user", "x")])


async def test_exchanges_that_arrive_together_share_a_commit_and_each_is_whole(
    archive: Archive,
) -> None:
    """Group commit: exchanges waiting while the writer commits go into one transaction,
    one savepoint each; a failing one leaves nothing and the others of its group stay."""
    for n in range(40):
        await make_session(archive, f"s{n}", f"p{n}")
    robot = NewMessage("robot", "beep")  # type: ignore[arg-type]  # no such role: it fails
    writer = archive._writer
    before = writer.groups

    async def exchange(n: int) -> list[int]:
        tail = [robot] if n % 7 == 3 else []  # every 7th fails after its user message
        return await archive.append_exchange(
            f"s{n}", [NewMessage("user", f"hello {n}", speaker=f"p{n}"), *tail]
        )

    outcomes = await asyncio.gather(*(exchange(n) for n in range(40)), return_exceptions=True)
    commits = writer.groups - before
    assert commits < 40  # shared commits (the first goes alone; the rest queue behind it)
    for n, outcome in enumerate(outcomes):
        messages = await archive.messages(f"s{n}", viewer=None)
        session = await archive.get_session(f"s{n}", viewer=None)
        assert session is not None
        if n % 7 == 3:
            assert isinstance(outcome, ArchiveError)
            assert messages == [] and session.message_count == 0  # nothing of it
        else:
            assert [m.content for m in messages] == [f"hello {n}"] and outcome == [messages[0].id]
            assert session.message_count == 1
    found, _ = await Searcher(archive).find("hello", viewer=None, limit=50)
    assert len(found) == 40 - len(range(3, 40, 7))  # the indexes hold exactly what committed
    assert not await archive.check()


async def test_a_cancelled_caller_still_gets_its_exchange_written(
    archive_store: ArchiveStore,
) -> None:
    await make_session(archive_store, "s1", "p1")
    task = asyncio.create_task(archive_store.append_exchange("s1", [NewMessage("user", "kept")]))
    await asyncio.sleep(0)  # queued
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    for _ in range(100):
        if await archive_store.messages("s1", viewer=None):
            break
        await asyncio.sleep(0.01)
    assert [m.content for m in await archive_store.messages("s1", viewer=None)] == ["kept"]


async def test_tool_output_is_indexed_on_its_first_8192_characters_only(
    archive_store: ArchiveStore,
) -> None:
    await make_session(archive_store, "s1", "p1")
    long_output = "filler " * 1400 + "zanzibarquartz"  # the marker sits after 9,800 chars
    await archive_store.append_exchange(
        "s1",
        [
            NewMessage("user", "run the report", speaker="p1"),
            NewMessage("tool", "early-marker-word " + long_output, tool_name="report"),
            NewMessage("user", "zanzibarquartz in a user message is indexed", speaker="p1"),
        ],
    )
    stored = await archive_store.messages("s1", viewer="p1")
    assert stored[1].content.endswith("zanzibarquartz")  # the full text is kept
    hits, _ = await searcher_of(archive_store).find("zanzibarquartz", viewer="p1", limit=10)
    assert [h.message_id for h in hits] == [stored[2].id]
    early, _ = await searcher_of(archive_store).find("early-marker-word", viewer="p1")
    assert [h.message_id for h in early] == [stored[1].id]


async def test_a_new_participant_can_search_the_shared_session(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "g1", "telegram-1", chat_type="group")
    await say(archive_store, "g1", "telegram-1", "the quokka picnic is on Saturday")
    searcher = searcher_of(archive_store)
    assert (await searcher.find("quokka", viewer="telegram-2"))[0] == []
    await archive_store.append_exchange(
        "g1", [NewMessage("user", "count me in", speaker="telegram-2")], people=["telegram-2"]
    )
    hits, _ = await searcher.find("quokka", viewer="telegram-2")
    assert [h.session_id for h in hits] == ["g1"]
    session = await archive_store.get_session("g1", viewer="telegram-2")
    assert session is not None and session.people == ("telegram-1", "telegram-2")
    assert await archive_store.check() == []


async def test_child_sessions_share_their_parents_lineage(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1")
    await make_session(archive_store, "s2", "p1", parent="s1")
    await make_session(archive_store, "s3", "p1", parent="s2")
    child = await archive_store.get_session("s3", viewer="p1")
    assert child is not None and (child.parent_id, child.root_id) == ("s2", "s1")
    with pytest.raises(ArchiveError, match="parent session"):
        await make_session(archive_store, "s4", "p1", parent="missing")


async def test_end_session_records_the_reason_once(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "s1", "p1", key="k")
    await archive_store.end_session("s1", "new")
    await archive_store.end_session("s1", "later")
    session = await archive_store.get_session("s1", viewer="p1")
    assert session is not None and session.end_reason == "new" and session.ended_at is not None
    assert await archive_store.latest_session("k") is None


async def test_check_finds_an_index_that_lost_a_row_and_repair_rebuilds_it(
    archive: Archive,
) -> None:
    await make_session(archive, "s1", "p1")
    (first, _) = await say(archive, "s1", "p1", "the heron flew north")
    assert await archive.check() == []
    raw = sqlite3.connect(archive.path)
    raw.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, search_text, scope)"
        " VALUES ('delete', ?, ?, ?)",
        (first, "the heron flew north", scope_token("p1")),
    )
    raw.commit()
    raw.close()
    problems = await archive.check()
    assert any("messages_fts" in p for p in problems)
    await archive.repair()
    assert await archive.check() == []
    hits, _ = await Searcher(archive).find("heron", viewer="p1")
    assert [h.message_id for h in hits] == [first]


WRITER = """
import asyncio, sys
from pathlib import Path
from memory.archive.database import Archive, NewMessage, SessionSpec

async def main(path):
    async with await Archive.open(Path(path)) as archive:
        await archive.start_session(SessionSpec("s1", "telegram", "1", "dm", ("p1",)))
        print("ready", flush=True)
        n = 0
        while True:
            await archive.append_exchange("s1", [
                NewMessage("user", f"question {n} about otters", speaker="p1"),
                NewMessage("tool", f"output {n} " + "data " * 300, tool_name="t"),
                NewMessage("assistant", f"answer {n} about otters"),
            ])
            n += 1

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.slow
async def test_a_writer_killed_mid_exchange_leaves_whole_exchanges_and_consistent_indexes(
    tmp_path: Path, writers: Zygote
) -> None:
    path = tmp_path / "state.db"
    rng = random.Random(4321)
    # a forked writer appends an exchange every fraction of a millisecond and checkpoints
    # every 100: each kill lands somewhere in a transaction or a checkpoint
    for _ in range(6):
        pid = writers.start(WRITER, str(path))
        await asyncio.sleep(rng.uniform(0.05, 0.25))
        os.kill(pid, signal.SIGKILL)
        assert writers.wait(pid) == -signal.SIGKILL
        async with await Archive.open(path) as archive:
            assert await archive.check() == []
            messages = await archive.messages("s1", viewer=None)
            assert len(messages) % 3 == 0 and messages, "only whole exchanges survive"
            for i in range(0, len(messages), 3):
                roles = [m.role for m in messages[i : i + 3]]
                assert roles == ["user", "tool", "assistant"]
                numbers = {m.content.split()[1] for m in messages[i : i + 3]}
                assert len(numbers) == 1
            session = await archive.get_session("s1", viewer=None)
            assert session is not None and session.message_count == len(messages)


async def test_recent_sessions_carry_their_people(archive_store: ArchiveStore) -> None:
    await make_session(archive_store, "g1", "telegram-2", "telegram-1", chat_type="group")
    await make_session(archive_store, "d1", "telegram-1")
    listed = {s.id: s.people for s in await archive_store.sessions(viewer="telegram-1")}
    assert listed == {"g1": ("telegram-1", "telegram-2"), "d1": ("telegram-1",)}
    assert [s.id for s in await archive_store.sessions(viewer="telegram-2")] == ["g1"]


async def test_a_file_that_is_not_a_database_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        await Archive.open(path)


async def test_checkpoints_run_beside_the_writer_and_close_truncates_the_wal(
    tmp_path: Path,
) -> None:
    """SQLite's automatic checkpoint is off (it stalls the commit that crosses it); our own
    checkpointer must still move the WAL into the database while the archive runs."""
    path = tmp_path / "state.db"
    async with await Archive.open(path) as archive:
        await make_session(archive, "s1", "p1")
        start_size = path.stat().st_size
        for n in range(250):
            await say(archive, "s1", "p1", f"message {n} " + "words " * 40)
        await asyncio.sleep(0.2)  # let the last checkpoint (a different thread) finish
        assert path.stat().st_size > start_size  # frames reached the database file
        probe = sqlite3.connect(path)
        (autocheckpoint,) = probe.execute("PRAGMA wal_autocheckpoint").fetchone()
        probe.close()
        assert autocheckpoint == 1000  # a fresh connection's default: the setting is ours
    wal = path.with_name("state.db-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    async with await Archive.open(path) as archive:
        assert len(await archive.messages("s1", viewer=None)) == 500


async def test_a_persons_turns_and_tokens_in_a_window_across_their_sessions(
    archive_store: ArchiveStore,
) -> None:
    """What per-person budgets count: user messages the person spoke since a time, and the
    tokens of the assistant rows answering them (up to the session's next user message)."""
    await make_session(archive_store, "dm", "telegram-1")
    await make_session(archive_store, "group", "telegram-chat--100", chat_type="group")
    old, t = 1_000.0, 5_000.0

    def turn(speaker: str, at: float, *tokens: tuple[int, int]) -> list[NewMessage]:
        rows = [NewMessage("user", "q", speaker=speaker, created_at=at)]
        rows += [
            NewMessage("assistant", "a", prompt_tokens=p, completion_tokens=c, created_at=at)
            for p, c in tokens
        ]
        return rows

    await archive_store.append_exchange("dm", turn("telegram-1", old, (900, 100)))  # before since
    await archive_store.append_exchange(
        "dm", turn("telegram-1", t, (100, 10), (200, 20))
    )  # tool loop
    await archive_store.append_exchange("dm", turn("telegram-1", t + 1))  # a failed turn: no reply
    # in a shared group session: Bo's turn in between is Bo's, not Ada's
    await archive_store.append_exchange("group", turn("telegram-1", t + 2, (1_000, 1)))
    await archive_store.append_exchange("group", turn("telegram-2", t + 3, (50_000, 5)))
    await archive_store.append_exchange("group", turn("telegram-1", t + 4, (3, 4)))
    await archive_store.append_exchange("dm", [NewMessage("user", "carried", created_at=t + 5)])

    assert await archive_store.turn_times("telegram-1", t) == [t + 4, t + 2, t + 1, t]
    assert await archive_store.turn_times("telegram-1", old) == [t + 4, t + 2, t + 1, t, old]
    assert await archive_store.tokens_caused("telegram-1", t) == 110 + 220 + 1_001 + 7
    assert await archive_store.tokens_caused("telegram-2", t) == 50_005
    assert await archive_store.tokens_caused("telegram-3", 0) == 0


def test_the_budget_queries_use_indexes_not_scans(tmp_path: Path) -> None:
    from memory.archive.database import TOKENS_CAUSED_SQL, TURN_TIMES_SQL
    from memory.archive.migrations import migrate

    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        migrate(db)
        db.execute("ANALYZE")
        for sql in (TURN_TIMES_SQL, TOKENS_CAUSED_SQL):
            plan = [
                row[3]
                for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", {"person": "p", "since": 0})
            ]
            assert not [step for step in plan if step.startswith("SCAN")], plan
        assert any("USING INDEX messages_speaker" in step for step in plan)
        assert any("USING INDEX messages_session" in step for step in plan)


async def test_a_steady_stream_of_writes_keeps_the_wal_bounded(tmp_path: Path) -> None:
    """Passive checkpoints cannot finish while writes keep coming, and SQLite starts the WAL
    over only once one has: without the writer's own truncation the WAL grew by ~80 KB an
    exchange for as long as turns kept coming. Nothing is lost on the way."""
    archive = await Archive.open(tmp_path / "state.db")
    archive._writer.wal_limit = 1024 * 1024  # 1 MB instead of 64, so the test stays small
    wal = tmp_path / "state.db-wal"
    await make_session(archive, "s1", "p1")
    sizes = []
    for n in range(260):
        await say(archive, "s1", "p1", f"steady message {n} about the trains", "noted " * 30)
        sizes.append(wal.stat().st_size)
    assert max(sizes) < 8 * 1024 * 1024  # without the truncation: ~17 MB by the end
    assert min(sizes[100:]) < 1024 * 1024  # emptied at a check past the limit
    assert len(await archive.messages("s1", viewer=None, limit=1000)) == 520
    await archive.close()


async def test_reads_under_a_deadline_are_interrupted_and_the_reader_is_freed(
    archive: Archive,
) -> None:
    slow = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000)"
        " SELECT count(*) FROM n"
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    with read_deadline(0.05), pytest.raises(sqlite3.OperationalError, match="interrupt"):
        async with archive.reader() as db:
            await db.execute_fetchall(slow)
    assert loop.time() - started < 2  # the whole count takes many seconds
    for _ in range(3):  # every reader answers again, without a deadline left behind
        async with archive.reader() as db:
            assert list(await db.execute_fetchall("SELECT 1")) == [(1,)]
