"""Where skills are in the skills root, and what ``mnemo skills check`` finds inside them.

``list_folders(root)`` finds candidate skill folders without reading any SKILL.md: a real
directory directly under ``root`` that holds an entry named ``SKILL.md`` is a skill; any
other real directory there is a category whose real sub-directories holding ``SKILL.md`` are
skills. Dot entries are skipped everywhere; a symlink, a stray file or a folder without
``SKILL.md`` is a ``SkillProblem``. Nothing here follows a symlink.

``check_contents`` is the deep check of one loaded skill: its whole SKILL.md and every
support file against the scanner, support files' names, sizes and encoding, and entries
beside SKILL.md that nothing reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from memory.skills.files import (
    MAX_SKILL_CHARS,
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    SUPPORT_DIRS,
    SkillError,
    kind_of,
    name_problem,
    read_text,
    support_parts,
)

__all__ = [
    "Folder",
    "SkillProblem",
    "check_contents",
    "entries",
    "list_folders",
    "read_skill_md",
    "walk",
]

Findings = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class SkillProblem:
    path: str  # relative to the skills root
    reason: str


class Folder(NamedTuple):
    """A candidate skill folder: a real directory holding some entry named SKILL.md."""

    directory: Path
    category: str | None
    rel: str  # relative to the skills root, e.g. "devops/deploy-app"


def list_folders(root: Path) -> tuple[list[Folder], list[SkillProblem]]:
    """Candidate skill folders (not yet validated) and layout problems; a missing root is
    empty. Raises ``OSError`` only if a folder cannot be listed."""
    folders: list[Folder] = []
    problems: list[SkillProblem] = []
    if not root.exists():
        return folders, problems
    if not root.is_dir():
        return folders, [SkillProblem(".", "the skills root is not a folder")]
    for entry in entries(root):
        path = root / entry
        kind = kind_of(path)
        if kind != "dir":
            problems.append(SkillProblem(entry, stray(kind)))
        elif kind_of(path / SKILL_FILE) != "missing":
            folders.append(Folder(path, None, entry))
        elif (problem := name_problem(entry, "category name")) is not None:
            problems.append(SkillProblem(entry, problem))
        else:
            for child in entries(path):
                rel = f"{entry}/{child}"
                kind = kind_of(path / child)
                if kind != "dir":
                    problems.append(SkillProblem(rel, stray(kind)))
                elif kind_of(path / child / SKILL_FILE) == "missing":
                    problems.append(
                        SkillProblem(
                            rel,
                            f"no {SKILL_FILE} here (skills live in <name>/{SKILL_FILE} or "
                            f"<category>/<name>/{SKILL_FILE})",
                        )
                    )
                else:
                    folders.append(Folder(path / child, entry, rel))
    return folders, problems


def read_skill_md(directory: Path, label: str) -> str:
    return read_text(
        directory / SKILL_FILE,
        max_bytes=4 * MAX_SKILL_CHARS,
        label=label,
        limit_text=f"SKILL.md is limited to {MAX_SKILL_CHARS:,} chars",
    )


def check_contents(directory: Path, rel: str, findings: Findings) -> Iterator[SkillProblem]:
    """Problems inside one loaded skill folder (``rel`` is its path under the root)."""
    ids = findings(read_skill_md(directory, SKILL_FILE))
    if ids:
        yield SkillProblem(f"{rel}/{SKILL_FILE}", _blocked(ids))
    for entry in entries(directory):
        if entry == SKILL_FILE:
            continue
        kind = kind_of(directory / entry)
        if entry not in SUPPORT_DIRS:
            yield SkillProblem(
                f"{rel}/{entry}",
                "not used: only SKILL.md and references/, templates/, scripts/ are read",
            )
        elif kind != "dir":
            yield SkillProblem(f"{rel}/{entry}", stray(kind, "folder"))
        else:
            yield from _check_support(directory, entry, rel, findings)


def _check_support(
    directory: Path, top: str, rel: str, findings: Findings
) -> Iterator[SkillProblem]:
    for path, kind in walk(directory / top):
        sub = path.relative_to(directory).as_posix()
        shown = f"{rel}/{sub}"
        if kind == "dir":
            continue
        if kind != "file":
            yield SkillProblem(shown, stray(kind, "file"))
            continue
        try:
            support_parts(sub)
            text = read_text(
                path, max_bytes=MAX_SUPPORT_BYTES, label=sub, limit_text="the limit is 1 MiB"
            )
        except SkillError as exc:
            yield SkillProblem(shown, str(exc).rstrip("."))
            continue
        ids = findings(text)
        if ids:
            yield SkillProblem(shown, _blocked(ids))


def entries(directory: Path) -> list[str]:
    """Sorted names in ``directory``, without dot entries."""
    return sorted(name for name in os.listdir(directory) if not name.startswith("."))


def walk(top: Path) -> Iterator[tuple[Path, str]]:
    """Every entry below ``top`` with its kind, depth first, never following a symlink."""
    for name in entries(top):
        path = top / name
        kind = kind_of(path)
        yield path, kind
        if kind == "dir":
            yield from walk(path)


def stray(kind: str, expected: str = "skill folder") -> str:
    if kind == "symlink":
        return f"is a symbolic link, not a {expected}; symlinks are never followed"
    if kind == "missing":
        return "vanished while being listed"
    return f"is not a {expected} (skills live in <name>/{SKILL_FILE})"


def _blocked(ids: tuple[str, ...]) -> str:
    return f"blocked by the injection scanner ({', '.join(ids)}); skill_view refuses it"
