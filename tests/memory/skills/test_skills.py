"""``SkillStore``: listing and problems, the index, reads and writes; on both backends
(``store``: real files, PostgreSQL), and what only files have (symlinks, fifos, a missing or
odd root) on files (``file_store``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memory.skills import DocumentTree
from memory.skills.store import INDEX_INSTRUCTION, SkillChange, SkillError, SkillProblem, SkillStore
from tests.memory.skills.helpers import INJECTION, files, put, put_skill, remove, skill_md


def problems_by_path(store: SkillStore) -> dict[str, str]:
    return {p.path: p.reason for p in store.scan()[1]}


# -- listing ------------------------------------------------------------------------------


def test_lists_skills_at_the_root_and_in_categories_sorted(store: SkillStore) -> None:
    put_skill(store, "zeta")
    put_skill(store, "deploy-app", "devops", description="Deploy the app")
    put_skill(store, "alpha")
    put_skill(store, "backup", "devops")
    put(
        store,
        "tagged/SKILL.md",
        '---\nname: tagged\ndescription: d\ntags: [a]\nversion: "2"\nplatforms: [linux]\n---\n',
    )
    skills, problems = store.scan()
    assert problems == []
    assert [(s.category, s.name) for s in skills] == [
        (None, "alpha"),
        (None, "tagged"),
        (None, "zeta"),
        ("devops", "backup"),
        ("devops", "deploy-app"),
    ]
    deploy = store.get("deploy-app")
    assert deploy is not None
    assert deploy.description == "Deploy the app"
    assert deploy.rel == "devops/deploy-app"
    assert deploy.location == store.tree.location("devops/deploy-app")
    tagged = store.get("tagged")
    assert tagged is not None
    assert (tagged.tags, tagged.version, tagged.platforms) == (("a",), "2", ("linux",))
    assert store.get("missing") is None
    assert store.get("../etc") is None


@pytest.mark.parametrize(
    ("rel", "text", "reason"),
    [
        ("Bad_Name/SKILL.md", skill_md("Bad_Name"), "folder name 'Bad_Name' is not allowed"),
        (f"{'a' * 65}/SKILL.md", skill_md("a" * 65), "at most 64"),
        ("long-desc/SKILL.md", skill_md("long-desc", "d" * 1025), "at most 1,024"),
        ("no-name/SKILL.md", "---\ndescription: d\n---\n", "missing 'name'"),
        ("no-desc/SKILL.md", "---\nname: no-desc\n---\n", "missing 'description'"),
        ("bad-yaml/SKILL.md", "---\nname: bad-yaml\ndescription: [x\n---\n", "not valid YAML"),
        ("mismatch/SKILL.md", skill_md("other"), "does not match the folder name 'mismatch'"),
        ("plain/SKILL.md", "just text\n", "must start with YAML front matter"),
        ("binary/SKILL.md", b"---\nname: binary\n\xff\xfe\n---\n", "not UTF-8"),
        ("huge/SKILL.md", skill_md("huge", body="x" * 100_000), "100,000"),
    ],
)
def test_an_invalid_skill_is_reported_and_not_loaded(
    store: SkillStore, rel: str, text: str | bytes, reason: str
) -> None:
    if isinstance(text, bytes) and isinstance(store.tree, DocumentTree):
        text = text.decode("latin-1")  # PostgreSQL keeps text: the same invalid front matter
        reason = "not valid YAML"
    put_skill(store, "good")
    put(store, rel, text)
    skills, problems = store.scan()
    assert [s.name for s in skills] == ["good"]
    (problem,) = problems
    assert problem.path == rel.removesuffix("/SKILL.md")
    assert reason in problem.reason
    assert store.index().count("\n") == 1  # instruction + the one good skill


def test_skill_md_at_exactly_the_limit_loads(store: SkillStore) -> None:
    head = skill_md("big", body="")
    put(store, "big/SKILL.md", head + "x" * (100_000 - len(head)))
    assert [s.name for s in store.scan()[0]] == ["big"]


def test_layout_problems_are_reported_and_dot_entries_ignored(
    root: Path, file_store: SkillStore, tmp_path: Path
) -> None:
    store = file_store
    put_skill(root, "good", "cat")
    put(root, "README.md", "hello")
    put(root, "cat/notes.txt", "stray")
    put(root, "cat/empty-skill/references/a.md", "no SKILL.md above")
    put(root, "Bad Category/x/SKILL.md", skill_md("x"))
    put(root, ".hidden/SKILL.md", skill_md("hidden"))
    put(root, "cat/.create-tmp/SKILL.md", skill_md("tmp"))
    (root / ".pending.json.lock").touch()
    (root / "fifo-skill").mkdir()
    os.mkfifo(root / "fifo-skill" / "SKILL.md")
    (root / "dir-md").mkdir()
    (root / "dir-md" / "SKILL.md").mkdir()
    found = problems_by_path(store)
    assert set(found) == {
        "README.md",
        "cat/notes.txt",
        "cat/empty-skill",
        "Bad Category",
        "fifo-skill",
        "dir-md",
    }
    assert "no SKILL.md here" in found["cat/empty-skill"]
    assert "not a regular file" in found["dir-md"]
    assert "not a regular file" in found["fifo-skill"]
    assert "not a skill folder" in found["README.md"]
    assert [s.name for s in store.scan()[0]] == ["good"]


def test_a_name_used_twice_loads_neither(store: SkillStore) -> None:
    put_skill(store, "twin", "a")
    put_skill(store, "twin", "b")
    put_skill(store, "solo")
    skills, problems = store.scan()
    assert [s.name for s in skills] == ["solo"]
    assert sorted(p.path for p in problems) == ["a/twin", "b/twin"]
    with pytest.raises(SkillError, match="several folders"):
        store.view("twin")


def test_a_blocked_description_is_kept_out_of_the_index(store: SkillStore) -> None:
    put_skill(store, "evil", description=INJECTION)
    put_skill(store, "good")
    assert problems_by_path(store)["evil"].startswith(
        "the description is blocked by the injection scanner (ignore-instructions"
    )
    assert "evil" not in store.index()
    assert INJECTION not in repr(store.scan())


def test_reading_never_creates_the_root(root: Path, file_store: SkillStore) -> None:
    store = file_store
    assert store.scan() == ([], [])
    assert store.index() == ""
    assert store.check() == []
    assert store.pending() == []
    assert store.get("x") is None
    with pytest.raises(SkillError, match="No skill named"):
        store.view("x")
    with pytest.raises(SkillError, match="No pending skill change"):
        store.approve("abc")
    with pytest.raises(SkillError, match="No pending skill change"):
        store.diff("abc")
    assert not root.exists()


def test_a_root_that_is_a_file_is_a_problem_not_a_crash(root: Path, file_store: SkillStore) -> None:
    store = file_store
    root.write_text("oops")
    assert store.scan() == ([], [SkillProblem(".", "the skills root is not a folder")])
    assert store.index() == ""


# -- index --------------------------------------------------------------------------------


def test_index_is_sorted_grouped_and_deterministic(tmp_path: Path) -> None:
    specs = [("zeta", None), ("deploy", "ops"), ("alpha", None), ("backup", "ops"), ("x", "ai")]
    first, second = SkillStore(tmp_path / "one"), SkillStore(tmp_path / "two")
    for name, category in specs:
        first.apply(SkillChange("create", name, skill_md(name, f"About {name}"), category))
    for name, category in reversed(specs):
        put_skill(tmp_path / "two", name, category, description=f"About {name}")
    assert first.index() == (
        f"{INDEX_INSTRUCTION}\n"
        "alpha: About alpha\n"
        "zeta: About zeta\n"
        "ai:\n"
        "  x: About x\n"
        "ops:\n"
        "  backup: About backup\n"
        "  deploy: About deploy"
    )
    assert first.index().encode() == second.index().encode() == first.index().encode()


# -- reading ------------------------------------------------------------------------------


def test_view_lists_support_files_and_body_drops_front_matter(store: SkillStore) -> None:
    put_skill(store, "deploy", body="1. Build\n2. Ship\n")
    put(store, "deploy/references/api.md", "API notes\n")
    put(store, "deploy/scripts/run.sh", "echo hi\n")
    put(store, "deploy/notes.txt", "not a support file")
    view = store.view("deploy")
    assert view.startswith(skill_md("deploy", body="1. Build\n2. Ship"))
    assert view.endswith("file_path):]\n- references/api.md\n- scripts/run.sh")
    assert store.view("deploy", "SKILL.md") == view
    assert store.view("deploy", "references/api.md") == "API notes\n"
    assert store.body("deploy") == "1. Build\n2. Ship"
    with pytest.raises(SkillError, match=r"does not exist\. Support files of deploy: refer"):
        store.view("deploy", "references/nope.md")
    put(store, "deploy/references/sub/deep.md", "deep")
    assert store.view("deploy", "references/sub/deep.md") == "deep"
    with pytest.raises(SkillError, match="is a folder"):
        store.view("deploy", "references/sub")
    with pytest.raises(SkillError, match="is not a folder"):
        store.view("deploy", "scripts/run.sh/x")


def test_view_refuses_blocked_text_unless_an_operator_asks(store: SkillStore) -> None:
    put_skill(store, "evil", body=INJECTION + "\n")
    put(store, "evil/references/r.md", INJECTION)
    calls: tuple[Callable[[], str], ...] = (
        lambda: store.view("evil"),
        lambda: store.body("evil"),
        lambda: store.view("evil", "references/r.md"),
    )
    for call in calls:
        with pytest.raises(SkillError) as info:
            call()
        assert "ignore-instructions" in str(info.value)
        assert INJECTION not in str(info.value)
    assert INJECTION in store.view("evil", screened=False)
    assert store.view("evil", "references/r.md", screened=False) == INJECTION


def test_support_file_size_limit_on_read(store: SkillStore) -> None:
    put_skill(store, "s")
    put(store, "s/references/exact.md", "x" * (1024 * 1024))
    put(store, "s/references/over.md", "x" * (1024 * 1024 + 1))
    assert len(store.view("s", "references/exact.md", screened=False)) == 1024 * 1024
    with pytest.raises(SkillError, match="1,048,577 bytes; support files are limited to 1 MiB"):
        store.view("s", "references/over.md")
    remove(store, "s/references/exact.md")  # check() would scan it: seconds per MiB
    found = {p.path: p.reason for p in store.check()}
    assert "1,048,577 bytes" in found["s/references/over.md"]


# -- confinement --------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("TOP-SECRET-CONTENT")
    return secret


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "references/../../x", "../../outside"])
def test_traversal_is_refused_for_read_write_and_remove(store: SkillStore, path: str) -> None:
    put_skill(store, "s")
    with pytest.raises(SkillError):
        store.view("s", path)
    with pytest.raises(SkillError):
        store.apply(SkillChange("write_file", "s", "data", file_path=path))
    with pytest.raises(SkillError):
        store.apply(SkillChange("remove_file", "s", file_path=path))
    assert list(files(store)) == ["s/SKILL.md"]


def test_a_symlinked_references_folder_is_refused(
    root: Path, file_store: SkillStore, outside: Path
) -> None:
    store = file_store
    put_skill(root, "s")
    (root / "s" / "references").symlink_to(outside.parent, target_is_directory=True)
    with pytest.raises(SkillError, match="symbolic link") as info:
        store.view("s", "references/secret.md")
    assert "TOP-SECRET" not in str(info.value)
    with pytest.raises(SkillError, match="symbolic link"):
        store.apply(SkillChange("write_file", "s", "pwned", file_path="references/new.md"))
    with pytest.raises(SkillError, match="symbolic link"):
        store.apply(SkillChange("remove_file", "s", file_path="references/secret.md"))
    assert sorted(p.name for p in outside.parent.iterdir()) == ["secret.md"]
    assert outside.read_text() == "TOP-SECRET-CONTENT"
    assert "references/secret.md" not in store.view("s")
    assert "symbolic link" in {p.path: p.reason for p in store.check()}["s/references"]


def test_a_symlinked_support_file_is_refused(
    root: Path, file_store: SkillStore, outside: Path
) -> None:
    store = file_store
    put_skill(root, "s")
    (root / "s" / "references").mkdir()
    (root / "s" / "references" / "leak.md").symlink_to(outside)
    with pytest.raises(SkillError, match="symbolic link"):
        store.view("s", "references/leak.md")
    with pytest.raises(SkillError, match="symbolic link"):
        store.apply(SkillChange("write_file", "s", "pwned", file_path="references/leak.md"))
    assert outside.read_text() == "TOP-SECRET-CONTENT"


def test_a_symlinked_skill_md_is_not_loaded_read_or_written(
    root: Path, file_store: SkillStore, tmp_path: Path
) -> None:
    store = file_store
    target = put(tmp_path, "elsewhere/SKILL.md", skill_md("linked"))
    (root / "linked").mkdir(parents=True)
    (root / "linked" / "SKILL.md").symlink_to(target)
    assert "symbolic link" in problems_by_path(store)["linked"]
    with pytest.raises(SkillError, match="symbolic link"):
        store.view("linked")
    with pytest.raises(SkillError, match="symbolic link"):
        store.apply(SkillChange("patch", "linked", old_text="Step", new_text="Hacked"))
    with pytest.raises(SkillError, match="symbolic link"):
        store.apply(SkillChange("edit", "linked", skill_md("linked", body="hacked")))
    assert target.read_text() == skill_md("linked")


def test_a_symlinked_skill_or_category_folder_is_refused(
    root: Path, file_store: SkillStore, tmp_path: Path
) -> None:
    store = file_store
    real = put_skill(tmp_path / "real", "away")
    root.mkdir()
    (root / "away").symlink_to(real, target_is_directory=True)
    (root / "cat").symlink_to(tmp_path / "real", target_is_directory=True)
    found = problems_by_path(store)
    assert "symbolic link" in found["away"] and "symbolic link" in found["cat"]
    assert store.scan()[0] == []
    with pytest.raises(SkillError):
        store.view("away")
    with pytest.raises(SkillError, match="already exists"):
        store.apply(SkillChange("create", "away", skill_md("away")))
    with pytest.raises(SkillError, match="not a real folder"):
        store.apply(SkillChange("create", "new", skill_md("new"), category="cat"))
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["away"]
