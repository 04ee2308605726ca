"""``/skills``: the procedures the bot knows, for everyone; reviewing staged skill changes
(``pending``, ``diff ID``, ``approve ID``, ``reject ID``), for admins. The listing is public
in a group (everyone shares the skills); the review subcommands are answered privately.
"""

from __future__ import annotations

import asyncio

from gateway.commands.base import CommandContext, CommandReply, CommandRequest
from gateway.terminal import visible
from memory.skills import SkillError

__all__ = ["skills_command"]


async def skills_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    if context.skills is None:
        return CommandReply("Skills are turned off on this bot (skills.enabled).")
    store = context.skills
    sub, _, rest = request.args.partition(" ")
    sub, rest = sub.lower(), rest.strip()
    if not sub:
        skills, _problems = await asyncio.to_thread(store.scan)
        if not skills:
            return CommandReply("I have no skills yet. I write one when I work out a procedure.")
        lines = ["Skills (run one with /NAME followed by your request):"]
        for skill in skills:
            where = f"{skill.category}/" if skill.category else ""
            lines.append(f"{where}{skill.name} — {visible(skill.description)}")
        return CommandReply("\n".join(lines))
    if sub not in ("pending", "diff", "approve", "reject"):
        return CommandReply("Usage: /skills [pending | diff ID | approve ID | reject ID]")
    if not request.admin:
        return CommandReply("Sorry, reviewing skill changes is for the admins of this bot.")
    if sub == "pending":
        items = await asyncio.to_thread(store.pending)
        if not items:
            return CommandReply("No skill changes are waiting.")
        lines = ["Skill changes waiting for approval:"]
        lines += [f"{i.id}: {i.change.describe()} — {visible(i.reason)}" for i in items]
        lines.append("/skills diff ID shows one; /skills approve ID or reject ID decides.")
        return CommandReply("\n".join(lines))
    if not rest:
        return CommandReply(f"Usage: /skills {sub} ID (see /skills pending)")
    action = {"diff": store.diff, "approve": store.approve, "reject": store.reject}[sub]
    try:
        text = await asyncio.to_thread(action, rest)
    except (SkillError, OSError) as exc:
        return CommandReply(visible(str(exc)))
    return CommandReply(visible(text) if sub != "diff" else text)
