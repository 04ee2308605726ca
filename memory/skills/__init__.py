"""Skills: procedural memory, shared by every person of a deployment. ``files`` holds
the SKILL.md format and the limits, ``layout`` finds skill folders, ``changes`` the requested
changes and their pending file, ``disk`` reads and checks the folder, ``plan`` validates a
change and plans its writes, and ``store`` (``SkillStore``) lists, reads, applies and stages
changes for an admin, all through ``tree`` (``SkillTree``: the folder on disk, ``FileTree``,
or documents such as PostgreSQL's, ``DocumentTree``). A refused operation raises
``SkillError``, whose text is for the model.
"""

from __future__ import annotations

from memory.skills.changes import PendingSkillChange, SkillAction, SkillChange
from memory.skills.disk import SkillDisk
from memory.skills.files import MAX_SKILL_CHARS, MAX_SUPPORT_BYTES, SKILL_FILE, SkillError
from memory.skills.layout import SkillProblem
from memory.skills.store import INDEX_INSTRUCTION, Skill, SkillStore
from memory.skills.tree import DocumentTree, FileTree, SkillTree

__all__ = [
    "INDEX_INSTRUCTION",
    "MAX_SKILL_CHARS",
    "MAX_SUPPORT_BYTES",
    "SKILL_FILE",
    "DocumentTree",
    "FileTree",
    "PendingSkillChange",
    "Skill",
    "SkillAction",
    "SkillChange",
    "SkillDisk",
    "SkillError",
    "SkillProblem",
    "SkillStore",
    "SkillTree",
]
