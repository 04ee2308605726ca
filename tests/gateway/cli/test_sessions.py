"""``mnemo sessions …`` end to end: real argv, a real ``state.db``, exit codes and output."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.cli import main
from memory.archive.database import Archive, NewMessage, SessionSpec
from tests import REPO_ROOT

ROOT = REPO_ROOT

DM = "What is the weather in Lyon tomorrow?"
RECORDS: list[dict[str, Any]] = [
    # telegram-1's direct chat
    {"session": "chat-1", "person": "telegram-1", "platform": "telegram", "chat": "1",
     "role": "user", "content": DM, "created_at": "2024-05-01T10:00:00+00:00",
     "external_id": "m1"},
    {"session": "chat-1", "person": "telegram-1", "platform": "telegram", "chat": "1",
     "role": "assistant", "content": "Sunny in Lyon, 21 °C.",
     "created_at": "2024-05-01T10:00:05+00:00", "external_id": "m2"},
    {"session": "chat-1", "person": "telegram-1", "platform": "telegram", "chat": "1",
     "role": "user", "content": "Remind me about the dentist appointment",
     "created_at": "2024-05-01T10:01:00+00:00", "external_id": "m3"},
    # discord-2's server channel
    {"session": "guild-7", "person": "discord-2", "platform": "discord", "chat": "77",
     "role": "user", "content": "The staging deploy key lives in the vault",
     "created_at": "2024-06-01T08:00:00+00:00", "external_id": "d1"},
    {"session": "guild-7", "person": "discord-2", "platform": "discord", "chat": "77",
     "role": "assistant", "content": "Noted: the staging key is in the vault.",
     "created_at": "2024-06-01T08:00:03+00:00", "external_id": "d2"},
    # a group chat: telegram-1 and telegram-3 (not discord-2)
    {"session": "group-9", "person": "telegram-1", "platform": "telegram", "chat": "-900",
     "role": "user", "content": "Lunch at the Lyon bistro on Friday?",
     "created_at": "2024-07-01T12:00:00+00:00", "external_id": "g1"},
    {"session": "group-9", "person": "telegram-3", "platform": "telegram", "chat": "-900",
     "role": "user", "content": "Count me in for Friday",
     "created_at": "2024-07-01T12:00:30+00:00", "external_id": "g2"},
]  # fmt: skip


def run(home: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--home", str(home), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(home: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> Any:
    code, out, err = run(home, *argv, "--json", capsys=capsys)
    assert code == 0, err
    return json.loads(out)


def jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def export(home: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code, out, err = run(home, "sessions", "export", *argv, capsys=capsys)
    assert code == 0 and err == ""
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture
def loaded(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """``home`` with RECORDS imported; returns {source session name: archive session id}."""
    code, out, err = run(
        home, "sessions", "import", str(jsonl(tmp_path / "in.jsonl", RECORDS)), capsys=capsys
    )
    assert (code, err) == (0, "")
    assert out == (
        "Read 7 records: imported 7, skipped 0 already archived (same external_id),"
        " in 3 sessions.\n"
    )
    ids = {}
    for item in run_json(home, "sessions", "list", capsys=capsys):
        ids[{"1": "chat-1", "77": "guild-7", "-900": "group-9"}[item["chat_id"]]] = item[
            "session_id"
        ]
    return ids


def test_import_list_show_search_round_trip(
    home: Path, loaded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    listed = run_json(home, "sessions", "list", capsys=capsys)
    assert [s["session_id"] for s in listed] == [
        loaded["group-9"],
        loaded["guild-7"],
        loaded["chat-1"],
    ]  # most recently active first
    group, guild, dm = listed
    assert dm["title"] == DM and dm["platform"] == "telegram" and dm["chat_type"] == "imported"
    assert dm["people"] == ["telegram-1"] and dm["message_count"] == 3
    assert group["people"] == ["telegram-1", "telegram-3"] and group["message_count"] == 2
    assert guild["title"] == "The staging deploy key lives in the vault"
    assert dm["started_at"] == 1714557600.0 and dm["last_active_at"] == 1714557660.0

    code, out, _ = run(home, "sessions", "list", capsys=capsys)
    assert code == 0
    assert f"{loaded['chat-1']}  {DM}" in out
    assert "telegram · imported · telegram-1, telegram-3 · 2 messages" in out
    assert "started 2024-05-01 10:00 UTC · last active 2024-05-01 10:01 UTC" in out
    assert out.index(loaded["group-9"]) < out.index(loaded["guild-7"]) < out.index(loaded["chat-1"])

    shown = run_json(home, "sessions", "show", loaded["chat-1"], capsys=capsys)
    assert shown["session"]["session_id"] == loaded["chat-1"]
    messages = shown["messages"]
    assert [m["content"] for m in messages] == [r["content"] for r in RECORDS[:3]]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [m.get("external_id") for m in messages] == ["m1", "m2", "m3"]
    assert [m.get("speaker") for m in messages] == ["telegram-1", None, "telegram-1"]

    code, out, _ = run(home, "sessions", "show", loaded["chat-1"], capsys=capsys)
    assert code == 0
    assert f"Session {loaded['chat-1']}: {DM}" in out
    assert "people telegram-1" in out
    first = messages[0]["id"]
    assert f"[{first}] 2024-05-01 10:00:00 UTC · user · telegram-1 · external_id m1\n" in out
    assert "\n    Remind me about the dentist appointment\n" in out

    found = run_json(home, "sessions", "search", "dentist", capsys=capsys)
    (hit,) = found["results"]
    assert hit["session_id"] == loaded["chat-1"] and hit["title"] == DM
    assert hit["external_id"] == "m3" and hit["message_id"] == messages[2]["id"]
    assert hit["rank"] == 1 and "[dentist]" in hit["snippet"] and hit["role"] == "user"
    assert hit["when"].startswith("2024-05-01 10:01 UTC")

    code, out, _ = run(home, "sessions", "search", "Lyon", capsys=capsys)
    assert code == 0
    assert f"{loaded['chat-1']}  {DM}" in out and loaded["group-9"] in out
    assert "external_id m1" in out or "external_id m2" in out
    assert "[Lyon]" in out and loaded["guild-7"] not in out


def test_a_person_never_sees_another_persons_session(
    home: Path, loaded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    def listed(person: str) -> set[str]:
        items = run_json(home, "sessions", "list", "--person", person, capsys=capsys)
        return {s["session_id"] for s in items}

    assert listed("telegram-1") == {loaded["chat-1"], loaded["group-9"]}
    assert listed("telegram-3") == {loaded["group-9"]}
    assert listed("discord-2") == {loaded["guild-7"]}
    assert listed("telegram-404") == set()
    assert run(home, "sessions", "list", "--person", "telegram-404", capsys=capsys)[1] == (
        "No sessions with telegram-404.\n"
    )
    assert listed("telegram:1") == listed("telegram-1")  # how config spells people
    code, out, err = run(home, "sessions", "list", "--person", "5001", capsys=capsys)
    assert (code, out) == (2, "") and "unknown person '5001'" in err and "telegram:5001" in err

    # show: a guessed (real) id of someone else's session reads exactly like a missing one
    code, out, err = run(
        home, "sessions", "show", loaded["chat-1"], "--person", "discord-2", capsys=capsys
    )
    assert (code, out) == (1, "")
    code2, out2, err2 = run(
        home, "sessions", "show", "i00000000000000000000", "--person", "discord-2", capsys=capsys
    )
    assert (code2, out2) == (1, "")
    assert err.replace(loaded["chat-1"], "ID") == err2.replace("i00000000000000000000", "ID")
    assert err == f"mnemo: no session '{loaded['chat-1']}' in the history of discord-2\n"
    code, out, _ = run(
        home, "sessions", "show", loaded["chat-1"], "--person", "telegram-3", "--json",
        capsys=capsys,
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert run(home, "sessions", "show", loaded["group-9"], "--person", "telegram-3",
               capsys=capsys)[0] == 0  # fmt: skip

    # search: the words are there, just not for this person
    def hits(query: str, person: str) -> list[str]:
        found = run_json(home, "sessions", "search", query, "--person", person, capsys=capsys)
        return [r["session_id"] for r in found["results"]]

    assert hits("vault", "discord-2") == [loaded["guild-7"]]
    assert hits("vault", "telegram-1") == []
    assert hits("Lyon", "discord-2") == []
    assert hits("Lyon", "telegram-3") == [loaded["group-9"]]
    assert sorted(hits("Lyon", "telegram-1")) == sorted([loaded["chat-1"], loaded["group-9"]])
    code, out, _ = run(home, "sessions", "search", "vault", "--person", "telegram-1", capsys=capsys)
    assert code == 0 and "vault" not in out and "No past messages match" in out

    # export
    assert {r["external_id"] for r in export(home, capsys, "--person", "discord-2")} == {
        "d1",
        "d2",
    }
    assert {r["external_id"] for r in export(home, capsys, "--person", "telegram-3")} == {
        "g1",
        "g2",
    }
    assert len(export(home, capsys)) == len(RECORDS)  # the operator sees everything


BAD_LINES = [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: expected a JSON object"),
    (json.dumps({k: v for k, v in RECORDS[0].items() if k != "role"}), "line 2: missing role"),
    (json.dumps({**RECORDS[0], "role": "system"}), "line 2: role must be 'user' or 'assistant'"),
    (json.dumps({**RECORDS[0], "created_at": "yesterday"}), "line 2: created_at is not ISO-8601"),
    (
        json.dumps({**RECORDS[0], "created_at": "0001-01-01T00:00:00+05:00"}),
        "line 2: created_at is out of range",
    ),
    (json.dumps({**RECORDS[0], "content": None}), "line 2: content must be a string, not null"),
    (json.dumps({**RECORDS[0], "session": None}), "line 2: session must be a string, not null"),
    (json.dumps({**RECORDS[0], "person": "Telegram-1"}), "line 2: invalid person id"),
    (json.dumps({**RECORDS[0], "colour": "red"}), "line 2: unknown key(s) colour"),
]


@pytest.mark.parametrize(("bad", "problem"), BAD_LINES, ids=[p for _, p in BAD_LINES])
def test_a_malformed_line_exits_2_and_imports_nothing(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    bad: str,
    problem: str,
) -> None:
    base = [{**RECORDS[3], "external_id": "base"}]
    assert run(home, "sessions", "import", str(jsonl(tmp_path / "base.jsonl", base)),
               capsys=capsys)[0] == 0  # fmt: skip
    before = export(home, capsys)
    path = tmp_path / "bad.jsonl"
    good = [json.dumps({**RECORDS[i], "external_id": f"new{i}"}) for i in (0, 1)]
    path.write_text(f"{good[0]}\n{bad}\n{good[1]}\n", encoding="utf-8")
    code, out, err = run(home, "sessions", "import", str(path), capsys=capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"mnemo: error: {path}: {problem}")
    assert err.endswith("; nothing was imported\n") and err.count("\n") == 1
    assert export(home, capsys) == before


def test_a_malformed_file_creates_no_archive(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(json.dumps(RECORDS[0]).encode() + b"\n\n\xff\xfe\n")
    code, _, err = run(home, "sessions", "import", str(path), capsys=capsys)
    assert code == 2 and f"{path}: line 3: not valid UTF-8" in err
    assert not (home / "state.db").exists()


def test_reimport_is_idempotent_on_external_id(
    home: Path, loaded: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = run_json(home, "sessions", "list", capsys=capsys)
    summary = run_json(home, "sessions", "import", str(tmp_path / "in.jsonl"), capsys=capsys)
    assert summary == {
        "read": 7,
        "imported": 0,
        "skipped_duplicates": 7,
        "sessions": 3,
        "session_ids": sorted(loaded.values()),
    }
    assert run_json(home, "sessions", "list", capsys=capsys) == before
    more = [RECORDS[0], {**RECORDS[1], "external_id": "m9", "content": "One more thing"}]
    summary = run_json(
        home, "sessions", "import", str(jsonl(tmp_path / "more.jsonl", more)), capsys=capsys
    )
    assert (summary["imported"], summary["skipped_duplicates"]) == (1, 1)
    dm = run_json(home, "sessions", "show", loaded["chat-1"], capsys=capsys)
    assert [m.get("external_id") for m in dm["messages"]] == ["m1", "m2", "m3", "m9"]
    assert dm["session"]["message_count"] == 4
    assert len(export(home, capsys)) == len(RECORDS) + 1


def test_import_reads_stdin(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = "".join(json.dumps(r) + "\n" for r in RECORDS[3:5]).encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + data)))
    summary = run_json(home, "sessions", "import", "-", capsys=capsys)
    assert (summary["read"], summary["imported"], summary["sessions"]) == (2, 2, 1)
    assert [r["content"] for r in export(home, capsys)] == [r["content"] for r in RECORDS[3:5]]


def test_export_then_import_into_a_fresh_home_round_trips(
    home: Path, loaded: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = export(home, capsys)
    assert len(exported) == len(RECORDS)
    # the records keep their shape; `session` names the archive's session
    for record, source in zip(exported, RECORDS, strict=True):
        assert record == {**source, "session": loaded[source["session"]]}
    fresh = tmp_path / "fresh"
    summary = run_json(
        fresh, "sessions", "import", str(jsonl(tmp_path / "export.jsonl", exported)), capsys=capsys
    )
    assert (summary["read"], summary["imported"], summary["sessions"]) == (7, 7, 3)
    again = export(fresh, capsys)
    # The same records, session ids included: an export restores as it was.
    assert again == exported

    def shape(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        keys = ("title", "platform", "chat_id", "people", "message_count", "started_at")
        return [tuple(s[k] for k in keys) for s in items]

    assert shape(run_json(fresh, "sessions", "list", capsys=capsys)) == shape(
        run_json(home, "sessions", "list", capsys=capsys)
    )


def test_importing_an_export_into_the_same_home_adds_nothing(
    home: Path, loaded: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "export.jsonl", export(home, capsys))
    summary = run_json(home, "sessions", "import", str(path), capsys=capsys)
    assert (summary["imported"], summary["skipped_duplicates"]) == (0, len(RECORDS))
    assert len(export(home, capsys)) == len(RECORDS)


def test_check_on_a_healthy_archive(
    home: Path, loaded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(home, "sessions", "check", capsys=capsys)
    assert (code, out) == (0, f"No problems in {home / 'state.db'} (3 sessions, 7 messages).\n")
    report = run_json(home, "sessions", "check", capsys=capsys)
    assert report["problems"] == [] and report["messages"] == 7 and report["exists"] is True


def _drop_one_index_row(db: sqlite3.Connection) -> str:
    """Remove one message from the word index only (an external-content FTS5 'delete')."""
    rowid, text, scope = db.execute(
        "SELECT id, search_text, scope FROM messages WHERE content LIKE '%dentist%'"
    ).fetchone()
    db.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, search_text, scope)"
        " VALUES ('delete', ?, ?, ?)",
        (rowid, text, scope),
    )
    return "dentist"


def _insert_behind_the_triggers(db: sqlite3.Connection) -> str:
    """A write that bypassed the insert trigger: the message exists, neither index has it."""
    (trigger,) = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_ai'"
    ).fetchone()
    sid, scope = db.execute(
        "SELECT id, scope FROM sessions WHERE chat_id = '1'"
    ).fetchone()  # telegram-1's chat
    db.execute("DROP TRIGGER messages_ai")
    db.execute(
        "INSERT INTO messages (session_id, role, speaker, content, created_at, scope)"
        " VALUES (?, 'user', 'telegram-1', 'the quokka photos', 1714557700, ?)",
        (sid, scope),
    )
    db.execute(trigger)
    return "quokka"


@pytest.mark.parametrize("corrupt", [_drop_one_index_row, _insert_behind_the_triggers])
def test_check_finds_index_damage_and_repair_fixes_it(
    home: Path, loaded: dict[str, str], capsys: pytest.CaptureFixture[str], corrupt: Any
) -> None:
    with sqlite3.connect(home / "state.db") as db:
        word = corrupt(db)
    db.close()

    code, out, _ = run(home, "sessions", "check", capsys=capsys)
    assert code == 1
    assert "PROBLEM messages_fts: " in out and "--repair" in out
    report = json.loads(run(home, "sessions", "check", "--json", capsys=capsys)[1])
    assert report["problems"] and all(p.startswith("messages_") for p in report["problems"])

    code, out, _ = run(home, "sessions", "check", "--repair", capsys=capsys)
    assert code == 0
    assert "FOUND   messages_fts: " in out and "Rebuilt the search indexes." in out
    assert out.endswith("(3 sessions, 7 messages).\n") or out.endswith(
        "(3 sessions, 8 messages).\n"
    )
    assert run(home, "sessions", "check", capsys=capsys)[0] == 0
    found = run_json(home, "sessions", "search", word, "--person", "telegram-1", capsys=capsys)
    assert [r["session_id"] for r in found["results"]] == [loaded["chat-1"]]
    assert f"[{word}]" in found["results"][0]["snippet"]  # the word index has it again


def test_unindexed_message_is_invisible_to_search_until_repaired(
    home: Path, loaded: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(home / "state.db") as db:
        _insert_behind_the_triggers(db)
    db.close()
    assert run_json(home, "sessions", "search", "quokka", capsys=capsys)["results"] == []
    report = run_json(home, "sessions", "check", "--repair", capsys=capsys)
    assert report["problems"] == [] and report["repaired"] is True
    assert report["problems_before_repair"][:2] == [
        "messages_fts: 7 indexed rows for 8 messages",
        "messages_trigram: 7 indexed rows for 8 messages",
    ]
    assert len(run_json(home, "sessions", "search", "quokka", capsys=capsys)["results"]) == 1


def test_show_lists_tool_calls_with_their_arguments_and_defuses_terminal_escapes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def seed() -> None:
        async with await Archive.open(home / "state.db") as archive:
            await archive.start_session(
                SessionSpec("s1", "telegram", "5", "dm", ("telegram-5",), title="weather")
            )
            await archive.append_exchange(
                "s1",
                [
                    NewMessage("user", "Weather?\x1b[2J", speaker="telegram-5", created_at=1e9),
                    NewMessage(
                        "assistant",
                        "",
                        tool_calls=[
                            {
                                "id": "c1",
                                "function": {
                                    "name": "weather",
                                    "arguments": '{"city":  "Oslo",\n "note": "\\u001b[2J"}',
                                },
                            }
                        ],
                        created_at=1e9 + 1,
                    ),
                    NewMessage("tool", '{"temp": 12}', tool_call_id="c1", tool_name="weather"),
                    NewMessage("assistant", "12 °C", created_at=1e9 + 2),
                ],
            )

    asyncio.run(seed())
    code, out, _ = run(home, "sessions", "show", "s1", capsys=capsys)
    assert code == 0
    assert '    → weather({"city": "Oslo", "note": "\\u001b[2J"})\n' in out
    assert " · tool · tool weather\n" in out
    assert "Weather?<U+001B>[2J" in out and "\x1b" not in out
    shown = run_json(home, "sessions", "show", "s1", "--person", "telegram-5", capsys=capsys)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert shown["messages"][1]["tool_calls"] == [{"name": "weather"}]
    assert shown["messages"][0]["content"] == "Weather?\x1b[2J"


def test_search_limit(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    many = [
        {**RECORDS[0], "session": f"s{i}", "content": f"kiwi number {i}", "external_id": f"k{i}"}
        for i in range(12)
    ]
    run(home, "sessions", "import", str(jsonl(tmp_path / "k.jsonl", many)), capsys=capsys)

    def count(*argv: str) -> int:
        return len(run_json(home, "sessions", "search", "kiwi", *argv, capsys=capsys)["results"])

    assert count() == 10  # the CLI default
    assert count("--limit", "3") == 3
    assert count("--limit", "50") == 10  # the tool's maximum


def test_reading_an_empty_home_creates_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, "sessions", "list", capsys=capsys)[1] == "No sessions archived yet.\n"
    assert run_json(home, "sessions", "list", capsys=capsys) == []
    assert run(home, "sessions", "show", "s1", capsys=capsys)[:2] == (1, "")
    assert run_json(home, "sessions", "search", "kiwi", capsys=capsys)["results"] == []
    assert export(home, capsys) == []
    assert run_json(home, "sessions", "check", capsys=capsys)["exists"] is False
    assert not (home / "state.db").exists()


class Terminal(io.StringIO):
    """stderr as a terminal: what the CLI checks before it draws a progress line."""

    def isatty(self) -> bool:
        return True

    def take(self) -> str:
        text = self.getvalue()
        self.seek(0)
        self.truncate()
        return text


def test_progress_goes_to_stderr_only_on_a_terminal(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "in.jsonl", RECORDS)
    code, _, err = run(home, "sessions", "import", str(path), capsys=capsys)
    assert (code, err) == (0, "")  # capsys's stderr is not a terminal
    assert export(home, capsys)  # asserts err == ""

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)  # a terminal on stderr, not our own switch
    fresh = tmp_path / "fresh"
    code, out, _ = run(fresh, "sessions", "import", str(path), capsys=capsys)
    err = terminal.take()
    assert code == 0 and err == "\rimporting 7/7 records\n" and out.startswith("Read 7 records")
    code, out, _ = run(fresh, "sessions", "export", capsys=capsys)
    assert code == 0 and terminal.take() == "\rexported 7 records\n"
    assert [json.loads(line)["content"] for line in out.splitlines()] == [
        r["content"] for r in RECORDS
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sessions", "list", "--person", "12345"], "unknown person '12345'"),
        (["sessions", "show", "s1", "--person", "../x"], "unknown person '../x'"),
        (["sessions", "search", "x", "--person", ""], "unknown person ''"),
        (["sessions", "export", "--person", "a b"], "unknown person 'a b'"),
        (["sessions", "list", "--limit", "0"], "expected a positive integer"),
        (["sessions", "search", "   "], "QUERY is empty"),
        (["sessions", "import", "/nonexistent/x.jsonl"], "cannot read /nonexistent/x.jsonl"),
        (["sessions", "frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["--home", str(home), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (home / "state.db").exists()


@pytest.mark.slow
@pytest.mark.parametrize("command", [["list"], ["import", "-"], ["check", "--repair"]])
def test_an_unusable_archive_is_exit_1_without_a_traceback_or_a_hang(
    home: Path, command: list[str]
) -> None:
    (home / "state.db").write_bytes(b"this is not a database" * 100)
    proc = subprocess.run(
        [sys.executable, "-m", "gateway", "--home", str(home), "sessions", *command],
        input="",
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=60,  # a leaked database thread would keep the process alive
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"mnemo: archive {home / 'state.db'}: file is not a database\n"


def test_a_newer_schema_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with sqlite3.connect(home / "state.db") as db:
        db.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        db.execute("INSERT INTO schema_migrations VALUES ('m999_future', 0)")
    db.close()
    code, out, err = run(home, "sessions", "list", capsys=capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"mnemo: archive {home / 'state.db'}: the database records migrations")
