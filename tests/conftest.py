"""Shared fixtures: every test runs hermetically in its own temporary home."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MNEMO_HOME (also exported, so code that reads the environment agrees)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MNEMO_HOME", str(path))
    return path
