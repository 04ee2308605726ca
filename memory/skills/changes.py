"""Skill writes as values: ``SkillChange``, and the staged ones in ``<root>/.pending.json``.

A ``SkillChange`` is exactly what ``skill_manage`` was asked to do; it carries no computed
state, so a staged change is re-validated against the disk when an admin approves it (a
``patch`` whose text is gone by then is refused, not applied blindly). Fields that do not
belong to the action are ignored.

``.pending.json`` (a document of the skill tree's ``pending``: on disk ``<root>/.pending.json``)
is read and written inside its exclusive section by ``SkillStore``; a file that cannot be
read as ours is set aside (on disk ``.pending.json.corrupt.<unix-ts>``, logged) rather than
breaking every later skill write, as ``memory/curated/pending.py`` does for memory.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from memory.documents import Documents, Version

__all__ = [
    "PENDING_FILE",
    "PendingSkillChange",
    "SkillAction",
    "SkillChange",
    "load_pending",
    "new_pending_id",
    "save_pending",
]

PENDING_FILE = ".pending.json"
SkillAction = Literal["create", "patch", "edit", "delete", "write_file", "remove_file"]
ACTIONS: tuple[str, ...] = get_args(SkillAction)
_FIELDS = ("content", "category", "old_text", "new_text", "file_path")
_VERBS = {
    "create": "create",
    "patch": "patch",
    "edit": "edit",
    "delete": "delete",
    "write_file": "write",
    "remove_file": "remove",
}


@dataclass(frozen=True, slots=True)
class SkillChange:
    action: SkillAction
    name: str
    content: str | None = None  # create/edit: the whole SKILL.md; write_file: the file text
    category: str | None = None  # create only
    old_text: str | None = None  # patch: must match exactly once in SKILL.md
    new_text: str | None = None  # patch
    file_path: str | None = None  # write_file/remove_file: e.g. "references/api.md"

    def describe(self) -> str:
        """One line, e.g. ``patch skill deploy-app (SKILL.md)``."""
        verb = _VERBS.get(self.action, str(self.action))
        if self.action == "delete":
            return f"delete skill {self.name} (the whole folder)"
        if self.action in ("write_file", "remove_file"):
            return f"{verb} skill {self.name} ({self.file_path})"
        where = f" in category {self.category}" if self.action == "create" and self.category else ""
        return f"{verb} skill {self.name}{where} (SKILL.md)"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action, "name": self.name}
        data.update({k: getattr(self, k) for k in _FIELDS if getattr(self, k) is not None})
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SkillChange:
        action = data["action"]
        if action not in ACTIONS or not isinstance(data["name"], str):
            raise ValueError(f"not a skill change: {action!r}")
        fields = {k: data.get(k) for k in _FIELDS}
        if any(v is not None and not isinstance(v, str) for v in fields.values()):
            raise ValueError("skill change fields must be strings")
        return cls(action, data["name"], **fields)


@dataclass(frozen=True, slots=True)
class PendingSkillChange:
    id: str
    change: SkillChange
    requested_by: str
    created_at: float
    reason: str  # why it was staged, e.g. "from telegram-5 (not an admin)"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "change": self.change.to_json(),
            "requested_by": self.requested_by,
            "created_at": self.created_at,
            "reason": self.reason,
        }


def new_pending_id() -> str:
    return secrets.token_hex(3)


def load_pending(documents: Documents, *, now: float) -> tuple[list[PendingSkillChange], Version]:
    """The staged changes and the version they were read at; call inside the file's section."""
    document = documents.read(PENDING_FILE)
    if document.raw is None:
        return [], None
    try:
        data = json.loads(document.raw.decode("utf-8"))
        items = [
            PendingSkillChange(
                id=str(raw["id"]),
                change=SkillChange.from_json(raw["change"]),
                requested_by=str(raw["requested_by"]),
                created_at=float(raw["created_at"]),
                reason=str(raw["reason"]),
            )
            for raw in data["items"]
        ]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        documents.set_aside(PENDING_FILE, exc, what="staged skill changes", now=now)
        return [], None
    return items, document.version


def save_pending(
    documents: Documents, items: Sequence[PendingSkillChange], *, expected: Version
) -> None:
    """Write ``items`` over the version read (``Conflict`` if it changed meanwhile)."""
    data = {"version": 1, "items": [item.to_json() for item in items]}
    text = json.dumps(data, ensure_ascii=False, indent=1)
    documents.write(PENDING_FILE, text.encode("utf-8"), expected=expected)
