"""Memory test helpers: archive and skill fixtures, and the scanner figures at the end."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.archive.database import NewMessage, SessionSpec
from memory.archive.store import ArchiveStore
from memory.skills.store import SkillStore
from tests.memory.zygote import Zygote
from tests.stores import Storage

FIGURE = "memory scanner figure"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Figures travel with the report of the test that measured them: under pytest-xdist
    the tests run in workers and only the reports reach the process that prints."""
    report = yield
    scan_tests = sys.modules.get("tests.memory.scan.test_scan")
    if call.when == "call" and scan_tests is not None:
        figures: dict[str, str] = scan_tests.FIGURES
        report.user_properties += [(FIGURE, f"{k}: {line}") for k, line in figures.items()]
        figures.clear()
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the scanner's measured recall / false-positive figures at the end of a run."""
    lines = sorted(
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        for name, value in getattr(report, "user_properties", ())
        if name == FIGURE
    )
    if lines:
        terminalreporter.section("memory scanner figures")
        for line in lines:
            terminalreporter.write_line(line)


# -- writer processes ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def _zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    log = tmp_path_factory.mktemp("writers") / "stderr.log"
    preload = ("memory", "memory.archive.database", "memory.skills.store")
    warm = "import memory; memory.scan('warm up')"  # a table built on first use is built here
    with Zygote(log, *preload, warm=warm) as zygote:
        yield zygote


@pytest.fixture
def writers(_zygote: Zygote) -> Iterator[Zygote]:
    """Writer processes forked from one interpreter per test process (see zygote.py)."""
    yield _zygote
    _zygote.reap()  # none outlives its test


# -- archive fixtures ----------------------------------------------------------------------


async def make_session(
    archive: ArchiveStore,
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
    archive: ArchiveStore,
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
def store(storage: Storage) -> SkillStore:
    """The skills on both backends (a folder under ``tmp_path``, which is ``root``; and
    PostgreSQL)."""
    return storage.skills(clock=lambda: 1_700_000_000.0)


@pytest.fixture
def file_store(root: Path) -> SkillStore:
    """The skills in the folder ``root`` only: for what only files have."""
    return SkillStore(root, clock=lambda: 1_700_000_000.0)
