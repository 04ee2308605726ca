"""Shared fixtures: every test runs hermetically in its own temporary home."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.archive import Archive


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MNEMO_HOME (also exported, so code that reads the environment agrees)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MNEMO_HOME", str(path))
    return path


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[Archive]:
    """A real archive (SQLite file) in the test's temporary directory."""
    async with await Archive.open(tmp_path / "state.db") as opened:
        yield opened
