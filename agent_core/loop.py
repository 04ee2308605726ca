"""The turn: an explicit, bounded loop that returns the messages it added.

request → run every tool call of the response (in order) → append the results → repeat,
until the model answers in text or ``max_iterations`` requests were made; then one last
request asks for an answer with what it has, and if the model still wants tools the turn
ends with a plain apology. The system prompt and the tools list are passed through
unchanged on every request (the caller owns them, frozen for the session).

What the person is shown is the model's text, except where that text alone would mislead
(``answer``): a refusal (the ``refusal`` field, or ``finish_reason: content_filter``) is
quoted and marked as the model's, an answer cut off at the length limit carries a note
saying so, and an empty answer says it is empty, never nothing. The assistant message kept
in the history (and the archive) is what the person saw. Tool calls in a reply that was cut
off (``length``, ``content_filter``) are not run: their arguments may be incomplete, so
each gets a result saying so and the model may try again within the budget.

Model failures (``ModelError``) propagate: the caller decides what the person is told and
still archives their message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.models import ChatMessage, Model, ModelReply, Usage
from agent_core.tools import Toolbox

__all__ = [
    "BUDGET_NOTE",
    "CUT_OFF",
    "EMPTY",
    "EMPTY_CUT_OFF",
    "FILTERED",
    "FILTERED_NOTE",
    "REFUSED",
    "TurnResult",
    "answer",
    "run_turn",
]

BUDGET_NOTE = (
    "[The tool budget for this turn is used up. Do not call tools now: answer the person with"
    " what you have, and say briefly what is left undone.]"
)
GAVE_UP = (
    "Sorry — I ran out of steps before I could finish that. Ask me to continue, or narrow the"
    " request."
)
REFUSED = "The model refused to answer this. Its words: “{refusal}”"
FILTERED = "The model refused to answer this: its content filter stopped the reply."
FILTERED_NOTE = "(The model's content filter stopped my answer here.)"
CUT_OFF = "(My answer was cut off here: it reached the model's length limit.)"
EMPTY_CUT_OFF = (
    "(The model reached its length limit before it wrote any answer. Ask for something"
    " shorter, or in smaller steps.)"
)
EMPTY = "(The model sent an empty answer. Please try again, or ask in other words.)"
CUT_CALLS = {"length": "at the model's length limit", "content_filter": "by a content filter"}


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

    def finish(reply: ModelReply) -> TurnResult:
        result.reply = answer(reply)
        if result.reply != reply.content:  # the history holds what the person saw
            result.messages[-1] = {"role": "assistant", "content": result.reply}
        return result

    for _ in range(max_iterations):
        reply = await ask()
        if not reply.tool_calls:
            return finish(reply)
        cut = CUT_CALLS.get(reply.finish_reason or "")
        for call in reply.tool_calls:
            if cut is None:
                output = await toolbox.invoke(call.name, call.arguments, allowed=allowed_tools)
            else:
                output = _not_run(cut)
            message = {"role": "tool", "tool_call_id": call.id, "content": output}
            conversation.append(message)
            result.messages.append(message)
    note = {"role": "user", "content": BUDGET_NOTE}
    conversation.append(note)
    result.messages.append(note)
    reply = await ask()
    result.stopped = "budget"
    if not reply.tool_calls and answer(reply) != EMPTY:
        return finish(reply)
    result.reply = GAVE_UP  # unanswered tool calls must not stay in the history
    result.messages[-1] = {"role": "assistant", "content": result.reply}
    return result


def answer(reply: ModelReply) -> str:
    """The text the person is shown for a reply without tool calls."""
    text = reply.content or ""
    if reply.refusal and reply.refusal.strip():
        return REFUSED.format(refusal=reply.refusal.strip())
    if reply.finish_reason == "content_filter":
        return f"{text.rstrip()}\n\n{FILTERED_NOTE}" if text.strip() else FILTERED
    if not text.strip():
        return EMPTY_CUT_OFF if reply.finish_reason == "length" else EMPTY
    if reply.finish_reason == "length":
        return f"{text.rstrip()}\n\n{CUT_OFF}"
    return text


def _not_run(why: str) -> str:
    return json.dumps(
        {
            "success": False,
            "error": f"not run: your reply was cut off {why}, so these arguments may be"
            " incomplete. Call the tool again with shorter arguments, or answer in text.",
        }
    )
