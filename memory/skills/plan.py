"""Planning skill writes: every check, the before/after text, then one ``run`` that writes.

``plan_change(store, change)`` validates a ``SkillChange`` against the disk as it is now
(``store``: a ``SkillDisk``, such as the ``SkillStore``) and returns a ``Plan``: the message
``apply`` returns, the files it touches (for ``diff``) and a ``run`` closure that performs
it. ``validate``, ``stage`` and ``diff`` stop at the plan; ``apply`` and ``approve`` plan
again under the write lock and run it at once, so what is written is exactly what was
checked.

Order of checks for new text: size limit (cheap) → scanner → front matter, so a YAML error
message can never quote text the scanner would refuse.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from memory.skills.changes import SkillChange
from memory.skills.disk import SkillDisk
from memory.skills.files import (
    MAX_SUPPORT_BYTES,
    SKILL_FILE,
    SkillError,
    check_encodable,
    check_name,
    support_parts,
)
from memory.skills.layout import Folder
from memory.skills.tree import SkillTree, join, walk_real

__all__ = ["FileChange", "Plan", "plan_change", "render_diff"]


@dataclass(frozen=True, slots=True)
class FileChange:
    rel: str  # relative to the skills root
    before: str | None  # None: the file does not exist before
    after: str | None  # None: the file does not exist after
    binary: bool = False  # not UTF-8 text (or too large): diffed as "Binary files … differ"


@dataclass(frozen=True, slots=True)
class Plan:
    message: str
    files: tuple[FileChange, ...]
    run: Callable[[], None]


def plan_change(store: SkillDisk, change: SkillChange) -> Plan:
    if not isinstance(change, SkillChange):
        raise TypeError(f"expected a SkillChange, got {type(change).__name__}")
    check_name(change.name)
    with store.tree.reading():  # the plan reads; it writes only when it runs
        return _planned(store, change)


def _planned(store: SkillDisk, change: SkillChange) -> Plan:
    if change.action == "create":
        return _create(store, change)
    folder = store.find_folder(change.name)
    if change.action == "patch":
        return _patch(store, change, folder)
    if change.action == "edit":
        return _edit(store, change, folder)
    if change.action == "delete":
        return _delete(store, folder)
    if change.action == "write_file":
        return _write_file(store, change, folder)
    if change.action == "remove_file":
        return _remove_file(store.tree, change, folder)
    raise SkillError(
        f"Unknown action {change.action!r}: use create, patch, edit, delete, write_file or "
        "remove_file."
    )


def _create(store: SkillDisk, change: SkillChange) -> Plan:
    name = change.name
    category = change.category or None
    if category is not None:
        check_name(category, "category name")
    content = _required(change.content, "create needs content: the whole SKILL.md")
    store.check_skill_md(content, name)
    try:
        folders = store.folders()[0]
    except OSError as exc:
        raise SkillError(f"The skills folder cannot be read ({exc.strerror}).") from None
    taken = next((f for f in folders if f.name == name), None)
    if taken is not None:
        raise SkillError(
            f"A skill named {name} already exists ({taken.rel}); choose another name, or change "
            "that one with patch or edit."
        )
    tree = store.tree
    if category is not None:
        kind = tree.kind(category)
        if kind not in ("missing", "dir"):
            raise SkillError(f"The category {category} is not a real folder; use another one.")
        if kind == "dir" and tree.kind(join(category, SKILL_FILE)) != "missing":
            raise SkillError(f"{category} is a skill, not a category; use another category.")
    rel = join(category or "", name)
    if tree.kind(rel) != "missing":
        raise SkillError(f"{rel} already exists; choose another name.")

    def run() -> None:
        tree.create_folder(rel, content)

    where = f" in category {category}" if category else ""
    return Plan(
        f"created skill {name}{where} ({SKILL_FILE}, {len(content):,} chars)",
        (FileChange(f"{rel}/{SKILL_FILE}", None, content),),
        run,
    )


def _patch(store: SkillDisk, change: SkillChange, folder: Folder) -> Plan:
    name = change.name
    old = _required(
        change.old_text, "patch needs old_text: the exact text to replace (it must occur once)"
    )
    new = change.new_text
    if new is None:
        raise SkillError("patch needs new_text (an empty string deletes old_text).")
    current = store.read_skill_md(folder)
    count = _occurrences(current, old)
    if count == 0:
        raise SkillError(
            f"old_text was not found in {name}'s {SKILL_FILE}; nothing was changed. Load it with "
            "skill_view and copy the exact text (spaces and line breaks included)."
        )
    if count > 1:
        raise SkillError(
            f"old_text occurs {count} times in {name}'s {SKILL_FILE}; nothing was changed. "
            "Include more of the surrounding text so that it matches exactly once."
        )
    updated = current.replace(old, new, 1)
    store.check_skill_md(updated, name)
    return Plan(
        f"patched {name}: 1 replacement (+{len(new):,}/-{len(old):,} chars)",
        (FileChange(f"{folder.rel}/{SKILL_FILE}", current, updated),),
        _writer(store.tree, join(folder.rel, SKILL_FILE), updated),
    )


def _edit(store: SkillDisk, change: SkillChange, folder: Folder) -> Plan:
    content = _required(change.content, "edit needs content: the whole new SKILL.md")
    current = store.read_skill_md(folder)
    store.check_skill_md(content, change.name)
    return Plan(
        f"rewrote {change.name}'s {SKILL_FILE} ({len(current):,} → {len(content):,} chars)",
        (FileChange(f"{folder.rel}/{SKILL_FILE}", current, content),),
        _writer(store.tree, join(folder.rel, SKILL_FILE), content),
    )


def _delete(store: SkillDisk, folder: Folder) -> Plan:
    tree = store.tree
    files: list[FileChange] = []
    for rel in _files(tree, folder.rel):
        try:
            text = tree.read_text(rel, max_bytes=MAX_SUPPORT_BYTES, label=rel, limit_text="too big")
            files.append(FileChange(rel, text, None))
        except SkillError:
            files.append(FileChange(rel, "", None, binary=True))
    support = sum(1 for f in files if not f.rel.endswith(f"/{SKILL_FILE}"))

    def run() -> None:
        tree.delete_folder(folder.rel)

    noun = "support file" if support == 1 else "support files"
    return Plan(
        f"deleted skill {folder.name} ({folder.rel}: {SKILL_FILE} and {support} {noun})",
        tuple(sorted(files, key=lambda f: f.rel)),
        run,
    )


def _write_file(store: SkillDisk, change: SkillChange, folder: Folder) -> Plan:
    parts = support_parts(change.file_path)
    content = _required(change.content, "write_file needs content: the file's text")
    check_encodable(content, "The file's text")
    size = len(content.encode("utf-8"))
    if size > MAX_SUPPORT_BYTES:
        raise SkillError(
            f"The file would be {size:,} bytes; support files are limited to 1 MiB "
            f"({MAX_SUPPORT_BYTES:,} bytes). Nothing was written; split it."
        )
    ids = store.findings(content)
    if ids:
        raise SkillError(
            f"Refused: the file's text matches the injection scanner ({', '.join(ids)}). Nothing "
            "was written; rewrite it without that content."
        )
    tree = store.tree
    rel = walk_real(tree, folder.rel, parts, label=folder.rel)
    kind = tree.kind(rel)
    file_path = "/".join(parts)
    if kind == "dir":
        raise SkillError(f"{folder.rel}/{file_path} is a folder, not a file.")
    before: str | None = None
    binary = False
    if kind == "file":
        try:
            before = tree.read_text(
                rel, max_bytes=MAX_SUPPORT_BYTES, label=rel, limit_text="too big"
            )
        except SkillError:
            before, binary = "", True

    def run() -> None:
        tree.write_text(rel, content)

    state = "new file" if kind == "missing" else "replaced"
    return Plan(
        f"wrote {change.name}/{file_path} ({len(content):,} chars, {state})",
        (FileChange(rel, before, content, binary),),
        run,
    )


def _remove_file(tree: SkillTree, change: SkillChange, folder: Folder) -> Plan:
    parts = support_parts(change.file_path)
    rel = walk_real(tree, folder.rel, parts, label=folder.rel)
    file_path = "/".join(parts)
    kind = tree.kind(rel)
    if kind != "file":
        what = "is a folder" if kind == "dir" else "does not exist"
        raise SkillError(f"{change.name}/{file_path} {what}; nothing was removed.")
    try:
        before = tree.read_text(rel, max_bytes=MAX_SUPPORT_BYTES, label=rel, limit_text="too big")
        binary = False
    except SkillError:
        before, binary = "", True

    def run() -> None:
        tree.remove_file(rel, keep=folder.rel)

    return Plan(
        f"removed {change.name}/{file_path}",
        (FileChange(rel, before, None, binary),),
        run,
    )


def render_diff(files: tuple[FileChange, ...]) -> str:
    """A unified diff (``a/`` now, ``b/`` after) of every file a plan touches."""
    return "".join(_unified(change) for change in files)


def _unified(change: FileChange) -> str:
    before = f"a/{change.rel}" if change.before is not None else "/dev/null"
    after = f"b/{change.rel}" if change.after is not None else "/dev/null"
    if change.binary:
        return f"Binary files {before} and {after} differ\n"
    return "".join(
        difflib.unified_diff(
            _lines(change.before), _lines(change.after), fromfile=before, tofile=after
        )
    )


def _lines(text: str | None) -> list[str]:
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]  # "\n" only, as written
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] += "\\ No newline at end of file\n"
    return lines


# -- helpers ------------------------------------------------------------------------------


def _required(value: str | None, message: str) -> str:
    if value is None or value == "":
        raise SkillError(message + ".")
    return value


def _occurrences(text: str, needle: str) -> int:
    """Occurrences of ``needle`` in ``text``, overlapping ones included."""
    count, start = 0, text.find(needle)
    while start != -1:
        count += 1
        start = text.find(needle, start + 1)
    return count


def _writer(tree: SkillTree, rel: str, text: str) -> Callable[[], None]:
    def run() -> None:
        tree.write_text(rel, text)

    return run


def _files(tree: SkillTree, top: str) -> list[str]:
    """Regular files below ``top`` (dot files included), never following a symlink."""
    found: list[str] = []
    for name in tree.entries(top, hidden=True):
        rel = join(top, name)
        kind = tree.kind(rel)
        if kind == "file":
            found.append(rel)
        elif kind == "dir":
            found.extend(_files(tree, rel))
    return found
