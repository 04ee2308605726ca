"""The review nudge: after a turn, ask the model whether anything deserves a memory write.

It runs as a named background task once the reply is with the caller. It sends the same
system prompt and the same tools list as the conversation (so the provider's prefix cache is
warm), the conversation itself, and a last user message asking for a decision. Only the
``memory`` tool executes — and, when skills are on, the skill tools, whose writes from a
review wait for an admin (``agent_core.tools.skills``); any other tool call is answered with
a refusal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.loop import run_turn
from agent_core.models import ChatMessage, Model, Usage
from agent_core.tools import Toolbox

__all__ = ["REVIEW_INSTRUCTION", "REVIEW_SKILLS", "ReviewOutcome", "review"]

log = logging.getLogger(__name__)

REVIEW_INSTRUCTION = """\
[Memory review — the person does not see this message.] Look back over the conversation \
above. Is there anything that deserves to be saved for every future session: a preference, a \
correction of how you work, a recurring pattern, or a stable fact about the person or their \
environment? If so, save it now with the memory tool (keep entries short; merge with what is \
already there). Do not save task progress or one-off details. If nothing qualifies, answer \
exactly: nothing to save."""


REVIEW_SKILLS = """\
Also: did you work out a reusable procedure for a class of task (a workflow, a fix that took \
several attempts)? If so, and no skill in the index covers it, propose one with skill_manage \
(or patch the skill that proved wrong); it will wait for an admin's approval."""

SKILL_TOOLS = frozenset({"skills_list", "skill_view", "skill_manage"})


@dataclass(slots=True)
class ReviewOutcome:
    saved: list[dict[str, Any]] = field(default_factory=list)  # successful memory calls
    staged: list[str] = field(default_factory=list)  # pending ids (write approval)
    refused: list[str] = field(default_factory=list)  # other tools the model tried
    skills: list[str] = field(default_factory=list)  # skill changes proposed or made
    usage: Usage = field(default_factory=Usage)
    answer: str = ""

    @property
    def wrote(self) -> bool:
        return bool(self.saved or self.staged or self.skills)

    def summary(self) -> str:
        if self.staged:
            text = f"memory: {len(self.staged)} write(s) waiting for approval"
        elif self.saved:
            text = "memory: " + "; ".join(_describe(call) for call in self.saved)
        else:
            text = "memory: nothing to save"
        if self.skills:
            text += "; skills: " + "; ".join(self.skills)
        return text


async def review(
    model: Model,
    *,
    system: ChatMessage,
    conversation: Sequence[ChatMessage],
    toolbox: Toolbox,
    max_iterations: int = 4,
    model_name: str | None = None,
    skills: bool = False,
) -> ReviewOutcome:
    """One review over ``conversation``; memory writes happen as the model makes them.
    ``skills``: the skill tools are in ``toolbox`` and the review may use them."""
    instruction = f"{REVIEW_INSTRUCTION}\n\n{REVIEW_SKILLS}" if skills else REVIEW_INSTRUCTION
    turn = await run_turn(
        model,
        system=system,
        history=conversation,
        user={"role": "user", "content": instruction},
        toolbox=toolbox,
        max_iterations=max_iterations,
        model_name=model_name,
        allowed_tools={"memory", *SKILL_TOOLS} if skills else {"memory"},
    )
    outcome = ReviewOutcome(usage=turn.usage, answer=turn.reply)
    calls: dict[str, dict[str, Any]] = {}
    for message in turn.messages:
        for call in message.get("tool_calls") or []:
            calls[call["id"]] = call["function"]
        if message.get("role") == "tool":
            function = calls.get(message["tool_call_id"], {})
            result = json.loads(message["content"])
            if skills and function.get("name") == "skill_manage":
                if result.get("success"):
                    outcome.skills.append(str(result.get("message", "")))
                continue
            if skills and function.get("name") in SKILL_TOOLS:
                continue
            if function.get("name") != "memory":
                outcome.refused.append(str(function.get("name")))
            elif result.get("staged"):
                outcome.staged.append(result["pending_id"])
            elif result.get("success") and "note" in result and "already" not in result["message"]:
                outcome.saved.append(_arguments(function))
    log.info("review done: %s", outcome.summary())
    return outcome


def _arguments(function: dict[str, Any]) -> dict[str, Any]:
    try:
        parsed = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _describe(call: dict[str, Any]) -> str:
    target = call.get("target", "memory")
    if "operations" in call:
        return f"{len(call['operations'])} change(s) to {target}"
    text = call.get("content") or call.get("old_text") or ""
    return f"{call.get('action', '?')} {target}: {text[:60]}"
