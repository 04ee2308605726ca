"""bench/recall_bench.py on a tiny data set (two people, twelve sessions each): one run of the
real archive and the real session_search tool gives a table with every kind and system;
recall is counted per evidence id; and no system ever returns another person's message."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.recall_bank_base import KINDS
from bench.recall_bench import (
    BASELINES,
    LOCAL,
    SYSTEMS,
    TOOLS,
    Config,
    Result,
    baseline_query,
    baseline_rank,
    build_baselines,
    exchanges,
    main,
    run,
    stored_text,
)
from bench.recall_data import Dataset, Message, Session, generate
from bench.recall_report import figures, header, misses, percentile, recall_at, render
from memory.providers.local import Embedder, embedder

#: with the local provider's search too where its extra is installed (make setup does)
TINY = Config(bank="tune", people=2, sessions=12, local=Embedder.installed() is None)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Result:
    """The model reads the first 8 tokens of a message instead of 64: a tenth of the CPU
    (how much it reads is the benchmark's choice; what is tested here is the table)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedder, "MAX_TOKENS", 8)
        return asyncio.run(run(TINY, tmp_path_factory.mktemp("recall")))


# -- recall ---------------------------------------------------------------------------------


def test_recall_counts_each_evidence_id() -> None:
    evidence = ("p/s1/m4", "p/s7/m2")
    ranking = ["p/s2/m1", "p/s3/m5", "p/s4/m1", "p/s7/m2", "p/s9/m9"]
    assert recall_at(ranking, evidence, 3) == 0.0
    assert recall_at(ranking, evidence, 4) == 0.5
    assert recall_at(ranking, evidence, 10) == 0.5
    assert recall_at([*ranking, "p/s1/m4"], evidence, 10) == 1.0
    assert recall_at([], evidence, 5) == 0.0
    with pytest.raises(ValueError, match="without evidence"):
        recall_at(ranking, (), 3)


def test_percentile_is_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


def test_baseline_query_keeps_content_words_quoted() -> None:
    assert baseline_query("Which city did Inès's sister move to?") == (
        '"city" OR "inès" OR "sister" OR "move"'
    )
    assert baseline_query('What "NEAR(x" OR y*?') == '"near" OR "x" OR "y"'
    assert baseline_query("What is it?") is None


def test_exchanges_start_at_each_user_message() -> None:
    session = generate(bank="tune", people=1, sessions_per_person=12).sessions[0]
    turns = list(exchanges(session))
    assert [m for turn in turns for m in turn] == list(session.messages)
    assert all(turn[0].role == "user" for turn in turns)
    assert all(m.role == "assistant" for turn in turns for m in turn[1:])
    user = next(m for m in session.messages if m.role == "user")
    assert stored_text(user).endswith("\n" + user.text)
    assert stored_text(user).startswith(f"[{user.at:%Y-%m-%d %H:%M} UTC]")
    assert stored_text(user, headers=False) == user.text


# -- one tiny run ---------------------------------------------------------------------------


def test_the_table_has_every_kind_and_system(tiny: Result) -> None:
    table = render(tiny)
    lines = table.splitlines()
    for system in tiny.systems:
        assert system in lines[0]
    counts = tiny.counts()
    for kind in KINDS:
        assert counts[kind] > 0
        row = next(line for line in lines if line.startswith(kind + " "))
        assert row.split()[1] == str(counts[kind])
        assert len(row.split("|")) == 1 + len(tiny.systems)
    assert any(line.startswith("all ") for line in lines)
    assert "bank tune, 2 people" in header(tiny) and "SQLite" in header(tiny)
    data = figures(tiny)
    assert set(data["recall"]) == set(tiny.systems)
    assert all(set(data["recall"][s]) == {*KINDS, "all"} for s in tiny.systems)
    assert set(SYSTEMS) - set(tiny.systems) <= set(LOCAL)
    tools = [system for system in TOOLS if system in tiny.systems]
    assert set(tiny.calls) == set(data["tools"]) == set(tools)
    for system in tools:  # each tool's cost, beside the others
        calls = tiny.calls[system]
        assert len(calls.latencies_ms) == len(calls.output_chars) == len(tiny.questions)
        assert f"{system}: discover, limit 10: latency p50" in table
        assert f"{system}: discover, default arguments (limit 3): output mean" in table


@pytest.mark.skipif(not TINY.local, reason="the local provider's extra is not installed")
def test_the_fused_tool_is_beside_the_others_and_its_ranking_is_counted(
    tiny: Result,
) -> None:
    assert {"ours + local", "local"} <= set(tiny.systems)
    outcomes = tiny.calls["ours + local"].outcomes  # late on a busy machine: words alone
    assert outcomes["ok"] > 0 and outcomes.total() == 2 * len(tiny.questions)
    assert "ours + local: the ranking by meaning answered: ok" in render(tiny)
    assert tiny.rankings["ours + local"] != tiny.rankings["ours"]  # the vectors took part


def test_every_person_asked_has_the_display_name_the_tools_are_told() -> None:
    data = generate(bank="tune", people=10, sessions_per_person=12)
    names = dict(data.names)
    assert {q.person for q in data.questions} <= set(names) and len(names) == 10
    assert all(names.values()) and len(set(names.values())) < 10  # names repeat, ids do not


def test_every_system_answers_every_question_and_finds_something(tiny: Result) -> None:
    for system in tiny.systems:
        assert set(tiny.rankings[system]) == {q.id for q in tiny.questions}
        assert tiny.recall(system, None, 10) > 0.2, system
    for question in tiny.questions:
        hits = tiny.rankings["ours"][question.id]
        assert len(hits) <= 30 and len(set(hits)) == len(hits)  # 10 sessions x 3 matches
        shown = tiny.rankings["ours + context"][question.id]
        assert shown[: len(hits[:1])] == hits[:1]  # the best hit comes first
        assert set(hits) <= set(shown)


def test_misses_show_the_evidence_and_what_ours_showed(tiny: Result) -> None:
    text = misses(tiny, 1)
    blocks = [line for line in text.splitlines() if line.startswith("[")]
    assert 1 <= len(blocks) <= len(KINDS)  # at most one per kind (ours may miss none of some)
    assert len({block.split("]")[0] for block in blocks}) == len(blocks)
    assert "    evidence " in text and "    ours 1. " in text
    heldout = Result(Config(bank="heldout"), 0, 0, (), {})
    with pytest.raises(ValueError, match="not inspected"):
        misses(heldout, 1)


def test_no_system_returns_another_persons_message(tiny: Result) -> None:
    for system in tiny.systems:
        for question in tiny.questions:
            for mid in tiny.rankings[system][question.id]:
                assert mid.startswith(question.person + "/"), (system, question.id, mid)


def test_the_baselines_are_scoped_by_person(tmp_path: Path) -> None:
    """The two people share names and words: unscoped, the same queries reach the other
    person's messages; scoped (baseline_rank), never."""
    data = generate(bank="tune", people=2, sessions_per_person=12)
    content = {m.id: stored_text(m) for s in data.sessions for m in s.messages}
    db = build_baselines(tmp_path / "baseline.db", data, content)
    try:
        crossing = 0
        for question in data.questions:
            match = baseline_query(question.text)
            assert match is not None
            unscoped = db.execute(
                "SELECT m.person FROM fts5 JOIN msgs m ON m.id = fts5.rowid"
                " WHERE fts5 MATCH ? ORDER BY bm25(fts5) LIMIT 10",
                (match,),
            ).fetchall()
            crossing += any(person != question.person for (person,) in unscoped)
            for table in BASELINES:
                ranked = baseline_rank(db, table, question.person, question.text)
                assert all(mid.startswith(question.person + "/") for mid in ranked)
        assert crossing > 0  # otherwise the scoping above was never put to the test
        with pytest.raises(ValueError, match="unknown baseline"):
            baseline_rank(db, "msgs; DROP TABLE msgs", "maya", "x")
    finally:
        db.close()


def test_porter_stems_and_unicode61_does_not(tmp_path: Path) -> None:
    at = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    said = (
        Message("ana/s1/m1", "ana/s1", "user", "We went hiking at dawn in São Miguel.", at),
        Message("ana/s1/m2", "ana/s1", "assistant", "Sounds lovely!", at),
    )
    data = Dataset((Session("ana/s1", "ana", at, said),), ())
    db = build_baselines(tmp_path / "baseline.db", data, {m.id: m.text for m in said})
    try:
        assert baseline_rank(db, "porter", "ana", "Where did Ana hike?") == ["ana/s1/m1"]
        assert baseline_rank(db, "fts5", "ana", "Where did Ana hike?") == []
        assert baseline_rank(db, "fts5", "ana", "hiking in Sao Miguel") == ["ana/s1/m1"]
        assert baseline_rank(db, "fts5", "bo", "hiking") == []
    finally:
        db.close()


def test_main_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "recall.json"
    assert main(["--bank", "tune", "--people", "1", "--sessions", "12", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("recall benchmark: bank tune, 1 people")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["bank"] == "tune" and data["sqlite"] == sqlite3.sqlite_version
    assert data["names"] is True and ", no names" not in printed
    latency = data["tools"]["ours"]["latency_ms"]
    assert latency["p95"] >= latency["p50"] > 0
