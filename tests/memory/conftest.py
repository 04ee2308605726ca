"""Memory test helpers: archive and skill fixtures, and the scanner figures at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.archive.database import Archive, NewMessage, SessionSpec
from memory.skills.store import SkillStore


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the scanner's measured recall / false-positive figures at the end of a run."""
    from tests.memory.scan.test_scan import FIGURES

    if FIGURES:
        terminalreporter.section("memory scanner figures")
        for corpus, line in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{corpus}: {line}")


# -- archive fixtures ----------------------------------------------------------------------


async def make_session(
    archive: Archive,
    sid: str,
    *people: str,
    platform: str = "telegram",
    chat_type: str = "dm",
    parent: str | None = None,
    key: str | None = None,
) -> SessionSpec:
    spec = SessionSpec(
        id=sid,
        platform=platform,
        chat_id=f"chat-{sid}",
        chat_type=chat_type,
        people=tuple(people),
        parent_id=parent,
        session_key=key,
    )
    await archive.start_session(spec)
    return spec


async def say(
    archive: Archive,
    sid: str,
    person: str,
    text: str,
    reply: str = "noted",
    *,
    at: float | None = None,
) -> list[int]:
    return await archive.append_exchange(
        sid,
        [
            NewMessage("user", text, speaker=person, created_at=at),
            NewMessage("assistant", reply, created_at=at),
        ],
    )


# -- skill fixtures ------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "skills"


@pytest.fixture
def store(root: Path) -> SkillStore:
    return SkillStore(root, clock=lambda: 1_700_000_000.0)
