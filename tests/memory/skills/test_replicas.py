"""Skills shared by replicas on PostgreSQL (memory/skills/ over a ``DocumentTree`` of
memory/documents/postgres.py): every replica sees the same skills and the same staged
changes, and writes from several at once neither collide nor get lost. Real PostgreSQL; each
replica has a pool of its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager

import pytest

from memory.documents import Document, Documents, Version
from memory.documents.postgres import PgStores
from memory.skills import DocumentTree, SkillChange, SkillError, SkillStore
from tests.memory.skills.helpers import skill_md

Opener = Callable[[], PgStores]


def replica(open_stores: Opener) -> SkillStore:
    return SkillStore(DocumentTree(open_stores().documents("skills")))


def test_a_skill_written_on_one_replica_is_read_on_another(pg_stores_factory: Opener) -> None:
    left, right = replica(pg_stores_factory), replica(pg_stores_factory)
    left.apply(SkillChange("create", "deploy", skill_md("deploy", "Ship it"), category="ops"))
    left.apply(SkillChange("write_file", "deploy", "API\n", file_path="references/api.md"))
    assert right.index().endswith("ops:\n  deploy: Ship it")
    assert right.view("deploy", "references/api.md") == "API\n"
    skill = right.get("deploy")
    assert skill is not None and skill.location == "postgres:skills/ops/deploy"
    right.apply(SkillChange("delete", "deploy"))
    assert left.scan() == ([], []) and left.tree.entries("", hidden=True) == []


def test_a_change_staged_on_one_replica_is_approved_on_another(pg_stores_factory: Opener) -> None:
    left, right = replica(pg_stores_factory), replica(pg_stores_factory)
    left.apply(SkillChange("create", "s", skill_md("s", body="1. Step\n")))
    staged = left.stage(
        SkillChange("patch", "s", old_text="1. Step", new_text="1. Better"),
        requested_by="telegram-5",
        reason="from telegram-5 (not an admin)",
    )
    assert right.pending() == [staged]
    assert "+1. Better" in right.diff(staged.id)
    assert right.approve(staged.id).startswith("patched s")
    assert left.pending() == [] and "1. Better" in left.body("s")
    with pytest.raises(SkillError, match="No pending skill change"):
        left.approve(staged.id)


def test_two_replicas_creating_one_name_at_once_make_one_skill(pg_stores_factory: Opener) -> None:
    stores = [replica(pg_stores_factory) for _ in range(2)]

    def create(n: int) -> str:
        try:
            text = skill_md("same", f"Version {n}")
            return stores[n % 2].apply(SkillChange("create", "same", text))
        except SkillError as exc:
            return f"refused: {exc}"

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(create, range(6)))
    assert sum(r.startswith("created") for r in results) == 1
    assert all("already exists" in r for r in results if r.startswith("refused"))
    skills, problems = stores[1].scan()
    assert [s.name for s in skills] == ["same"] and problems == []


def test_support_files_written_from_two_replicas_at_once_are_all_kept(
    pg_stores_factory: Opener,
) -> None:
    left, right = replica(pg_stores_factory), replica(pg_stores_factory)
    left.apply(SkillChange("create", "s", skill_md("s")))

    def write(n: int) -> str:
        store = (left, right)[n % 2]
        change = SkillChange("write_file", "s", f"note {n}\n", file_path=f"references/{n}.md")
        return store.apply(change)

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert all(m.startswith("wrote") for m in pool.map(write, range(20)))
    skill = right.get("s")
    assert skill is not None
    assert right.support_files(skill) == sorted(f"references/{n}.md" for n in range(20))


def test_an_unreadable_pending_row_is_set_aside(pg_stores_factory: Opener) -> None:
    stores = pg_stores_factory()
    store = SkillStore(DocumentTree(stores.documents("skills")))
    store.apply(SkillChange("create", "s", skill_md("s")))
    store.tree.pending.write(".pending.json", b'{"items": [{"id": 1}]}', expected=None)
    assert store.pending() == []
    with stores.pool.connection() as conn:
        (row,) = conn.execute("SELECT name, convert_from(body, 'UTF8') FROM store_backups")
    assert row == (".pending.json", '{"items": [{"id": 1}]}')
    item = store.stage(SkillChange("delete", "s"), requested_by="a", reason="r")
    assert [p.id for p in store.pending()] == [item.id] and store.scan()[1] == []


class Listings:
    """PostgreSQL's documents, counting the listings asked of them (each a round trip)."""

    def __init__(self, inner: Documents) -> None:
        self.inner = inner
        self.count = 0

    @property
    def where(self) -> str:
        return self.inner.where

    def location(self, name: str) -> str:
        return self.inner.location(name)

    def read(self, name: str) -> Document:
        return self.inner.read(name)

    def version(self, name: str) -> Version:
        return self.inner.version(name)

    def write(self, name: str, data: bytes, *, expected: Version) -> None:
        self.inner.write(name, data, expected=expected)

    def delete(self, name: str, *, expected: Version) -> None:
        self.inner.delete(name, expected=expected)

    def names(self) -> list[str]:
        self.count += 1
        return self.inner.names()

    def exclusive(self, name: str) -> AbstractContextManager[None]:
        return self.inner.exclusive(name)

    def backup(self, name: str, raw: bytes, *, now: float) -> str:
        return self.inner.backup(name, raw, now=now)

    def set_aside(self, name: str, problem: object, *, what: str, now: float) -> None:
        self.inner.set_aside(name, problem, what=what, now=now)


def test_reading_the_skills_lists_the_documents_once_not_per_path(
    pg_stores_factory: Opener,
) -> None:
    """The index at a session's start asks the kind of every folder and SKILL.md: on
    PostgreSQL each would be a listing of every skills document (30 skills, 90 documents:
    about 60 round trips each returning all 90). One read lists them once."""
    counted = Listings(pg_stores_factory().documents("skills"))
    store = SkillStore(DocumentTree(counted))
    for n in range(30):
        store.apply(SkillChange("create", f"s{n}", skill_md(f"s{n}", f"Skill {n}"), category="c"))
        store.apply(SkillChange("write_file", f"s{n}", "x\n", file_path="references/a.md"))
    counted.count = 0
    index = store.index()
    assert index.count(": Skill ") == 30 and counted.count == 1
    counted.count = 0
    assert store.view("s7").endswith("- references/a.md") and counted.count == 1
    counted.count = 0
    assert store.check() == [] and counted.count == 1
    counted.count = 0
    store.apply(SkillChange("patch", "s3", old_text="Skill 3", new_text="Skill three"))
    assert counted.count <= 2  # the early refusal check, and the plan under the write lock
    assert "s3: Skill three" in store.index()


def test_inside_a_read_a_write_of_the_tree_is_seen(pg_stores_factory: Opener) -> None:
    tree = DocumentTree(pg_stores_factory().documents("skills"))
    with tree.reading():
        assert tree.kind("new") == "missing"
        tree.create_folder("new", skill_md("new", "Fresh"))
        assert tree.kind("new") == "dir" and tree.entries("new") == ["SKILL.md"]
        tree.delete_folder("new")
        assert tree.kind("new") == "missing"
