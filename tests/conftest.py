"""Shared fixtures: every test runs hermetically in its own temporary home."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memory.archive.database import Archive


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


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set to a common (022) and the most open (000) value, restored after.

    Files and folders of ours must come out private under either."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)
