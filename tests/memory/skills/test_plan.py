"""Skill writes: every action, refusals, atomicity, staging for an admin; on both backends
(``store``: real files, PostgreSQL), what only files have (modes, symlinks, a writer killed
mid-write, a corrupt file on disk) on files (``file_store``)."""

from __future__ import annotations

import json
import signal
import stat
from pathlib import Path

import pytest

from memory.skills import FileTree
from memory.skills.store import SkillChange, SkillError, SkillStore
from tests.memory.skills.helpers import INJECTION, files, put, put_skill, read, skill_md
from tests.memory.zygote import Zygote

# -- create / edit / patch / delete ---------------------------------------------------------


def test_create_writes_a_private_skill_md_atomically(root: Path, file_store: SkillStore) -> None:
    store = file_store
    text = skill_md("deploy", "Deploy the app")
    message = store.apply(SkillChange("create", "deploy", text, category="ops"))
    assert message == f"created skill deploy in category ops (SKILL.md, {len(text)} chars)"
    path = root / "ops" / "deploy" / "SKILL.md"
    assert path.read_text() == text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(p.name for p in (root / "ops").iterdir()) == ["deploy"]  # no temp left
    assert store.get("deploy") is not None


@pytest.mark.parametrize("category", [None, "other"])
def test_create_refuses_a_name_that_exists_anywhere(
    store: SkillStore, category: str | None
) -> None:
    put_skill(store, "deploy", "ops")
    with pytest.raises(SkillError, match=r"A skill named deploy already exists \(ops/deploy\)"):
        store.apply(SkillChange("create", "deploy", skill_md("deploy"), category=category))
    assert list(files(store)) == ["ops/deploy/SKILL.md"]
    assert store.tree.kind("deploy") == store.tree.kind("other") == "missing"


def test_create_refuses_a_category_clash(store: SkillStore) -> None:
    put_skill(store, "ops-tool", "ops")
    put_skill(store, "lone")
    with pytest.raises(SkillError, match="ops already exists"):
        store.apply(SkillChange("create", "ops", skill_md("ops")))
    with pytest.raises(SkillError, match="lone is a skill, not a category"):
        store.apply(SkillChange("create", "x", skill_md("x"), category="lone"))
    with pytest.raises(SkillError, match="category name"):
        store.apply(SkillChange("create", "x", skill_md("x"), category="../up"))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (SkillChange("create", "Bad Name", skill_md("Bad Name")), "Invalid skill name"),
        (SkillChange("create", "a" * 65, skill_md("a" * 65)), "at most 64"),
        (SkillChange("create", "x"), "create needs content"),
        (SkillChange("create", "x", skill_md("y")), "'y' must equal the skill name 'x'"),
        (SkillChange("create", "x", "no front matter"), "must start with YAML front matter"),
        (SkillChange("create", "x", skill_md("x", "d" * 1025)), "at most 1,024"),
        (SkillChange("create", "x", skill_md("x", body="x" * 100_000)), "at most 100,000"),
        (SkillChange("create", "x", skill_md("x", body="\ud800")), "lone surrogate"),
    ],
)
def test_create_validates_everything(store: SkillStore, change: SkillChange, reason: str) -> None:
    with pytest.raises(SkillError, match=reason):
        store.validate(change)
    with pytest.raises(SkillError, match=reason):
        store.apply(change)
    assert files(store) == {}  # a refused write creates nothing
    assert not isinstance(store.tree, FileTree) or not store.tree.root.exists()


@pytest.mark.parametrize(
    "change",
    [
        SkillChange("create", "x", skill_md("x", body=INJECTION)),
        SkillChange("create", "x", skill_md("x", description=INJECTION)),
        SkillChange("patch", "s", old_text="1. Step", new_text=INJECTION),
        SkillChange("edit", "s", skill_md("s", body=INJECTION)),
        SkillChange("write_file", "s", INJECTION, file_path="references/r.md"),
    ],
)
def test_scanner_findings_refuse_the_write_without_echoing_it(
    store: SkillStore, change: SkillChange
) -> None:
    put_skill(store, "s")
    before = files(store)
    with pytest.raises(SkillError) as info:
        store.apply(change)
    assert "injection scanner (ignore-instructions" in str(info.value)
    assert "Ignore all previous" not in str(info.value)
    assert files(store) == before


def test_patch_must_match_exactly_once(store: SkillStore) -> None:
    put_skill(store, "s", body="step A\nstep B\nrepeat\nrepeat\naaa\n")
    before = read(store, "s/SKILL.md")
    with pytest.raises(SkillError, match="old_text was not found"):
        store.apply(SkillChange("patch", "s", old_text="step C", new_text="x"))
    with pytest.raises(SkillError, match="occurs 2 times"):
        store.apply(SkillChange("patch", "s", old_text="repeat", new_text="x"))
    with pytest.raises(SkillError, match="occurs 2 times"):  # overlapping matches count
        store.apply(SkillChange("patch", "s", old_text="aa", new_text="b"))
    with pytest.raises(SkillError, match="needs old_text"):
        store.apply(SkillChange("patch", "s", old_text="", new_text="x"))
    with pytest.raises(SkillError, match="needs new_text"):
        store.apply(SkillChange("patch", "s", old_text="step A"))
    assert read(store, "s/SKILL.md") == before
    message = store.apply(SkillChange("patch", "s", old_text="step B", new_text="step B, twice"))
    assert message == "patched s: 1 replacement (+13/-6 chars)"
    assert read(store, "s/SKILL.md") == before.replace("step B", "step B, twice")
    store.apply(SkillChange("patch", "s", old_text="step A\n", new_text=""))
    assert "step A" not in read(store, "s/SKILL.md")


def test_patch_and_edit_keep_the_skill_valid(store: SkillStore) -> None:
    put_skill(store, "s")
    before = read(store, "s/SKILL.md")
    with pytest.raises(SkillError, match="'renamed' must equal the skill name 's'"):
        store.apply(SkillChange("patch", "s", old_text="name: s", new_text="name: renamed"))
    with pytest.raises(SkillError, match="not valid YAML"):
        store.apply(
            SkillChange("patch", "s", old_text="description: D", new_text="description: [D")
        )
    with pytest.raises(SkillError, match="'other' must equal"):
        store.apply(SkillChange("edit", "s", skill_md("other")))
    assert read(store, "s/SKILL.md") == before
    new = skill_md("s", "Better description", "1. New step\n")
    assert store.apply(SkillChange("edit", "s", new)) == (
        f"rewrote s's SKILL.md ({len(before)} → {len(new)} chars)"
    )
    assert read(store, "s/SKILL.md") == new


def test_edit_and_patch_can_repair_a_broken_skill(store: SkillStore) -> None:
    put(store, "s/SKILL.md", "---\nname: s\ndescription: [broken\n---\n")
    assert store.get("s") is None
    store.apply(SkillChange("patch", "s", old_text="[broken", new_text="fixed"))
    skill = store.get("s")
    assert skill is not None and skill.description == "fixed"


def test_delete_removes_the_folder_and_an_empty_category(store: SkillStore) -> None:
    put_skill(store, "gone", "ops")
    put(store, "ops/gone/references/a.md", "a")
    put(store, "ops/gone/scripts/b.sh", "b")
    put_skill(store, "stays", "misc")
    put_skill(store, "also-gone", "misc")
    assert store.apply(SkillChange("delete", "gone")) == (
        "deleted skill gone (ops/gone: SKILL.md and 2 support files)"
    )
    store.apply(SkillChange("delete", "also-gone"))
    assert list(files(store)) == ["misc/stays/SKILL.md"]
    # no temp file left; the write lock is a file only where the skills are files
    locks = [".write.lock"] if isinstance(store.tree, FileTree) else []
    assert store.tree.entries("", hidden=True) == [*locks, "misc"]
    assert [s.name for s in store.scan()[0]] == ["stays"]
    with pytest.raises(SkillError, match="No skill named 'gone'"):
        store.apply(SkillChange("delete", "gone"))


def test_delete_never_follows_a_symlink_inside(
    root: Path, file_store: SkillStore, tmp_path: Path
) -> None:
    store = file_store
    outside = put(tmp_path, "outside/keep.md", "keep me")
    put_skill(root, "s")
    (root / "s" / "references").symlink_to(outside.parent, target_is_directory=True)
    store.apply(SkillChange("delete", "s"))
    assert outside.read_text() == "keep me"
    assert not (root / "s").exists()


# -- support files ------------------------------------------------------------------------


def test_write_and_remove_support_files(store: SkillStore) -> None:
    put_skill(store, "s")
    assert (
        store.apply(SkillChange("write_file", "s", "v1\n", file_path="references/a/api.md"))
        == "wrote s/references/a/api.md (3 chars, new file)"
    )
    assert (
        store.apply(SkillChange("write_file", "s", "v2\n", file_path="references/a/api.md"))
        == "wrote s/references/a/api.md (3 chars, replaced)"
    )
    assert read(store, "s/references/a/api.md") == "v2\n"
    if isinstance(store.tree, FileTree):
        path = store.tree.root / "s" / "references" / "a" / "api.md"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.view("s", "references/a/api.md") == "v2\n"
    with pytest.raises(SkillError, match="is a folder"):
        store.apply(SkillChange("write_file", "s", "x", file_path="references/a"))
    with pytest.raises(SkillError, match="write_file needs content"):
        store.apply(SkillChange("write_file", "s", file_path="references/b.md"))
    with pytest.raises(SkillError, match="does not exist"):
        store.apply(SkillChange("remove_file", "s", file_path="references/b.md"))
    assert store.apply(SkillChange("remove_file", "s", file_path="references/a/api.md")) == (
        "removed s/references/a/api.md"
    )
    assert store.tree.entries("s", hidden=True) == ["SKILL.md"]  # empty dirs pruned


def test_support_file_size_limit_on_write(store: SkillStore) -> None:
    put_skill(store, "s")
    with pytest.raises(SkillError, match="1,048,577 bytes; support files are limited to 1 MiB"):
        store.apply(SkillChange("write_file", "s", "x" * (1024 * 1024 + 1), file_path="scripts/a"))
    with pytest.raises(SkillError, match="limited to 1 MiB"):  # bytes, not chars
        store.apply(SkillChange("write_file", "s", "é" * (512 * 1024 + 1), file_path="scripts/a"))
    assert store.tree.kind("s/scripts") == "missing"


# -- atomicity ----------------------------------------------------------------------------

WRITER = """
import resource, signal, sys
from pathlib import Path
from memory.skills.store import SkillChange, SkillStore
root, action, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it by default
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
body = "new step\\n" * 2000
if action == "edit":
    text = "---\\nname: s\\ndescription: D\\n---\\n" + body
    SkillStore(root).apply(SkillChange("edit", "s", text))
else:
    text = "---\\nname: fresh\\ndescription: D\\n---\\n" + body
    SkillStore(root).apply(SkillChange("create", "fresh", text))
"""


@pytest.mark.slow
@pytest.mark.parametrize("action", ["edit", "create"])
def test_a_writer_killed_mid_write_leaves_no_partial_skill(
    root: Path, file_store: SkillStore, action: str, writers: Zygote
) -> None:
    """RLIMIT_FSIZE makes the kernel kill the writer (SIGXFSZ) in the middle of writing."""
    store = file_store
    put_skill(root, "s", body="old step\n" * 100)
    before = files(store)
    assert writers.run(WRITER, str(root), action, "4096") == -signal.SIGXFSZ, writers.stderr()
    assert files(store) == before  # the old SKILL.md, and no half-created skill
    assert [s.name for s in store.scan()[0]] == ["s"]
    assert store.scan()[1] == []  # leftovers are dot entries, never read as skills


# -- staging ------------------------------------------------------------------------------


def test_stage_diff_approve_round_trip(store: SkillStore) -> None:
    put_skill(store, "s", body="1. Step\n")
    before = files(store)
    change = SkillChange("patch", "s", old_text="1. Step", new_text="1. Better step")
    item = store.stage(change, requested_by="telegram-5", reason="from telegram-5 (not an admin)")
    assert files(store) == before  # staging changes no skill
    assert store.pending() == [item]
    assert item.created_at == 1_700_000_000.0 and len(item.id) == 6
    assert SkillStore(store.tree).pending() == [item]  # persisted
    if isinstance(store.tree, FileTree):
        assert stat.S_IMODE((store.tree.root / ".pending.json").stat().st_mode) == 0o600
    assert store.diff(item.id) == (
        "--- a/s/SKILL.md\n+++ b/s/SKILL.md\n@@ -3,4 +3,4 @@\n description: Does a thing\n"
        " ---\n \n-1. Step\n+1. Better step\n"
    )
    assert store.approve(item.id) == "patched s: 1 replacement (+14/-7 chars)"
    assert "1. Better step" in read(store, "s/SKILL.md")
    assert store.pending() == []
    with pytest.raises(SkillError, match="No pending skill change"):
        store.approve(item.id)


def test_diff_of_create_write_and_delete(root: Path, file_store: SkillStore) -> None:
    store = file_store
    put_skill(root, "s")
    create = store.stage(SkillChange("create", "n", skill_md("n")), requested_by="a", reason="r")
    assert store.diff(create.id).startswith("--- /dev/null\n+++ b/n/SKILL.md\n@@ -0,0 +1,6 @@\n")
    put(root, "s/templates/t.md", "old")
    write = store.stage(
        SkillChange("write_file", "s", "new", file_path="templates/t.md"),
        requested_by="a",
        reason="r",
    )
    assert store.diff(write.id).endswith(
        "-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
    )
    put(root, "s/references/blob.bin", b"\xff\x00")
    delete = store.stage(SkillChange("delete", "s"), requested_by="a", reason="r")
    text = store.diff(delete.id)
    assert "--- a/s/SKILL.md\n+++ /dev/null\n" in text
    assert "Binary files a/s/references/blob.bin and /dev/null differ\n" in text
    assert [p.id for p in store.pending()] == [create.id, write.id, delete.id]


def test_reject_discards_without_touching_skills(store: SkillStore) -> None:
    put_skill(store, "s")
    before = files(store)
    item = store.stage(SkillChange("delete", "s"), requested_by="a", reason="r")
    assert (
        store.reject(item.id)
        == f"rejected {item.id} (delete skill s (the whole folder)); skills unchanged"
    )
    assert store.pending() == [] and files(store) == before
    with pytest.raises(SkillError, match="No pending skill change"):
        store.reject(item.id)


def test_stage_validates_first(store: SkillStore) -> None:
    put_skill(store, "s")
    with pytest.raises(SkillError, match="old_text was not found"):
        store.stage(
            SkillChange("patch", "s", old_text="zzz", new_text="y"), requested_by="a", reason="r"
        )
    with pytest.raises(SkillError, match="injection scanner"):
        store.stage(
            SkillChange("create", "x", skill_md("x", body=INJECTION)), requested_by="a", reason="r"
        )
    assert store.pending() == []


def test_approving_a_change_that_no_longer_applies_drops_it(store: SkillStore) -> None:
    put_skill(store, "s", body="1. Step\n")
    item = store.stage(
        SkillChange("patch", "s", old_text="1. Step", new_text="1. X"), requested_by="a", reason="r"
    )
    store.apply(SkillChange("patch", "s", old_text="1. Step", new_text="1. Changed meanwhile"))
    after_meanwhile = files(store)
    with pytest.raises(SkillError, match="no longer applies: old_text was not found"):
        store.diff(item.id)
    with pytest.raises(SkillError) as info:
        store.approve(item.id)
    assert str(info.value).startswith(
        f"Pending change {item.id} (patch skill s (SKILL.md)) no longer applies and was "
        "discarded: old_text was not found"
    )
    assert store.pending() == []
    assert files(store) == after_meanwhile


def test_a_corrupt_pending_file_is_moved_aside(root: Path, file_store: SkillStore) -> None:
    store = file_store
    put_skill(root, "s")
    (root / ".pending.json").write_text('{"items": [{"id": 1}]}')
    assert store.pending() == []
    assert (root / ".pending.json.corrupt.1700000000").read_text() == '{"items": [{"id": 1}]}'
    assert not (root / ".pending.json").exists()
    item = store.stage(SkillChange("delete", "s"), requested_by="a", reason="r")
    assert [p.id for p in store.pending()] == [item.id]
    data = json.loads((root / ".pending.json").read_text())
    assert data["items"][0]["change"] == {"action": "delete", "name": "s"}
    assert store.scan()[1] == []  # the moved-aside file is not a skill problem


def test_describe() -> None:
    assert SkillChange("patch", "deploy-app").describe() == "patch skill deploy-app (SKILL.md)"
    assert SkillChange("create", "a", category="ops").describe() == (
        "create skill a in category ops (SKILL.md)"
    )
    assert SkillChange("write_file", "a", file_path="references/x.md").describe() == (
        "write skill a (references/x.md)"
    )
    assert SkillChange("delete", "a").describe() == "delete skill a (the whole folder)"
