"""The CJK gram index (memory/archive/cjk.py, migration m007; on PostgreSQL the ``grams``
column): 1-2 character CJK terms are found in all of a person's history, only in their
sessions, on both backends; and SQLite's index follows the messages through deletes, new
participants, imports, check and repair."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from pathlib import Path

import pytest

from memory.archive.cjk import grams, indexed
from memory.archive.database import Archive, NewMessage, scope_token
from memory.archive.migrations import MIGRATIONS, migrate
from memory.archive.search import Searcher
from memory.archive.store import ArchiveStore
from tests.archives import searcher_of
from tests.memory.conftest import make_session, say

SCAN = 4  # like_scan_rows: the scan reaches only the newest few messages


def test_grams_are_cjk_characters_and_pairs_with_a_cjk_one() -> None:
    assert grams("昨日は東京へ") == "昨 日 は 東 京 へ 昨日 日は は東 東京 京へ"
    assert grams("2024年5月, ok") == "年 4年 年5 月 5月"
    assert grams("B站 서울에서") == "站 B站 서 울 에 서울 울에 에서"
    assert grams("人々・カタカナ") == "人 々 カ タ ナ 人々 カタ タカ カナ"  # ・ is no letter
    assert grams("plain English, café") is None
    assert grams("") is None
    assert grams(None) is None


def test_indexed_terms_are_one_cjk_character_or_a_pair_with_one() -> None:
    for term in ("東", "東京", "5月", "b站", "서울", "々"):
        assert indexed(term), term
    for term in ("ok", "a", "東京都", "", "東.", "・"):
        assert not indexed(term), term


async def _old_and_new(archive_store: ArchiveStore) -> list[int]:
    """p1's history: the CJK words first, then more messages than the scan reaches."""
    await make_session(archive_store, "mine", "p1")
    first = await say(archive_store, "mine", "p1", "我们在東京开会, 2024年5月。서울에서 만나요. 猫")
    for n in range(2 * SCAN):
        await say(archive_store, "mine", "p1", f"later message {n}", f"reply {n}")
    return first


@pytest.mark.parametrize(
    "query", ["東京", "开会", "会", "5月", "서울", "猫", "東京 开会", "我们 会"]
)
async def test_a_short_cjk_word_beyond_the_scan_is_found(
    archive_store: ArchiveStore, query: str
) -> None:
    first = await _old_and_new(archive_store)
    searcher = searcher_of(archive_store, like_scan_rows=SCAN)
    hits, parsed = await searcher.find(query, viewer="p1")
    assert parsed.cjk
    assert [h.message_id for h in hits] == [first[0]]
    everyone, _ = await searcher.find(query, viewer=None)
    assert [h.message_id for h in everyone] == [first[0]]
    assert query.split(maxsplit=1)[0] in hits[0].snippet
    # the scan alone (before the index) misses it: what this index is for
    before, _ = await searcher_of(archive_store, like_scan_rows=SCAN, cjk_index=False).find(
        query, viewer="p1"
    )
    assert before == []


async def test_short_cjk_terms_stay_exact(archive_store: ArchiveStore) -> None:
    first = await _old_and_new(archive_store)
    searcher = searcher_of(archive_store, like_scan_rows=SCAN)
    for query in ("京都会", "東会", "犬", "东京"):  # not in the text (东 is not 東)
        hits, _ = await searcher.find(query, viewer="p1")
        assert hits == [], query
    hits, _ = await searcher.find("B月", viewer="p1")
    assert hits == []
    hits, _ = await searcher.find("4年", viewer="p1")  # a digit beside a CJK character
    assert [h.message_id for h in hits] == [first[0]]


@pytest.mark.parametrize("query", ["東京 meeting", "会议 2024", "meeting 东京"])
async def test_mixed_queries_beyond_the_scan(archive_store: ArchiveStore, query: str) -> None:
    await make_session(archive_store, "mine", "p1")
    (found, _) = await say(archive_store, "mine", "p1", "东京 meeting: 会议 2024 in 東京")
    await say(archive_store, "mine", "p1", "a meeting in 2024 without the CJK word")
    await say(archive_store, "mine", "p1", "東京 and 会议 without the other words")
    for n in range(2 * SCAN):
        await say(archive_store, "mine", "p1", f"later message {n}")
    hits, _ = await searcher_of(archive_store, like_scan_rows=SCAN).find(query, viewer="p1")
    assert [h.message_id for h in hits] == [found]


async def test_a_person_finds_short_cjk_words_only_in_their_sessions(
    archive_store: ArchiveStore,
) -> None:
    """Privacy on the gram path: the index matches the viewer's scope token and the query
    joins session_people; a new participant finds the session's earlier messages."""
    mine = await _old_and_new(archive_store)
    await make_session(archive_store, "theirs", "p2")
    (theirs, _) = await say(archive_store, "theirs", "p2", "秘密: 東京の猫")
    searcher = searcher_of(archive_store, like_scan_rows=SCAN)
    for query in ("東京", "猫", "秘密"):
        hits, _ = await searcher.find(query, viewer="p1", limit=5)
        assert theirs not in [h.message_id for h in hits], query
        hits, _ = await searcher.find(query, viewer="p2", limit=5)
        assert [h.message_id for h in hits] == [theirs], query
        hits, _ = await searcher.find(query, viewer="stranger", limit=5)
        assert hits == [], query
    everyone, _ = await searcher.find("東京", viewer=None, limit=5)
    assert {h.message_id for h in everyone} == {mine[0], theirs}
    await archive_store.append_exchange(  # p1 joins: the session's earlier messages re-scoped
        "theirs", [NewMessage("user", "hello", speaker="p1")], people=("p1",)
    )
    hits, _ = await searcher.find("秘密", viewer="p1")
    assert [h.message_id for h in hits] == [theirs]
    assert await archive_store.check() == []


async def test_a_question_finds_content_written_as_single_characters(
    archive_store: ArchiveStore,
) -> None:
    """李娜买了什么车: the pieces of two or more characters (李娜, 娜买) are in no message;
    the content is 买 and 车. The last step ranks messages by the question's grams they hold:
    both characters before one, and only the asker's; without the gram index, nothing."""
    await make_session(archive_store, "mine", "p1")
    (car, _) = await say(archive_store, "mine", "p1", "我们昨天终于买车了：比亚迪汉")
    await make_session(archive_store, "mine too", "p1")
    (bought, _) = await say(archive_store, "mine too", "p1", "昨天买了一本书")
    await say(archive_store, "mine too", "p1", "今天天气很好")
    await make_session(archive_store, "theirs", "p2")
    (theirs, _) = await say(archive_store, "theirs", "p2", "李娜买了新车")
    for n in range(2 * SCAN):
        await say(archive_store, "mine too", "p1", f"later message {n}")
    searcher = searcher_of(archive_store, like_scan_rows=SCAN)
    hits, _ = await searcher.find("李娜买了什么车？", viewer="p1", limit=5)
    assert [h.message_id for h in hits] == [car, bought]
    assert "买车" in hits[0].snippet
    hits, _ = await searcher.find("李娜买了什么车？", viewer="p2", limit=5)
    assert [h.message_id for h in hits] == [theirs]  # found whole by a piece; nothing of p1
    hits, _ = await searcher.find("李娜买了什么车？", viewer="stranger", limit=5)
    assert hits == []
    newest, _ = await searcher.find("李娜买了什么车？", viewer="p1", limit=5, sort="newest")
    assert [h.message_id for h in newest] == [bought, car]
    off = searcher_of(archive_store, like_scan_rows=SCAN, cjk_index=False)
    assert (await off.find("李娜买了什么车？", viewer="p1", limit=5))[0] == []


async def test_a_word_typed_alone_is_not_loosened_to_its_characters(
    archive_store: ArchiveStore,
) -> None:
    await make_session(archive_store, "mine", "p1")
    await say(archive_store, "mine", "p1", "东边的房间和京剧")  # 东, 京 and 房, never 东京 or 房子
    searcher = searcher_of(archive_store, like_scan_rows=SCAN)
    for words in ("东京", "东京的房子"):  # words to find as typed, not a question
        assert (await searcher.find(words, viewer="p1"))[0] == [], words
    hits, _ = await searcher.find("东京的房子怎么样", viewer="p1")  # a question: loosened
    assert len(hits) == 1


async def test_a_stale_scope_token_only_hides(archive: Archive) -> None:
    """Even a gram row that names a person (written behind the writer's back) shows them
    nothing of a session they are not in: the query also joins session_people."""
    await make_session(archive, "theirs", "p2")
    (theirs, _) = await say(archive, "theirs", "p2", "東京の秘密")
    raw = sqlite3.connect(archive.path)
    raw.execute(
        "UPDATE messages_cjk SET scope = scope || ' ' || ? WHERE rowid = ?",
        (scope_token("p1"), theirs),
    )
    raw.commit()
    raw.close()
    hits, _ = await Searcher(archive, like_scan_rows=SCAN).find("東京", viewer="p1")
    assert hits == []


async def _grams_of(archive: Archive) -> dict[int, str]:
    async with archive.reader() as db:
        rows = await db.execute_fetchall("SELECT rowid, grams FROM messages_cjk")
    return {row[0]: row[1] for row in rows}


async def test_only_cjk_messages_have_gram_rows_and_deleting_removes_them(
    archive: Archive,
) -> None:
    await make_session(archive, "s1", "p1")
    (cjk, plain) = await say(archive, "s1", "p1", "東京で会議", "noted, in English")
    await make_session(archive, "s2", "p1")
    (other, _) = await say(archive, "s2", "p1", "会议在北京")
    assert set(await _grams_of(archive)) == {cjk, other}
    assert plain not in await _grams_of(archive)

    def forget(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM messages WHERE id = ?", (cjk,))
        db.execute("DELETE FROM sessions WHERE id = 's2'")  # its messages go by cascade

    await archive.transact(forget)
    assert await _grams_of(archive) == {}
    assert await archive.check() == []
    hits, _ = await Searcher(archive).find("東京", viewer="p1")
    assert hits == []


async def test_a_delete_by_hand_needs_no_python(archive: Archive) -> None:
    """The triggers are plain SQL: the sqlite3 shell can forget a message."""
    await make_session(archive, "s1", "p1")
    (cjk, _) = await say(archive, "s1", "p1", "東京で会議")
    raw = sqlite3.connect(archive.path)
    raw.execute("DELETE FROM messages WHERE id = ?", (cjk,))
    raw.commit()
    raw.close()
    assert await _grams_of(archive) == {}
    assert await archive.check() == []


async def test_changed_content_drops_the_row_and_check_and_repair_notice(
    archive: Archive,
) -> None:
    await make_session(archive, "s1", "p1")
    (cjk, _) = await say(archive, "s1", "p1", "東京で会議")
    raw = sqlite3.connect(archive.path)
    raw.execute("UPDATE messages SET content = '大阪で会議' WHERE id = ?", (cjk,))
    raw.commit()
    raw.close()
    assert await _grams_of(archive) == {}
    problems = await archive.check()
    assert any("messages_cjk" in p for p in problems)
    await archive.repair()
    assert await archive.check() == []
    searcher = Searcher(archive, like_scan_rows=SCAN)
    assert [h.message_id for h in (await searcher.find("大阪", viewer="p1"))[0]] == [cjk]
    assert (await searcher.find("東京", viewer="p1"))[0] == []


async def test_imported_cjk_messages_are_indexed(archive: Archive) -> None:
    lines = [
        json.dumps(
            {
                "session": "chat-1",
                "person": "p1",
                "platform": "telegram",
                "chat": "1",
                "role": role,
                "content": text,
                "created_at": f"2024-05-0{n + 1}T10:00:00+00:00",
                "external_id": f"x{n}",
            },
            ensure_ascii=False,
        )
        for n, (role, text) in enumerate(
            [("user", "上海の天気は?"), ("assistant", "sunny"), ("user", "thanks")]
        )
    ]
    report = await archive.import_records(lines)
    assert report.imported == 3
    assert len(await _grams_of(archive)) == 1
    hits, _ = await Searcher(archive, like_scan_rows=SCAN).find("上海", viewer="p1")
    assert len(hits) == 1
    again = await archive.import_records(lines)
    assert again.imported == 0 and len(await _grams_of(archive)) == 1
    assert await archive.check() == []


async def test_m007_backfills_an_archive_written_before_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An archive at m006 gets its CJK rows (in batches, scoped) when it is opened; the
    upgrade is logged, and its short CJK words are then found beyond the scan."""
    caplog.set_level(logging.INFO, logger="memory.archive")
    path = tmp_path / "state.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        migrate(db, MIGRATIONS[:6])
        assert "m007" not in MIGRATIONS[5].name
        for sid, person in (("s1", "ana"), ("s2", "bo")):
            db.execute(
                "INSERT INTO sessions (id, root_id, platform, chat_id, chat_type, started_at,"
                " last_active_at, scope, message_count) VALUES (?, ?, 'telegram', ?, 'dm', 0, 0,"
                " ?, 0)",
                (sid, sid, sid, scope_token(person)),
            )
            db.execute("INSERT INTO session_people VALUES (?, ?)", (sid, person))
        texts = [("s1", "ana", "[2025-03-02 09:00 UTC]\n昨日は東京に行きました")]
        texts += [("s2", "bo", "東京の秘密")]
        texts += [("s1", "ana", f"english message {n}") for n in range(5_000)]
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO messages (session_id, role, content, created_at, scope)"
            " VALUES (?, 'user', ?, 0, ?)",
            [(sid, text, scope_token(person)) for sid, person, text in texts],
        )
        db.execute("COMMIT")
    async with await Archive.open(path) as archive:
        assert await archive.check() == []
        assert set(await _grams_of(archive)) == {1, 2}
        searcher = Searcher(archive, like_scan_rows=SCAN)
        hits, _ = await searcher.find("東京", viewer="ana")
        assert [h.message_id for h in hits] == [1]
        hits, _ = await searcher.find("東京", viewer="bo")
        assert [h.message_id for h in hits] == [2]
    assert any("m007_cjk_gram_index" in r.getMessage() for r in caplog.records)


def test_the_backfill_goes_in_bounded_batches(tmp_path: Path) -> None:
    """More CJK messages than one batch: every one is indexed, none twice."""
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db", isolation_level=None)) as db:
        migrate(db, MIGRATIONS[:6])
        db.execute(
            "INSERT INTO sessions (id, root_id, platform, chat_id, chat_type, started_at,"
            " last_active_at, scope) VALUES ('s1', 's1', 'telegram', '1', 'dm', 0, 0, 'x')"
        )
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', ?, ?, 0)",
            [("user", f"第{n}号 東京" if n % 2 else f"number {n}") for n in range(5_001)],
        )
        db.execute("COMMIT")
        migrate(db)
        (rows,) = db.execute("SELECT count(*) FROM messages_cjk").fetchone()
        assert rows == 2_500
        (found,) = db.execute(
            "SELECT count(*) FROM messages_cjk WHERE messages_cjk MATCH '\"東京\"'"
        ).fetchone()
        assert found == 2_500
        db.execute("INSERT INTO messages_cjk(messages_cjk, rank) VALUES ('integrity-check', 1)")
