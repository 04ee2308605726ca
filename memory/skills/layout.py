"""Where skills are in the skills root, and what ``mnemo skills check`` finds inside them.

``list_folders(tree)`` (``memory.skills.tree``: a folder on disk, or documents) finds
candidate skill folders without reading any SKILL.md: a real directory directly under the
root that holds an entry named ``SKILL.md`` is a skill; any other real directory there is a
category whose real sub-directories holding ``SKILL.md`` are skills. Dot entries are skipped
everywhere; a symlink, a stray file or a folder without ``SKILL.md`` is a ``SkillProblem``.
Nothing here follows a symlink.

``check_contents`` is the deep check of one loaded skill: its whole SKILL.md and every
support file against the scanner, support files' names, sizes and encoding, and entries
beside SKILL.md that nothing reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from memory.skills.files import (
    MAX_SKILL_CHARS,
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    SUPPORT_DIRS,
    SkillError,
    name_problem,
    support_parts,
)
from memory.skills.tree import SkillTree, join, walk

__all__ = [
    "Folder",
    "SkillProblem",
    "check_contents",
    "list_folders",
    "read_skill_md",
]

Findings = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class SkillProblem:
    path: str  # relative to the skills root
    reason: str


class Folder(NamedTuple):
    """A candidate skill folder: a real directory holding some entry named SKILL.md."""

    rel: str  # relative to the skills root, e.g. "devops/deploy-app"
    category: str | None

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]


def list_folders(tree: SkillTree) -> tuple[list[Folder], list[SkillProblem]]:
    """Candidate skill folders (not yet validated) and layout problems; a missing root is
    empty. Raises ``OSError`` only if a folder cannot be listed."""
    folders: list[Folder] = []
    problems: list[SkillProblem] = []
    root = tree.kind("")
    if root == "missing":
        return folders, problems
    if root != "dir":
        return folders, [SkillProblem(".", "the skills root is not a folder")]
    for entry in tree.entries(""):
        kind = tree.kind(entry)
        if kind != "dir":
            problems.append(SkillProblem(entry, stray(kind)))
        elif tree.kind(join(entry, SKILL_FILE)) != "missing":
            folders.append(Folder(entry, None))
        elif (problem := name_problem(entry, "category name")) is not None:
            problems.append(SkillProblem(entry, problem))
        else:
            for child in tree.entries(entry):
                rel = f"{entry}/{child}"
                kind = tree.kind(rel)
                if kind != "dir":
                    problems.append(SkillProblem(rel, stray(kind)))
                elif tree.kind(join(rel, SKILL_FILE)) == "missing":
                    problems.append(
                        SkillProblem(
                            rel,
                            f"no {SKILL_FILE} here (skills live in <name>/{SKILL_FILE} or "
                            f"<category>/<name>/{SKILL_FILE})",
                        )
                    )
                else:
                    folders.append(Folder(rel, entry))
    return folders, problems


def read_skill_md(tree: SkillTree, folder: str, label: str) -> str:
    return tree.read_text(
        join(folder, SKILL_FILE),
        max_bytes=4 * MAX_SKILL_CHARS,
        label=label,
        limit_text=f"SKILL.md is limited to {MAX_SKILL_CHARS:,} chars",
    )


def check_contents(tree: SkillTree, rel: str, findings: Findings) -> Iterator[SkillProblem]:
    """Problems inside one loaded skill folder (``rel`` is its path under the root)."""
    ids = findings(read_skill_md(tree, rel, SKILL_FILE))
    if ids:
        yield SkillProblem(f"{rel}/{SKILL_FILE}", _blocked(ids))
    for entry in tree.entries(rel):
        if entry == SKILL_FILE:
            continue
        kind = tree.kind(join(rel, entry))
        if entry not in SUPPORT_DIRS:
            yield SkillProblem(
                f"{rel}/{entry}",
                "not used: only SKILL.md and references/, templates/, scripts/ are read",
            )
        elif kind != "dir":
            yield SkillProblem(f"{rel}/{entry}", stray(kind, "folder"))
        else:
            yield from _check_support(tree, rel, entry, findings)


def _check_support(
    tree: SkillTree, rel: str, top: str, findings: Findings
) -> Iterator[SkillProblem]:
    for path, kind in walk(tree, join(rel, top)):
        sub = path[len(rel) + 1 :]
        shown = f"{rel}/{sub}"
        if kind == "dir":
            continue
        if kind != "file":
            yield SkillProblem(shown, stray(kind, "file"))
            continue
        try:
            support_parts(sub)
            text = tree.read_text(
                path, max_bytes=MAX_SUPPORT_BYTES, label=sub, limit_text="the limit is 1 MiB"
            )
        except SkillError as exc:
            yield SkillProblem(shown, str(exc).rstrip("."))
            continue
        ids = findings(text)
        if ids:
            yield SkillProblem(shown, _blocked(ids))


def stray(kind: str, expected: str = "skill folder") -> str:
    if kind == "symlink":
        return f"is a symbolic link, not a {expected}; symlinks are never followed"
    if kind == "missing":
        return "vanished while being listed"
    return f"is not a {expected} (skills live in <name>/{SKILL_FILE})"


def _blocked(ids: tuple[str, ...]) -> str:
    return f"blocked by the injection scanner ({', '.join(ids)}); skill_view refuses it"
