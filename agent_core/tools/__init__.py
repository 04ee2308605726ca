"""The agent's tools: typed async functions exposed to the model (``base``: the ``Tool``
registry, which reads a function's signature as its JSON schema and checks the model's
arguments against it), the built-in ``memory`` and ``session_search`` tools bound to one
person, and the skill tools. This is the edge where memory's typed results become the JSON
the model reads (``outcome_json``, ``message_json``, ``session_json``); errors a tool wants
the model to see are ``ToolFailure``.
"""

from __future__ import annotations

from agent_core.tools.base import Tool, Toolbox, ToolFailure
from agent_core.tools.memory import SAVED_NOTE, MemoryOperation, memory_tool, outcome_json
from agent_core.tools.search import SearchTool, message_json, session_json, session_search_tool
from agent_core.tools.skills import Approval, SkillPolicy, skill_tools

__all__ = [
    "SAVED_NOTE",
    "Approval",
    "MemoryOperation",
    "SearchTool",
    "SkillPolicy",
    "Tool",
    "ToolFailure",
    "Toolbox",
    "memory_tool",
    "message_json",
    "outcome_json",
    "session_json",
    "session_search_tool",
    "skill_tools",
]
