"""Skills: procedural memory, shared by every person of a deployment.

Kept in a ``memory.skills.tree.SkillTree``: the folder ``<home>/skills`` (``FileTree``, the
default), or documents named by their paths (``DocumentTree``; PostgreSQL's, shared by every
replica). Layout (``root`` = ``<home>/skills``)::

    <root>/<name>/SKILL.md                       a skill (front matter + procedure)
    <root>/<category>/<name>/SKILL.md            a skill in a category
    <root>/…/<name>/{references,templates,scripts}/…   its support files
    <root>/.pending.json                         changes staged for an admin

Entries starting with ``.`` are never skills (the pending file, locks, the temporary folders
of an interrupted create or delete).

Reading never raises out of ``scan``/``index``/``check``: an invalid skill is a
``SkillProblem`` (path relative to ``root`` + reason) and is not loaded. A name used by two
folders loads neither. Reading never creates ``root``.

What reaches a prompt is scanned (``memory.scan.scanner``): the name and description when listing
(the index is in the frozen system prompt), the whole text when ``view``/``body`` hand a
SKILL.md or support file to the model (``screened=False`` is for operators' eyes only). The
scanner is slow on long texts (tens of µs per char), so findings are cached per content
(``memory.skills.disk``, the reading half the planner shares).

Writes (``apply``) hold the tree's write lock (``<root>/.write.lock``) across re-validate →
write, and are atomic: on disk a create builds the folder under a dot name and renames it
into place, SKILL.md and support files go through ``atomic_write_text`` (temp + fsync +
rename), a delete renames the folder to a dot name before removing it; in PostgreSQL the
write lock is one transaction. Content is refused, not stored, when the scanner has
findings; the refusal names the pattern ids and never echoes the text.

Staging (``stage`` → ``pending``/``diff`` → ``approve``/``reject``) keeps the requested
``SkillChange`` itself in ``.pending.json``; ``approve`` re-validates it against the disk as it
is *now*. A change that no longer applies (its patch text is gone, its name was taken, …) is
**dropped** from the pending list and ``approve`` raises ``SkillError`` saying so: the disk
moved on, and the agent can propose again.

Errors: ``SkillError(Exception)`` — a refused operation; ``str(exc)`` is for the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from memory.documents import Version
from memory.skills.changes import (
    PENDING_FILE,
    PendingSkillChange,
    SkillAction,
    SkillChange,
    load_pending,
    new_pending_id,
    save_pending,
)
from memory.skills.disk import SkillDisk
from memory.skills.files import (
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    SUPPORT_DIRS,
    SkillError,
    name_problem,
    parse_skill_md,
    support_parts,
)
from memory.skills.layout import Folder, SkillProblem, check_contents, read_skill_md
from memory.skills.plan import Plan, plan_change, render_diff
from memory.skills.tree import FileTree, SkillTree, join, walk, walk_real

__all__ = [
    "INDEX_INSTRUCTION",
    "PendingSkillChange",
    "Skill",
    "SkillAction",
    "SkillChange",
    "SkillError",
    "SkillProblem",
    "SkillStore",
]

INDEX_INSTRUCTION = (
    "Before a task that matches a skill, load it with skill_view(name) and follow it."
)
_MAX_LISTED_FILES = 100


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    category: str | None
    rel: str  # its folder, relative to the root: "devops/deploy-app"
    location: str  # its folder, for people: a path, or postgres:skills/devops/deploy-app
    tags: tuple[str, ...]
    version: str | None
    platforms: tuple[str, ...]


class SkillStore(SkillDisk):
    """The skills under ``root`` (a folder, or any ``SkillTree``); cheap to construct, safe
    to share between threads."""

    def __init__(self, root: Path | SkillTree, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(FileTree(root) if isinstance(root, Path) else root)
        self._clock = clock

    @property
    def where(self) -> str:
        """Where the skills are kept, for people."""
        return self.tree.where

    # -- reading ------------------------------------------------------------------------

    def scan(self) -> tuple[list[Skill], list[SkillProblem]]:
        """Every valid skill, sorted by (category or "", name), and every problem found."""
        with self.tree.reading():
            return self._scanned()

    def _scanned(self) -> tuple[list[Skill], list[SkillProblem]]:
        try:
            folders, problems = self.folders()
            loaded: dict[str, list[Skill]] = {}
            for folder in folders:
                result = self._load(folder)
                if isinstance(result, SkillProblem):
                    problems.append(result)
                else:
                    loaded.setdefault(result.name, []).append(result)
        except Exception as exc:  # never let a listing take the gateway down
            return [], [SkillProblem(".", f"the skills folder could not be listed: {exc!r}")]
        skills: list[Skill] = []
        for name, same in loaded.items():
            if len(same) == 1:
                skills.extend(same)
                continue
            where = ", ".join(s.rel for s in same)
            problems.extend(
                SkillProblem(
                    s.rel,
                    f"the skill name {name} is used by several folders ({where}); none of them "
                    "is loaded until an operator renames or removes all but one",
                )
                for s in same
            )
        skills.sort(key=lambda s: (s.category or "", s.name))
        problems.sort(key=lambda p: (p.path, p.reason))
        return skills, problems

    def get(self, name: str) -> Skill | None:
        try:
            return self._find(name)
        except SkillError:
            return None

    def index(self) -> str:
        """The skills index for the frozen system prompt; "" when there are no skills."""
        skills, _ = self.scan()
        if not skills:
            return ""
        lines = [INDEX_INSTRUCTION]
        category: str | None = None
        for skill in skills:
            if skill.category is None:
                lines.append(f"{skill.name}: {skill.description}")
                continue
            if skill.category != category:
                category = skill.category
                lines.append(f"{category}:")
            lines.append(f"  {skill.name}: {skill.description}")
        return "\n".join(lines)

    def body(self, name: str) -> str:
        """SKILL.md without its front matter (for ``/<skill-name>`` invocation); screened."""
        with self.tree.reading():
            skill = self._find(name)
        text = read_skill_md(self.tree, skill.rel, f"{name}/{SKILL_FILE}")
        self._screen(text, f"{name}/{SKILL_FILE}")
        return parse_skill_md(text).body

    def view(self, name: str, file_path: str | None = None, *, screened: bool = True) -> str:
        """SKILL.md (plus a list of the support files) or one support file's text.

        ``screened`` refuses text the scanner flags; pass False only to show an operator.
        """
        with self.tree.reading():
            return self._viewed(name, file_path, screened=screened)

    def _viewed(self, name: str, file_path: str | None, *, screened: bool) -> str:
        skill = self._find(name)
        if file_path in (None, "", SKILL_FILE):
            label = f"{name}/{SKILL_FILE}"
            text = read_skill_md(self.tree, skill.rel, label)
            if screened:
                self._screen(text, label)
            files = self.support_files(skill)
            if files:
                text = text.rstrip("\n") + (
                    f'\n\n[Support files of this skill; load one with skill_view("{name}", '
                    "file_path):]\n" + "\n".join(f"- {f}" for f in files)
                )
            return text
        parts = support_parts(file_path)
        label = f"{name}/{'/'.join(parts)}"
        path = walk_real(self.tree, skill.rel, parts, label=name)
        kind = self.tree.kind(path)
        if kind != "file":
            listed = ", ".join(self.support_files(skill)) or "none"
            what = "is a folder" if kind == "dir" else "does not exist"
            raise SkillError(f"{label} {what}. Support files of {name}: {listed}.")
        text = self.tree.read_text(
            path,
            max_bytes=MAX_SUPPORT_BYTES,
            label=label,
            limit_text="support files are limited to 1 MiB",
        )
        if screened:
            self._screen(text, label)
        return text

    def support_files(self, skill: Skill) -> list[str]:
        """Regular support files (``references/api.md``, …), sorted; symlinks are skipped."""
        found: list[str] = []
        with self.tree.reading():
            for top in SUPPORT_DIRS:
                if self.tree.kind(join(skill.rel, top)) != "dir":
                    continue
                for path, kind in walk(self.tree, join(skill.rel, top)):
                    if kind == "file":
                        found.append(path[len(skill.rel) + 1 :])
        found.sort()
        if len(found) > _MAX_LISTED_FILES:
            more = len(found) - _MAX_LISTED_FILES
            found = [*found[:_MAX_LISTED_FILES], f"… and {more} more"]
        return found

    def check(self) -> list[SkillProblem]:
        """Every problem of every skill: listing problems, then scanner findings and bad or
        unusable files inside valid skills (for ``mnemo skills check``). Slow on big files."""
        with self.tree.reading():
            return self._checked()

    def _checked(self) -> list[SkillProblem]:
        skills, problems = self.scan()
        for skill in skills:
            try:
                problems.extend(check_contents(self.tree, skill.rel, self.findings))
            except (OSError, SkillError) as exc:
                problems.append(SkillProblem(skill.rel, f"unreadable: {exc}"))
        problems.sort(key=lambda p: (p.path, p.reason))
        return problems

    # -- writing ------------------------------------------------------------------------

    def validate(self, change: SkillChange) -> None:
        """Everything ``apply`` would check, without writing anything."""
        plan_change(self, change)

    def apply(self, change: SkillChange) -> str:
        """Perform ``change`` atomically; returns what changed (``SkillError`` if refused)."""
        plan_change(self, change)  # refuse early, before creating anything on disk
        with self.tree.write_lock():
            plan = plan_change(self, change)
            plan.run()
        return plan.message

    # -- staging (admin approval) -------------------------------------------------------

    def stage(self, change: SkillChange, *, requested_by: str, reason: str) -> PendingSkillChange:
        """Validate ``change`` and keep it in ``.pending.json`` for an admin."""
        plan_change(self, change)
        with self._pending_section():
            items, version = self._load_pending()
            ids = {item.id for item in items}
            pending_id = new_pending_id()
            while pending_id in ids:
                pending_id = new_pending_id()
            item = PendingSkillChange(pending_id, change, requested_by, self._clock(), reason)
            save_pending(self.tree.pending, [*items, item], expected=version)
        return item

    def pending(self) -> list[PendingSkillChange]:
        if self.tree.kind("") != "dir":
            return []
        with self._pending_section():
            return self._load_pending()[0]

    def diff(self, pending_id: str) -> str:
        """Unified diff of the files a pending change touches: now vs after approval."""
        item = self._pending_item(pending_id)
        try:
            plan = plan_change(self, item.change)
        except SkillError as exc:
            raise SkillError(
                f"Pending change {pending_id} ({item.change.describe()}) no longer applies: "
                f"{exc} Approving it would discard it."
            ) from None
        return render_diff(plan.files)

    def approve(self, pending_id: str) -> str:
        """Re-validate against the disk now and apply; a change that no longer applies is
        dropped from the pending list and reported with ``SkillError``."""
        if self.tree.kind("") != "dir":
            raise self._unknown(pending_id)
        with self._pending_section():
            items, version = self._load_pending()
            item = next((p for p in items if p.id == pending_id), None)
            if item is None:
                raise self._unknown(pending_id)
            rest = [p for p in items if p.id != pending_id]
            dropped: SkillError | None = None
            try:
                with self.tree.write_lock():
                    plan: Plan = plan_change(self, item.change)
                    plan.run()
            except SkillError as exc:
                dropped = SkillError(
                    f"Pending change {pending_id} ({item.change.describe()}) no longer applies "
                    f"and was discarded: {exc}"
                )
            save_pending(self.tree.pending, rest, expected=version)
        if dropped is not None:  # raised once the section ended: the discard is kept
            raise dropped
        return plan.message

    def reject(self, pending_id: str) -> str:
        if self.tree.kind("") != "dir":
            raise self._unknown(pending_id)
        with self._pending_section():
            items, version = self._load_pending()
            item = next((p for p in items if p.id == pending_id), None)
            if item is None:
                raise self._unknown(pending_id)
            rest = [p for p in items if p.id != pending_id]
            save_pending(self.tree.pending, rest, expected=version)
        return f"rejected {pending_id} ({item.change.describe()}); skills unchanged"

    # -- internals ----------------------------------------------------------------------

    def _find(self, name: str) -> Skill:
        folder = self.find_folder(name)
        result = self._load(folder)
        if isinstance(result, SkillProblem):
            raise SkillError(f"The skill {name} cannot be loaded: {result.reason}")
        return result

    def _load(self, folder: Folder) -> Skill | SkillProblem:
        name = folder.name
        problem = name_problem(name, "folder name")
        if problem is not None:
            return SkillProblem(folder.rel, problem)
        try:
            text = read_skill_md(self.tree, folder.rel, SKILL_FILE)
            meta = parse_skill_md(text)
        except SkillError as exc:
            return SkillProblem(folder.rel, str(exc).rstrip("."))
        except Exception as exc:  # an unexpected read error must not end the listing
            return SkillProblem(folder.rel, f"{SKILL_FILE} could not be read: {exc!r}")
        if meta.name != name:
            return SkillProblem(
                folder.rel,
                f"front-matter name {meta.name!r} does not match the folder name {name!r}",
            )
        ids = self.findings(f"{meta.name}: {meta.description}")
        if ids:
            return SkillProblem(
                folder.rel,
                f"the description is blocked by the injection scanner ({', '.join(ids)})",
            )
        return Skill(
            name=name,
            description=meta.description,
            category=folder.category,
            rel=folder.rel,
            location=self.tree.location(folder.rel),
            tags=meta.tags,
            version=meta.version,
            platforms=meta.platforms,
        )

    def _screen(self, text: str, label: str) -> None:
        ids = self.findings(text)
        if ids:
            raise SkillError(
                f"{label} is blocked by the injection scanner ({', '.join(ids)}) and was not "
                "loaded. Tell the user: an operator can inspect it with `mnemo skills check`."
            )

    def _pending_section(self) -> AbstractContextManager[None]:
        return self.tree.pending.exclusive(PENDING_FILE)

    def _load_pending(self) -> tuple[list[PendingSkillChange], Version]:
        return load_pending(self.tree.pending, now=self._clock())

    def _pending_item(self, pending_id: str) -> PendingSkillChange:
        item = next((p for p in self.pending() if p.id == pending_id), None)
        if item is None:
            raise self._unknown(pending_id)
        return item

    @staticmethod
    def _unknown(pending_id: str) -> SkillError:
        return SkillError(f"No pending skill change with id {pending_id!r}.")
