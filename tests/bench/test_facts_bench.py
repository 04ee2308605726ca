"""bench/facts_bench.py with one tiny run: a row per kind, every path, each figure a share of
the questions asked; a direct question (its words are the fact's) is found by the words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.facts_bench import PATHS, first_sessions, main
from memory.providers.local import embedder

pytest.importorskip("onnxruntime", reason="the local provider's extra: pip install 'mnemo[local]'")
pytestmark = pytest.mark.slow


def test_first_sessions_keeps_the_order_and_drops_repeats() -> None:
    assert first_sessions(["b", "b", "a", "c", "d"]) == ["b", "a", "c"]
    assert first_sessions(["a"]) == ["a"]


def test_a_tiny_run_prints_a_row_per_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model reads 8 tokens of a message instead of 64 (no vector figure is asserted)."""
    monkeypatch.setattr(embedder, "MAX_TOKENS", 8)
    out = tmp_path / "facts.json"
    argv = ["--messages", "600", "--people", "3", "--facts", "6", "--threads", "1"]
    assert main([*argv, "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert all(path in table for path in PATHS)
    figures = json.loads(out.read_text())
    recall = figures["recall"]
    assert set(recall) == {"direct", "paraphrase", "all"} and figures["facts"] == 6
    assert recall["all"]["asked"] == recall["direct"]["asked"] + recall["paraphrase"]["asked"]
    assert recall["all"]["asked"] == 3 * 6  # each fact asked three ways
    assert recall["paraphrase"]["asked"] >= 6  # at least one paraphrase a fact
    for row in recall.values():
        assert all(0.0 <= row[path] <= 1.0 for path in PATHS)
    assert recall["direct"]["words"] >= 0.8  # the fact's own words find its session
    # the fused paths find a direct question too (its words are in the fact)
    assert recall["direct"]["recall tool"] >= 0.8
    assert recall["direct"]["session_search + local"] >= 0.8
    assert sum(figures["ranking_outcomes"].values()) == recall["all"]["asked"]
    assert 0 < figures["embedded"] <= 600
