"""``/sessions`` and ``/search``: a person's own recent sessions and past conversations.

What people see of a search is the conversation itself: no tool output, no headers the
gateway adds, each hit an excerpt around the words searched (``memory.archive``'s
``Searcher.discover`` with ``conversation_only``). ``/admin sessions`` and ``/admin search``
show the same of another person.
"""

from __future__ import annotations

from adapters.messages import label
from gateway.commands.base import CommandContext, CommandReply, CommandRequest
from gateway.terminal import visible
from memory.archive import excerpt, when, without_header

__all__ = ["search_as", "search_command", "sessions_command", "sessions_of"]


async def sessions_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    return CommandReply(await sessions_of(context, request.person, "Your recent sessions"))


async def search_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    if not request.args:
        return CommandReply("Usage: /search QUERY")
    return CommandReply(await search_as(context, request.person, request.args))


async def sessions_of(context: CommandContext, person: str, title: str) -> str:
    sessions = await context.archive.sessions(viewer=person, limit=10)
    if not sessions:
        return "No sessions yet."
    lines = [f"{title}:"]
    for session in sessions:
        state = "open" if session.ended_at is None else (session.end_reason or "ended")
        name = visible(session.title or "(untitled)")
        lines.append(
            f"{session.id} · {when(session.last_active_at)} · {session.message_count} messages"
            f" · {state} · {name}"
        )
    return "\n".join(lines)


async def search_as(context: CommandContext, person: str, query: str, *, own: bool = True) -> str:
    """``person``'s past conversations that match ``query``, as they read them (``own``:
    the asker is that person)."""
    found = await context.searcher.discover(
        query, viewer=person, limit=5, hits_per_session=1, conversation_only=True, neighbours=False
    )
    if found.parsed.empty:
        return "That has no words I can search for. Try /search with a few words you said."
    if not found.results:
        return (
            f"Nothing in {'your' if own else 'their'} past conversations matches"
            f" «{label(query)}». Try other or fewer words, or /sessions for the recent ones."
        )
    lines = []
    for result in found.results:
        message = result.message
        who = ("you" if own else "they") if message.role == "user" else "me"
        cut = excerpt(without_header(message.content), found.parsed.all_terms())
        lines.append(
            f"{when(message.created_at)} · {label(result.session.title or '(untitled)')}\n"
            f"  {who}: {visible(cut)}"
        )
    return "\n".join(lines)
