"""``/memory`` and ``/forget``: what the bot remembers, staged writes, and forgetting.

In a group, ``/memory`` and ``/forget`` act on the store the group's sessions use when an
admin asks (the chat's own, with ``memory.group_scope: chat``) and on the asker's own store
otherwise (``subject``). Entries are numbered across both files, MEMORY.md's first, so
``/forget N`` takes the number ``/memory`` shows. The wording of staged writes and of
decisions lives in ``gateway.approvals``.
"""

from __future__ import annotations

import asyncio

from adapters.messages import label
from gateway.approvals import answer, decider, listing
from gateway.commands.base import CommandContext, CommandReply, CommandRequest
from gateway.provider import health
from gateway.terminal import visible
from memory import FILE_NAMES, TARGETS, MemoryStore, MemoryTurn, Target
from memory.curated import Refused, preview
from memory.providers import Subject

__all__ = [
    "card",
    "decide",
    "forget_command",
    "memory_command",
    "pending",
    "provider_status",
    "show",
    "subject",
]

PROVIDER_WAIT_S = 5.0
TARGET_WORDS: dict[str, Target] = {"notes": "memory", "profile": "user"}


async def memory_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    word, _, rest = request.args.partition(" ")
    word = word.lower()
    person = subject(context, request)
    store = context.store(person)
    if word in ("", "notes", "profile"):
        targets: tuple[Target, ...] = (TARGET_WORDS[word],) if word else TARGETS
        shown = await asyncio.to_thread(show, store, targets)
        if person != request.person:
            shown = f"The memory of this chat ({person}):\n{shown}"
        return CommandReply(shown)
    mine = person == request.person
    if word == "card":
        return await card(context, person, mine=mine)
    if word == "provider":
        if not request.admin:
            return CommandReply("Sorry, /memory provider is for the admins of this bot.")
        return await provider_status(context)
    if word == "pending":
        return await pending(context, person, mine=mine)
    if word in ("approve", "reject"):
        pending_id = rest.strip()
        if not pending_id:
            return CommandReply(f"Usage: /memory {word} ID (see /memory pending)")
        return await decide(context, request, person, word, pending_id, mine=mine)
    return CommandReply("Usage: /memory [notes|profile|card|pending|approve ID|reject ID|provider]")


async def forget_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    text = request.args.strip()
    if not text:
        return CommandReply(
            "Usage: /forget N — forgets entry N of /memory; /forget TEXT — forgets the one"
            " entry that contains TEXT."
        )
    store = context.store(subject(context, request))
    store.write_approval = False  # the person's own hand, not the model's
    return CommandReply(await asyncio.to_thread(_forget, store, text))


async def card(context: CommandContext, person: str, *, mine: bool) -> CommandReply:
    """The memory provider's card of ``person`` (the local provider keeps one)."""
    provider = context.provider
    read = getattr(provider, "card", None)
    if provider is None or read is None:
        return CommandReply("No person card is kept here (the local memory provider keeps one).")
    try:
        async with asyncio.timeout(PROVIDER_WAIT_S):
            found = await read(Subject(person, not mine))
    except Exception as exc:
        return CommandReply(f"The memory provider could not answer ({type(exc).__name__}).")
    whose = "your" if mine else f"this chat's ({person})"
    if found is None:
        return CommandReply(f"No card yet for {whose} memory: one is written when a session ends.")
    return CommandReply(f"The card of {whose} memory:\n{visible(found.text)}")


async def provider_status(context: CommandContext) -> CommandReply:
    """Which memory provider is active and how it is (admins)."""
    provider = context.provider
    if provider is None:
        return CommandReply("No memory provider is active (memory.provider: none).")
    try:
        async with asyncio.timeout(PROVIDER_WAIT_S):
            report = await health(provider)
    except Exception as exc:
        return CommandReply(
            f"Memory provider {provider.name}: not answering ({type(exc).__name__})."
        )
    lines = [f"Memory provider {provider.name}:"]
    lines += [f"{key}: {value}" for key, value in report.items() if key not in ("provider",)]
    return CommandReply(visible("\n".join(lines)))


def subject(context: CommandContext, request: CommandRequest) -> str:
    """Whose memory ``/memory`` and ``/forget`` show and change: in a group, an
    admin's are the store the group's sessions use; anyone else's, their own."""
    if request.message.chat_type != "dm" and request.admin:
        return context.sessions.person_for(request.message, request.key)
    return request.person


async def pending(context: CommandContext, person: str, *, mine: bool) -> CommandReply:
    """Staged writes of ``person``'s store with their content, and buttons deciding
    each (``/memory approve ID`` for one's own, ``/admin approve PERSON ID`` else)."""
    items = await asyncio.to_thread(context.store(person).pending)
    header = (
        "Waiting for your approval:" if mine else f"Waiting for approval in the memory of {person}:"
    )
    card = listing(items, decider(person, mine=mine), header=header)
    return CommandReply(card.text, card.buttons)


async def decide(
    context: CommandContext,
    request: CommandRequest,
    person: str,
    word: str,
    pending_id: str,
    *,
    mine: bool,
) -> CommandReply:
    """Approve or reject; a press also edits the message it was pressed on."""
    store = context.store(person)
    decision = await asyncio.to_thread(store.decide, pending_id, approve=word == "approve")
    said = answer(decision, decider(person, mine=mine), request.message)
    return CommandReply(said.text, edit=said.edit)


def _numbered(store: MemoryStore) -> list[tuple[int, Target, str]]:
    """Every entry with the number ``/memory`` shows and ``/forget N`` takes: MEMORY.md's
    entries first, then USER.md's, counted on across both."""
    rows = [(target, entry) for target in TARGETS for entry in store.entries(target)]
    return [(n, target, entry) for n, (target, entry) in enumerate(rows, 1)]


def show(store: MemoryStore, targets: tuple[Target, ...]) -> str:
    rows = _numbered(store)
    lines = []
    for target in targets:
        lines.append(f"{FILE_NAMES[target]} [{store.usage(target)}]")
        mine = [f"{n}. {visible(entry)}" for n, t, entry in rows if t == target]
        lines += mine or ["(empty)"]
    if rows:
        lines.append("/forget N forgets entry N.")
    return "\n".join(lines)


def _forget(store: MemoryStore, text: str) -> str:
    """``/forget N`` or ``/forget TEXT``: remove one entry and say which; name the
    candidates and remove none when TEXT matches several."""
    rows = _numbered(store)
    if text.isdigit():
        chosen = [row for row in rows if row[0] == int(text)]
        if not chosen:
            if not rows:
                return "I remember nothing yet, so there is nothing to forget."
            return f"There is no entry {text}: /memory numbers them from 1 to {len(rows)}."
    else:
        chosen = [row for row in rows if row[2] == text] or [
            row for row in rows if text.casefold() in row[2].casefold()
        ]
        if not chosen:
            return (
                f"Nothing in my memory matches «{label(text)}». /memory lists what I remember;"
                " /forget N forgets entry N."
            )
        if len({entry for _, _, entry in chosen}) > 1:
            lines = [f"Several entries match «{label(text)}», so I forgot none. Which one?"]
            lines += [
                f"/forget {n} — {FILE_NAMES[target]}: {visible(preview(entry, 100))}"
                for n, target, entry in chosen
            ]
            return "\n".join(lines)
    number, target, entry = chosen[0]
    outcome = store.call({"action": "remove", "target": target, "old_text": entry}, MemoryTurn())
    if isinstance(outcome, Refused):
        return outcome.error
    return f"Forgot entry {number} of {FILE_NAMES[target]}: «{visible(preview(entry, 300))}»"
