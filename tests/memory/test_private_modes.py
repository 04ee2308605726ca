"""The home is private however it was created: every folder of ours 0700, every file 0600,
made by the real first-write paths (no `mnemo init`) under an explicit umask."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memory import MemoryStores, MemoryTurn
from memory.archive.database import Archive
from memory.files import ensure_private_dir, file_lock
from memory.skills.store import SkillChange, SkillStore
from tests.memory.conftest import make_session, say
from tests.memory.skills.helpers import skill_md


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(root: Path) -> dict[str, int]:
    """Every path under ``root`` (``root`` itself as "."), with its permission bits."""
    found = {".": mode(root)}
    found.update({p.relative_to(root).as_posix(): mode(p) for p in sorted(root.rglob("*"))})
    return found


def assert_private(root: Path) -> None:
    for rel, bits in modes(root).items():
        expected = 0o700 if (root / rel).is_dir() else 0o600
        assert bits == expected, f"{rel}: {bits:o}, expected {expected:o}"


# -- the helper ----------------------------------------------------------------------------


@pytest.mark.usefixtures("umask")
def test_every_missing_level_is_made_0700(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    ensure_private_dir(target)
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", target)] == [0o700] * 3
    ensure_private_dir(target)  # existing: nothing to do
    assert mode(target) == 0o700


def test_a_strict_umask_cannot_leave_a_folder_we_cannot_use(tmp_path: Path) -> None:
    old = os.umask(0o277)  # mkdir would give 0500: not even writable by us
    try:
        ensure_private_dir(tmp_path / "home" / "memories")
    finally:
        os.umask(old)
    assert mode(tmp_path / "home") == 0o700 and mode(tmp_path / "home" / "memories") == 0o700


def test_an_existing_folder_keeps_the_mode_its_owner_chose(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o750)
    ensure_private_dir(home / "memories")
    assert mode(home) == 0o750  # not silently changed (mnemo doctor warns instead)
    assert mode(home / "memories") == 0o700


def test_a_file_in_the_way_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "memories").write_text("not a folder", encoding="utf-8")
    with pytest.raises(FileExistsError) as info:
        ensure_private_dir(tmp_path / "memories" / "telegram-1")
    assert info.value.filename == str(tmp_path / "memories")


@pytest.mark.usefixtures("umask")
def test_a_lock_file_and_its_parents(tmp_path: Path) -> None:
    with file_lock(tmp_path / "home" / "memories" / "telegram-1" / "MEMORY.md"):
        pass
    assert_private(tmp_path / "home")
    assert (tmp_path / "home" / "memories" / "telegram-1" / "MEMORY.md.lock").exists()


# -- the first writes ----------------------------------------------------------------------


@pytest.mark.usefixtures("umask")
def test_the_memory_stores_first_write_makes_a_private_home(tmp_path: Path) -> None:
    home = tmp_path / "home"  # does not exist: no `mnemo init` ran
    stores = MemoryStores(home / "memories")
    result = stores.for_person("telegram-1").call(
        {"action": "add", "target": "user", "content": "Prefers tea"}, MemoryTurn()
    )
    assert result["success"]
    staged = MemoryStores(home / "memories", write_approval=True).for_person("discord-2")
    assert staged.call({"action": "add", "content": "Runs Arch"}, MemoryTurn())["success"]
    assert staged.pending()
    assert {"memories/telegram-1/USER.md", "memories/discord-2/PENDING.json"} <= set(modes(home))
    assert_private(home)


@pytest.mark.usefixtures("umask")
async def test_the_archives_first_open_makes_db_wal_and_shm_0600(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / "state.db"
    async with await Archive.open(db) as archive:
        await make_session(archive, "s1", "telegram-1")
        await say(archive, "s1", "telegram-1", "hello")
        live = modes(home)
        # WAL mode: while it is open, SQLite keeps the -wal and -shm files beside it
        assert {"state.db", "state.db-wal", "state.db-shm"} <= set(live)
        assert_private(home)
    assert_private(home)


@pytest.mark.usefixtures("umask")
async def test_an_archive_made_open_by_an_older_version_is_tightened(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    sqlite3.connect(db).close()
    db.chmod(0o644)
    async with await Archive.open(db) as archive:
        await make_session(archive, "s1", "telegram-1")
        assert mode(db) == 0o600
        assert mode(db.with_name("state.db-wal")) == 0o600
    assert mode(db) == 0o600


@pytest.mark.usefixtures("umask")
def test_the_first_skill_write_makes_private_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = SkillStore(home / "skills")
    store.apply(SkillChange("create", "deploy", skill_md("deploy"), category="ops"))
    store.apply(SkillChange("write_file", "deploy", "v1\n", file_path="references/a/api.md"))
    store.apply(SkillChange("create", "plain", skill_md("plain")))
    assert {
        "skills/ops/deploy/SKILL.md",
        "skills/ops/deploy/references/a/api.md",
        "skills/plain/SKILL.md",
    } <= set(modes(home))
    assert_private(home)
