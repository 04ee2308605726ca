"""``mnemo skills …`` end to end: real argv, real files, exit codes and printed output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main
from memory.skills.store import SkillChange, SkillStore
from tests.memory.skills.helpers import INJECTION, put, put_skill, skill_md


def run(home: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--home", str(home), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_reading_an_empty_home_creates_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, "skills", "list", capsys=capsys) == (
        0,
        f"No skills under {home / 'skills'}.\n",
        "",
    )
    assert run(home, "skills", "list", "--json", capsys=capsys) == (0, "[]\n", "")
    assert run(home, "skills", "check", capsys=capsys) == (0, "0 skills, no problems\n", "")
    assert run(home, "skills", "pending", capsys=capsys)[0] == 0
    code, _, err = run(home, "skills", "show", "nope", capsys=capsys)
    assert code == 1 and "No skill named 'nope'" in err
    assert not (home / "skills").exists()


def test_list_and_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = home / "skills"
    put_skill(root, "deploy-app", "devops", description="Deploy the app")
    put_skill(root, "b", description="Bee")
    put(root, "broken/SKILL.md", "no front matter")
    code, out, err = run(home, "skills", "list", capsys=capsys)
    assert code == 0
    assert out == "b           -       Bee\ndeploy-app  devops  Deploy the app\n"
    assert "1 problem" in err and "mnemo skills check" in err
    code, out, _ = run(home, "skills", "list", "--json", capsys=capsys)
    rows = json.loads(out)
    assert [(r["name"], r["category"], r["description"]) for r in rows] == [
        ("b", None, "Bee"),
        ("deploy-app", "devops", "Deploy the app"),
    ]
    assert rows[1]["path"] == str(root / "devops" / "deploy-app")


def test_show_prints_skill_md_even_when_the_scanner_blocks_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = home / "skills"
    put_skill(root, "s", body="1. Step\n")
    put(root, "s/references/api.md", "API\u200b notes")
    code, out, _ = run(home, "skills", "show", "s", capsys=capsys)
    assert (
        code == 0 and out.startswith(skill_md("s", body="1. Step")) and "references/api.md" in out
    )
    code, out, _ = run(home, "skills", "show", "s", "--file", "references/api.md", capsys=capsys)
    assert (code, out) == (0, "API<U+200B> notes\n")  # invisible characters made visible
    code, _, err = run(home, "skills", "show", "s", "--file", "../x", capsys=capsys)
    assert code == 1 and "'..'" in err
    put_skill(root, "evil", body=INJECTION + "\n")
    code, out, _ = run(home, "skills", "show", "evil", capsys=capsys)
    assert code == 0 and INJECTION in out


def test_check_reports_every_problem_and_exits_1(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = home / "skills"
    put_skill(root, "good")
    put_skill(root, "evil", body=INJECTION + "\n")
    put(root, "good/references/big.md", "x" * (1024 * 1024 + 1))
    put(root, "mismatch/SKILL.md", skill_md("other"))
    code, out, _ = run(home, "skills", "check", capsys=capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines == [
        "evil/SKILL.md: blocked by the injection scanner (ignore-instructions, prompt-leak); "
        "skill_view refuses it",
        "good/references/big.md: references/big.md is 1,048,577 bytes; the limit is 1 MiB",
        "mismatch: front-matter name 'other' does not match the folder name 'mismatch'",
    ]
    assert INJECTION not in out
    code, out, _ = run(home, "skills", "check", "--json", capsys=capsys)
    assert code == 1 and len(json.loads(out)) == 3


def test_check_clean(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put_skill(home / "skills", "a")
    put_skill(home / "skills", "b", "cat")
    assert run(home, "skills", "check", capsys=capsys) == (0, "2 skills, no problems\n", "")


def test_review_staged_changes_from_the_terminal(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = home / "skills"
    put_skill(root, "s", body="1. Step\n")
    store = SkillStore(root)
    patch = store.stage(
        SkillChange("patch", "s", old_text="1. Step", new_text="1. Better"),
        requested_by="telegram-5",
        reason="from telegram-5 (not an admin)",
    )
    delete = store.stage(SkillChange("delete", "s"), requested_by="telegram-5", reason="review")
    code, out, _ = run(home, "skills", "pending", capsys=capsys)
    assert code == 0
    assert f"{patch.id}  patch skill s (SKILL.md)\n" in out
    assert "from telegram-5 (not an admin)" in out
    code, out, _ = run(home, "skills", "diff", patch.id, capsys=capsys)
    assert code == 0 and "-1. Step\n+1. Better" in out
    code, out, _ = run(home, "skills", "reject", delete.id, capsys=capsys)
    assert code == 0 and out.startswith(f"rejected {delete.id}")
    code, out, _ = run(home, "skills", "approve", patch.id, capsys=capsys)
    assert (code, out) == (0, "patched s: 1 replacement (+9/-7 chars)\n")
    code, _, err = run(home, "skills", "approve", patch.id, capsys=capsys)
    assert code == 1 and "No pending skill change" in err
    code, out, _ = run(home, "skills", "pending", "--json", capsys=capsys)
    assert json.loads(out) == []
