"""``/help``, ``/new`` and ``/status``: what the bot does, a fresh session, and this session's
turns, tokens, memory usage and budgets. The admins' part of ``/help`` (``ADMIN_HELP``, also
what a bare ``/admin`` answers) is shown only where the asker alone reads it.
"""

from __future__ import annotations

import asyncio

from gateway.commands.base import CommandContext, CommandReply, CommandRequest, share
from memory import FILE_NAMES, TARGETS

__all__ = ["ADMIN_HELP", "HELP", "help_command", "new_command", "status_command"]

HELP = """\
I'm an assistant with a memory of my own. Talk to me normally; I keep short notes about our \
work and about you, and I can search our past conversations.

/new — start a fresh session (with a fresh view of my memory)
/status — this session: turns, tokens, memory usage
/memory — everything I remember (/memory notes, /memory profile)
/memory pending — memory writes waiting for your approval (approve ID / reject ID)
/memory card — what I have noticed about you over time (with the local memory provider)
/forget TEXT — forget the entry that matches TEXT
/sessions — your recent sessions
/search QUERY — search your past conversations
/skills — the procedures I have learned; /SKILL-NAME TEXT runs one on TEXT"""

ADMIN_HELP = """\
Admin commands:
/admin memory PERSON — a person's memory files
/admin sessions PERSON — a person's recent sessions
/admin search PERSON QUERY — search a person's archive
/admin blocked — memory entries the scanner keeps out of prompts
/memory provider — the memory provider beside my own memory, and its health
/admin stats — people, sessions, messages, turns and tokens today
/admin pending PERSON — a person's (or a chat's) staged memory writes
/admin approve PERSON ID, /admin reject PERSON ID — decide one
/pair list — pending pairing codes, approved and blocked people
/pair approve CODE — let the person who got CODE talk to me
/pair deny CODE — drop that code (they may ask again, three times a day)
/pair revoke PLATFORM:ID — take that approval back
/pair block PLATFORM:ID, /pair unblock PLATFORM:ID — ignore someone silently, or stop
/skills pending — skill changes waiting for approval (diff ID, approve ID, reject ID)"""


async def help_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    private = request.message.chat_type == "dm" or request.message.private_reply
    return CommandReply(HELP + ("\n\n" + ADMIN_HELP if request.admin and private else ""))


async def new_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    ended = await context.sessions.reset(request.key)
    note = f" (session {ended} ended)" if ended else ""
    return CommandReply(
        f"Fresh start{note}. Your next message begins a new session with my memory as it is now."
    )


async def status_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    sessions = context.sessions
    session_person = sessions.person_for(request.message, request.key)
    store = context.store(session_person)
    lines = []
    conversation = sessions.peek(request.key)
    session_id = conversation.id if conversation else await sessions.current_id(request.key)
    if session_id is None:
        lines.append("No session yet: your next message starts one.")
    else:
        lines.append(f"Session {session_id}")
        if conversation is not None:
            usage = conversation.usage
            lines.append(f"Turns: {conversation.turns}")
            cached = share(usage.cached_tokens, usage.prompt_tokens)
            lines.append(
                f"Tokens: {usage.prompt_tokens:,} prompt ({cached} cached),"
                f" {usage.completion_tokens:,} completion"
            )
        else:
            messages = await context.archive.messages(session_id, viewer=session_person)
            turns = sum(1 for m in messages if m.role == "user")
            lines.append(f"Turns: {turns} (resumes on your next message)")
    usages = await asyncio.to_thread(lambda: [(t, store.usage(t)) for t in TARGETS])
    lines += [f"{FILE_NAMES[t]}: {u}" for t, u in usages]
    if context.budget is not None:
        lines.append(await context.budget(request.person, admin=request.admin))
    return CommandReply("\n".join(lines))
