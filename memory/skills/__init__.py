"""Skills: procedural memory on disk, shared by a deployment (folders, limits, layout, planned
and staged changes).
"""

from __future__ import annotations

from memory.skills.store import SkillChange, SkillError, SkillStore

__all__ = ["SkillChange", "SkillError", "SkillStore"]
