"""What a turn's user message says, built from the chat's messages (no model, no I/O but
the skill's file).

- ``merged_text``: the messages a lane merges into one turn, with their attachments named
  (``[attached document: notes.pdf (application/pdf, 1200 bytes)]``), each prefixed with its
  speaker when the whole group shares one session. Names are ``label``-safe already.
- ``skill_turn``: ``/<skill-name> TEXT`` as the message a turn should get, the skill's
  instructions in it (in the user message: the system prompt stays frozen). Telegram's menu
  allows only ``_``, so ``/rotate_logs`` names the skill ``rotate-logs`` too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from adapters.messages import InboundMessage
from memory.skills import SkillError, SkillStore

__all__ = ["merged_text", "skill_turn", "typed_skill"]


def merged_text(messages: Sequence[InboundMessage], *, shared: bool) -> str:
    """One turn's text from the messages merged into it (``shared``: a group's one
    session, where each message says who wrote it)."""
    parts = []
    for message in messages:
        text = message.text
        for item in message.attachments:
            size = f"{item.size} bytes" if item.size else None
            details = ", ".join(x for x in (item.mime_type, size) if x)
            name = f": {item.name}" if item.name else ""
            text += f"\n[attached {item.kind}{name}{f' ({details})' if details else ''}]"
        if shared:
            text = f"{message.sender.display_name or message.sender.user_id}: {text}"
        parts.append(text.strip())
    return "\n\n".join(p for p in parts if p)


async def skill_turn(
    skills: SkillStore | None, message: InboundMessage
) -> InboundMessage | str | None:
    """``/<skill-name> TEXT``: the message a turn should get with the skill's body in it,
    an error text, or None when no skill has that name."""
    head, _, rest = message.text.strip().partition(" ")
    name = head.removeprefix("/").split("@", 1)[0].lower()
    if skills is None or not name or message.is_callback:
        return None
    try:
        found = await asyncio.to_thread(typed_skill, skills, name)
        if found is None:
            return None
        name = found
        body = await asyncio.to_thread(skills.body, name)
    except SkillError as exc:
        return f"The skill {name} cannot be used right now: {exc}"
    text = (
        f"[The person asked you to use the skill {name!r}. Its instructions follow;"
        f" apply them to their request.]\n<skill name={name!r}>\n{body.strip()}\n</skill>\n\n"
        f"{rest.strip() or '(no further details given)'}"
    )
    return replace(message, text=text, is_command=False)


def typed_skill(skills: SkillStore, typed: str) -> str | None:
    """The skill a typed command names: its own name, or its name with ``-`` and ``.``
    typed as ``_`` (Telegram's menu allows only ``_``, so ``/rotate_logs`` is how
    ``rotate-logs`` appears there)."""
    if skills.get(typed) is not None:
        return typed
    if "_" not in typed:
        return None
    found, _problems = skills.scan()
    matches = [s.name for s in found if s.name.replace("-", "_").replace(".", "_") == typed]
    return matches[0] if len(matches) == 1 else None
