"""The turn: an explicit, bounded loop that returns the messages it added.

request → run every tool call of the response (in order) → append the results → repeat,
until the model answers in text or ``max_iterations`` requests were made; then one last
request asks for an answer with what it has, and if the model still wants tools the turn
ends with a plain apology. The system prompt and the tools list are passed through
unchanged on every request (the caller owns them, frozen for the session).

Model failures (``ModelError``) propagate: the caller decides what the person is told and
still archives their message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.models import ChatMessage, Model, Usage
from agent_core.tools import Toolbox

__all__ = ["BUDGET_NOTE", "TurnResult", "run_turn"]

BUDGET_NOTE = (
    "[The tool budget for this turn is used up. Do not call tools now: answer the person with"
    " what you have, and say briefly what is left undone.]"
)
GAVE_UP = (
    "Sorry — I ran out of steps before I could finish that. Ask me to continue, or narrow the"
    " request."
)


@dataclass(slots=True)
class TurnResult:
    reply: str
    messages: list[dict[str, Any]]  # everything this turn added, the user message first
    usage: Usage = field(default_factory=Usage)
    requests: int = 0
    stopped: str | None = None  # "budget" when the tool budget ran out
    usage_at: dict[int, Usage] = field(default_factory=dict)  # message index -> its request
    retries: int = 0  # requests the model client had to repeat

    def tool_names(self) -> list[str]:
        return [
            call["function"]["name"]
            for message in self.messages
            for call in message.get("tool_calls") or []
        ]


async def run_turn(
    model: Model,
    *,
    system: ChatMessage,
    history: Sequence[ChatMessage],
    user: dict[str, Any],
    toolbox: Toolbox,
    max_iterations: int,
    model_name: str | None = None,
    allowed_tools: set[str] | None = None,
) -> TurnResult:
    """Run one turn; ``allowed_tools`` limits which tools execute (others get a refusal)."""
    conversation: list[ChatMessage] = [system, *history, user]
    result = TurnResult(reply="", messages=[user])

    async def ask() -> Any:
        reply = await model.complete(conversation, toolbox.specs, model=model_name)
        result.requests += 1
        result.retries += max(0, reply.attempts - 1)
        result.usage += reply.usage
        message = reply.as_message()
        conversation.append(message)
        result.usage_at[len(result.messages)] = reply.usage
        result.messages.append(message)
        return reply

    for _ in range(max_iterations):
        reply = await ask()
        if not reply.tool_calls:
            result.reply = reply.content or ""
            return result
        for call in reply.tool_calls:
            output = await toolbox.invoke(call.name, call.arguments, allowed=allowed_tools)
            message = {"role": "tool", "tool_call_id": call.id, "content": output}
            conversation.append(message)
            result.messages.append(message)
    note = {"role": "user", "content": BUDGET_NOTE}
    conversation.append(note)
    result.messages.append(note)
    reply = await ask()
    result.stopped = "budget"
    result.reply = reply.content if reply.content and not reply.tool_calls else GAVE_UP
    if reply.tool_calls:  # unanswered tool calls must not stay in the history
        result.messages[-1] = {"role": "assistant", "content": result.reply}
    return result
