"""The curated store (MemoryStore) on both backends (``storage``: real files in a temp
directory, and PostgreSQL): the file format, the typed outcomes of its operations, snapshots,
people and scope; on files only, what only files have (hand edits on disk, modes, locks).

The memory tool's JSON built from those outcomes: tests/agent_core/tools/test_memory.py.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memory import (
    MAX_FAILURES_PER_TURN,
    InvalidPersonError,
    MemoryLimits,
    MemoryStore,
    MemoryStores,
    MemoryTurn,
    Target,
)
from memory.curated import Change, Done, Refused, Saved, Staged
from tests.stores import Storage
from tests.stores import raw as stored

LIMITS = MemoryLimits(memory=200, user=120)


@pytest.fixture
def store(storage: Storage) -> MemoryStore:
    return storage.memory("telegram-1", limits=LIMITS)


@pytest.fixture
def file_store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "telegram-1", limits=LIMITS)


def add(store: MemoryStore, *contents: str, target: str = "memory") -> None:
    for content in contents:
        outcome = store.call({"action": "add", "target": target, "content": content}, MemoryTurn())
        assert isinstance(outcome, Saved), outcome


def raw(store: MemoryStore, target: Target = "memory") -> str:
    text = stored(store, target)
    assert text is not None, f"nothing stored for {target}"
    return text


# -- format and typed outcomes -----------------------------------------------------------------


def test_add_writes_entries_joined_by_the_delimiter_with_no_header(store: MemoryStore) -> None:
    add(store, "User deploys with make release", "Staging is at staging.local\nport 8443")
    assert raw(store) == "User deploys with make release\n§\nStaging is at staging.local\nport 8443"
    assert stored(store, "user") is None


def test_add_strips_and_refuses_empty(store: MemoryStore) -> None:
    assert isinstance(store.call({"action": "add", "content": "   "}, MemoryTurn()), Refused)
    assert isinstance(store.call({"action": "add"}, MemoryTurn()), Refused)
    add(store, "  padded  ")
    assert raw(store) == "padded"


def test_replace_into_an_existing_entry_merges_the_two(store: MemoryStore) -> None:
    add(store, "likes tea", "likes green tea", "runs Linux")
    merged = store.call(
        {"action": "replace", "old_text": "likes tea", "content": "likes green tea"}, MemoryTurn()
    )
    assert isinstance(merged, Saved) and merged.changes == (Change("likes tea", "likes green tea"),)
    assert store.entries("memory") == ["likes green tea", "runs Linux"]


def test_a_write_answers_what_it_saved(store: MemoryStore) -> None:
    added = store.call({"action": "add", "target": "user", "content": "Prefers tea"}, MemoryTurn())
    assert added == Saved("user", "Entry added.", "9% — 11/120 chars", 1)
    again = store.call({"action": "add", "target": "user", "content": "Prefers tea"}, MemoryTurn())
    assert isinstance(again, Saved) and not again.wrote
    removed = store.call({"action": "remove", "target": "user", "old_text": "tea"}, MemoryTurn())
    assert isinstance(removed, Saved) and removed.changes == (Change("Prefers tea"),)
    assert removed.entry_count == 0 and removed.message == "Entry removed."


def test_a_refusal_says_why_and_what_the_model_may_see(store: MemoryStore) -> None:
    add(store, "a" * 100, "b" * 80)
    over = store.call({"action": "add", "content": "c" * 30}, MemoryTurn())
    assert isinstance(over, Refused) and not over.final and "over the limit" in over.error
    assert over.current_entries == ("a" * 100, "b" * 80) and over.usage == "91% — 183/200 chars"
    turn = MemoryTurn(failures=MAX_FAILURES_PER_TURN)
    final = store.call({"action": "remove", "old_text": "zzz"}, turn)
    assert isinstance(final, Refused) and final.final and "Stop retrying" in final.error
    assert final.current_entries is None and final.usage is None


def test_with_write_approval_a_write_is_staged(storage: Storage) -> None:
    gated = storage.memory("telegram-2", write_approval=True)
    turn = MemoryTurn()
    staged = gated.call({"action": "add", "content": "likes jazz"}, turn)
    assert isinstance(staged, Staged) and staged.target == "memory"
    assert turn.staged == [staged.pending_id] and staged.pending_id in staged.message
    assert isinstance(gated.reject(staged.pending_id), Done)


# -- snapshot and load-time sanitising -----------------------------------------------------


def test_empty_store_renders_nothing(store: MemoryStore) -> None:
    assert store.snapshot().render() == ""


def test_snapshot_renders_both_files_in_order(store: MemoryStore) -> None:
    add(store, "Deploys use make release")
    add(store, "Prefers metric units", target="user")
    rule = "═" * 46
    assert store.snapshot().render() == (
        f"{rule}\nMEMORY (your notes) [12% — 24/200 chars]\n{rule}\nDeploys use make release"
        f"\n\n{rule}\nUSER PROFILE (who the user is) [16% — 20/120 chars]\n{rule}\n"
        "Prefers metric units"
    )


def test_snapshot_is_deterministic_and_frozen(store: MemoryStore) -> None:
    add(store, "one", "two")
    first = store.snapshot()
    assert store.snapshot() == first
    add(store, "three")
    assert "three" not in first.render()  # a value: later writes never change it
    assert "three" in store.snapshot().render()


def test_add_is_not_guarded(file_store: MemoryStore) -> None:
    store = file_store
    store.directory.mkdir(parents=True)
    store.path("memory").write_text("alpha\n§\n\n§\nbeta\n", encoding="utf-8")
    assert store.call({"action": "add", "content": "gamma"}, MemoryTurn()).ok
    assert store.entries("memory") == ["alpha", "beta", "gamma"]


def test_repair_rewrites_canonically_after_a_backup(file_store: MemoryStore) -> None:
    store = file_store
    store.directory.mkdir(parents=True)
    store.path("memory").write_text(" alpha \n§\n\n§\nbeta\n§\nalpha\n", encoding="utf-8")
    result = store.repair("memory")
    assert isinstance(result, Done) and result.usage == "6% — 12/200 chars"
    assert raw(store) == "alpha\n§\nbeta"
    (backup,) = store.directory.glob("MEMORY.md.bak.*")
    assert backup.read_text(encoding="utf-8").startswith(" alpha ")
    clean = store.repair("memory")
    assert isinstance(clean, Done) and clean.message.endswith("already clean.")
    assert clean.usage is None


# -- durability ----------------------------------------------------------------------------


def test_files_are_private_and_no_temp_files_remain(file_store: MemoryStore) -> None:
    store = file_store
    add(store, "alpha", "beta")
    store.call({"action": "remove", "old_text": "alpha"}, MemoryTurn())
    assert stat.S_IMODE(store.path("memory").stat().st_mode) == 0o600
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    leftovers = [p.name for p in store.directory.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert (store.directory / "MEMORY.md.lock").exists()


# -- people and scope ----------------------------------------------------------------------


def test_each_person_has_a_separate_store(storage: Storage) -> None:
    stores = storage.memory_stores()
    alice, bob = stores.for_person("telegram-1"), stores.for_person("discord-2")
    alice.call({"action": "add", "target": "user", "content": "Alice likes tea"}, MemoryTurn())
    assert bob.entries("user") == []
    assert "Alice" not in bob.snapshot().render()
    assert stores.people() == ["telegram-1"]


@pytest.mark.parametrize("person", ["../etc", "Telegram-1", "", "a/b", ".hidden", "x" * 200])
def test_unsafe_person_ids_are_refused(tmp_path: Path, person: str) -> None:
    with pytest.raises(InvalidPersonError):
        MemoryStores(tmp_path).for_person(person)


def test_shared_scope_maps_everyone_to_one_store(storage: Storage) -> None:
    stores = storage.memory_stores(scope="shared")
    one, other = stores.for_person("telegram-1"), stores.for_person("discord-2")
    assert one.documents.where == other.documents.where and one.person == "shared"
    add(one, "the team deploys on Fridays")
    assert other.entries("memory") == ["the team deploys on Fridays"]
