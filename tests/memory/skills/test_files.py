"""The pure skill rules: names, front matter and every limit, support-file paths."""

from __future__ import annotations

import pytest

from memory.skills.files import (
    MAX_DESCRIPTION,
    MAX_SKILL_CHARS,
    SkillError,
    name_problem,
    parse_skill_md,
    support_parts,
)


def md(front: str, body: str = "Steps.\n") -> str:
    return f"---\n{front}\n---\n{body}"


def test_parses_every_field_ignores_unknown_keys_and_strips_the_body() -> None:
    meta = parse_skill_md(
        md(
            "name: deploy-app\ndescription: '  Ship the app to prod  '\ntags: [ops, ci]\n"
            'version: "1.0"\nplatforms: [linux]\nlicense: MIT\nmetadata: {a: 1}',
            "\n\n1. Build\n2. Ship\n\n",
        )
    )
    assert meta.name == "deploy-app"
    assert meta.description == "Ship the app to prod"
    assert meta.tags == ("ops", "ci")
    assert meta.version == "1.0"
    assert meta.platforms == ("linux",)
    assert meta.body == "1. Build\n2. Ship"


def test_crlf_front_matter_and_folded_description_are_accepted() -> None:
    text = "---\r\nname: a\r\ndescription: >\r\n  one line\r\n---\r\nbody\r\n"
    meta = parse_skill_md(text)
    assert (meta.name, meta.description) == ("a", "one line")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter\n", "must start with YAML front matter"),
        ("---\nname: a\ndescription: b\n", "not closed"),
        (md("name: a\ndescription: [unclosed"), "not valid YAML"),
        (md("name: a\n  description: b: c"), "not valid YAML"),
        (md("- a\n- b"), "must be a YAML mapping"),
        (md("description: b"), "missing 'name'"),
        (md("name: a"), "missing 'description'"),
        (md("name: a\ndescription: '   '"), "non-empty string"),
        (md("name: a\ndescription: 12"), "non-empty string"),
        (md("name: a\ndescription: |\n  two\n  lines"), "must be one line"),
        (md("name: a\ndescription: b\nversion: 1.0"), "'version' must be a string"),
        (md("name: a\ndescription: b\ntags: ops"), "'tags' must be a list"),
        (md("name: a\ndescription: b\nplatforms: [linux, 3]"), "'platforms' must be a list"),
        (md("name: Deploy\ndescription: b"), "not allowed"),
        (md(f"name: {'a' * 65}\ndescription: b"), "at most 64"),
        (md(f"name: a\ndescription: {'d' * (MAX_DESCRIPTION + 1)}"), "at most 1,024"),
    ],
)
def test_invalid_front_matter_is_a_clear_skill_error(text: str, reason: str) -> None:
    with pytest.raises(SkillError, match=reason):
        parse_skill_md(text)


def test_yaml_error_names_the_line_in_the_file() -> None:
    with pytest.raises(SkillError) as info:
        parse_skill_md(md("name: a\ndescription: [unclosed"))
    assert "line 3" in str(info.value)


def test_limits_are_inclusive() -> None:
    parse_skill_md(md(f"name: {'a' * 64}\ndescription: {'d' * MAX_DESCRIPTION}"))
    head = md("name: a\ndescription: b", "")
    exact = head + "x" * (MAX_SKILL_CHARS - len(head))
    assert len(exact) == MAX_SKILL_CHARS
    parse_skill_md(exact)
    with pytest.raises(SkillError, match="100,001 chars; at most 100,000"):
        parse_skill_md(exact + "x")


@pytest.mark.parametrize("name", ["a", "deploy-app", "v1.2_x", "0day", "a" * 64])
def test_valid_names(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(
    "name", ["", "Deploy", "-a", ".a", "_a", "a b", "a/b", "..", "é", "a" * 65, "a\u200b"]
)
def test_invalid_names(name: str) -> None:
    assert name_problem(name) is not None


@pytest.mark.parametrize(
    "path", ["references/api.md", "templates/report.md", "scripts/run.sh", "references/a/b.md"]
)
def test_support_paths_inside_the_support_folders(path: str) -> None:
    assert "/".join(support_parts(path)) == path


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../x", "'..'"),
        ("/etc/passwd", "not an absolute path"),
        ("references/../../x", "'..'"),
        ("references/./x", "'..'"),
        ("references//x", "empty"),
        ("~/x", "not an absolute path"),
        ("C:/x", "not an absolute path"),
        ("references\\x", "'/'"),
        ("references", "references/, templates/ or scripts/"),
        ("SKILL.md", "references/, templates/ or scripts/"),
        ("other/x.md", "references/, templates/ or scripts/"),
        ("references/.env", "may not start with '.'"),
        ("references/a b.md", "letters, digits"),
        ("references/a/b/c/d/e/f.md", "nested too deeply"),
        ("", "non-empty"),
    ],
)
def test_support_paths_that_could_leave_the_folder_are_refused(path: str, reason: str) -> None:
    with pytest.raises(SkillError, match=reason):
        support_parts(path)
