"""bench/local_bench.py with one tiny run: every figure is there and means what it says (the
messages it embedded, one time per query); no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.local_bench import main
from memory.providers.local import embedder

pytest.importorskip("onnxruntime", reason="the local provider's extra: pip install 'mnemo[local]'")
pytestmark = pytest.mark.slow


def test_a_tiny_run_prints_every_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model reads 8 tokens of a message instead of 64 (no figure is asserted, and it
    keeps the CPU of the model-rate rows small)."""
    monkeypatch.setattr(embedder, "MAX_TOKENS", 8)
    out = tmp_path / "local.json"
    argv = ["--messages", "60", "--queries", "4", "--during", "20", "--json", str(out)]
    assert main(argv) == 0
    table = capsys.readouterr().out
    for row in ("word search only (FTS)", "local prefetch (fused)", "indexer running"):
        assert row in table
    assert "the model alone, messages/s: 1 thread" in table and "backfill on " in table
    figures = json.loads(out.read_text())
    said = figures["embedded"]
    assert 0 < said <= 60  # the user and assistant messages of the first 60
    assert len(figures["prefetch_ms"]) == len(figures["fts_during_indexing_ms"]) == 4
    assert len(figures["fts_ms"]) == 8  # timed before and after the prefetches
