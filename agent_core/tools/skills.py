"""The skill tools: ``skills_list``, ``skill_view`` and ``skill_manage`` over the skill store.

Skills are shared by every person of a deployment, so who may change them is a policy
(``SkillPolicy``): with ``non_admin`` (the default) a write from an admin's conversation is
applied at once, while one from anybody else's conversation, or from a background review,
is staged for an admin (``/skills approve ID``); ``always`` stages every write, ``never``
none. The tool tells the model which happened, so it never claims a change that is only
proposed.

The three tools have the same specs in every toolbox of a session (the tools list is part of
the cached prompt prefix); only what ``skill_manage`` does with a write differs.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from agent_core.tools.base import Tool
from memory.skills import SkillChange, SkillError, SkillStore

__all__ = ["SkillPolicy", "skill_tools"]

Approval = Literal["non_admin", "always", "never"]


@dataclass(frozen=True, slots=True)
class SkillPolicy:
    approval: Approval = "non_admin"
    admin: bool = False
    person: str = ""

    def stages(self, *, from_review: bool) -> bool:
        if self.approval == "never":
            return False
        if self.approval == "always":
            return True
        return from_review or not self.admin

    def reason(self, *, from_review: bool) -> str:
        if from_review:
            return f"proposed by a review of {self.person}'s conversation"
        if self.approval == "always":
            return f"from {self.person} (skills.write_approval: always)"
        return f"from {self.person} (not an admin)"


def skill_tools(store: SkillStore, policy: SkillPolicy, *, from_review: bool = False) -> list[Tool]:
    async def skills_list() -> dict[str, Any]:
        """List the skills you have: reusable, step-by-step procedures for classes of tasks
        (name, category, description). Load one with skill_view before doing such a task."""
        skills, _problems = await asyncio.to_thread(store.scan)
        return {
            "success": True,
            "skills": [
                {"name": s.name, "category": s.category, "description": s.description}
                for s in skills
            ],
        }

    async def skill_view(*, name: str, file_path: str | None = None) -> dict[str, Any]:
        """Load a skill's SKILL.md (its procedure) or one of its support files, and follow it.

        Args:
            name: the skill's name, as in the skills index
            file_path: a support file of the skill, e.g. "references/api.md" (omit for SKILL.md)
        """
        try:
            text = await asyncio.to_thread(store.view, name, file_path)
        except SkillError as exc:
            return {"success": False, "error": str(exc)}
        return {"success": True, "name": name, "file": file_path or "SKILL.md", "content": text}

    async def skill_manage(
        *,
        action: Literal["create", "patch", "edit", "delete", "write_file", "remove_file"],
        name: str,
        content: str | None = None,
        category: str | None = None,
        old_text: str | None = None,
        new_text: str | None = None,
        file_path: str | None = None,
    ) -> dict[str, Any]:
        """Record or improve a skill: a reusable procedure for a class of task (not a fact
        about the person — that is memory). Save one after you worked out how to do
        something non-trivial that will come back; fix one when it proved wrong.

        create: a new skill; content is the whole SKILL.md, starting with front matter
        ("---\\nname: <name>\\ndescription: <one line: when to use it>\\n---") and then the
        steps. patch: replace old_text (must occur exactly once in SKILL.md) with new_text.
        edit: rewrite SKILL.md with content. delete: remove the skill. write_file /
        remove_file: a support file under references/, templates/ or scripts/.

        Args:
            action: what to do
            name: the skill's name (lower case letters, digits, ., _ and -; at most 64)
            content: SKILL.md text (create, edit) or the support file's text (write_file)
            category: an optional folder to group the skill in (create only)
            old_text: the exact text to replace (patch)
            new_text: its replacement (patch)
            file_path: the support file, e.g. "templates/report.md" (write_file, remove_file)
        """
        change = SkillChange(
            action=action,
            name=name,
            content=content,
            category=category,
            old_text=old_text,
            new_text=new_text,
            file_path=file_path,
        )
        try:
            if policy.stages(from_review=from_review):
                pending = await asyncio.to_thread(
                    store.stage,
                    change,
                    requested_by=policy.person,
                    reason=policy.reason(from_review=from_review),
                )
                return {
                    "success": True,
                    "staged": True,
                    "pending_id": pending.id,
                    "message": (
                        f"Proposed ({change.describe()}); it waits for an admin's approval"
                        f" as {pending.id} and is not in effect yet."
                    ),
                }
            message = await asyncio.to_thread(store.apply, change)
        except SkillError as exc:
            return {"success": False, "error": str(exc)}
        return {"success": True, "message": message}

    return [Tool.from_function(f) for f in (skills_list, skill_view, skill_manage)]
