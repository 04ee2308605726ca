"""The agent's tools: typed async functions exposed to the model."""

from __future__ import annotations

from agent_core.tools.base import Toolbox
from agent_core.tools.builtin import memory_tool, session_search_tool
from agent_core.tools.skills import Approval, SkillPolicy, skill_tools

__all__ = [
    "Approval",
    "SkillPolicy",
    "Toolbox",
    "memory_tool",
    "session_search_tool",
    "skill_tools",
]
