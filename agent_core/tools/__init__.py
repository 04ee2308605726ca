"""The agent's tools: typed async functions exposed to the model."""

from __future__ import annotations

from agent_core.tools.base import Toolbox
from agent_core.tools.memory import memory_tool
from agent_core.tools.search import SearchTool, session_search_tool
from agent_core.tools.skills import Approval, SkillPolicy, skill_tools

__all__ = [
    "Approval",
    "SearchTool",
    "SkillPolicy",
    "Toolbox",
    "memory_tool",
    "session_search_tool",
    "skill_tools",
]
