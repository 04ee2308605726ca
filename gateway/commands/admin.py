"""``/admin`` and ``/pair``, for admins only: another person's memory, sessions, archive and
staged writes; blocked entries and drifted files; today's usage; and pairing (the codes
strangers got, approvals, revocations, blocks). A press on a pairing notice's button edits
that notice instead of answering with a new message.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from adapters.messages import label
from gateway.approvals import Card
from gateway.commands.base import CommandContext, CommandReply, CommandRequest, share
from gateway.commands.help import ADMIN_HELP
from gateway.commands.memory import decide, pending, show
from gateway.commands.search import search_as, sessions_of
from gateway.pairing import listing_text, qualified_id
from gateway.people import parse_person
from gateway.terminal import visible
from memory import FILE_NAMES, TARGETS
from memory.curated import preview

__all__ = ["admin_command", "pair_command"]

ADMIN_USAGE = {
    "memory": "/admin memory PERSON",
    "sessions": "/admin sessions PERSON",
    "search": "/admin search PERSON QUERY",
    "pending": "/admin pending PERSON",
    "approve": "/admin approve PERSON ID",
    "reject": "/admin reject PERSON ID",
}
_PAIR_DONE = {
    "revoke": ("Revoked {who}.", "{who} was not approved by pairing."),
    "block": (
        "Blocked {who}: I ignore them from now on, everywhere (their approval, if any, is gone).",
        "{who} was blocked already.",
    ),
    "unblock": (
        "Unblocked {who}. An approval by pairing they had is not restored.",
        "{who} was not blocked.",
    ),
}


async def admin_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    sub, _, rest = request.args.partition(" ")
    sub, rest = sub.lower(), rest.strip()
    usage = ADMIN_USAGE.get(sub)
    if usage is not None:
        who, _, more = rest.partition(" ")
        more = more.strip()
        if not who or (sub in ("search", "approve", "reject") and not more):
            return CommandReply(f"Usage: {usage}")
        try:
            person = parse_person(who)
        except ValueError as exc:
            return CommandReply(f"{str(exc)[0].upper()}{str(exc)[1:]}.")
        return await _about(context, request, person, sub, more)
    if sub == "blocked":
        return CommandReply(await asyncio.to_thread(_blocked, context))
    if sub == "stats":
        return CommandReply(await _stats_text(context))
    return CommandReply(ADMIN_HELP)


async def _about(
    context: CommandContext, request: CommandRequest, person: str, sub: str, more: str
) -> CommandReply:
    """``/admin memory|sessions|search|pending|approve|reject PERSON …``."""
    if sub == "memory":
        shown = await asyncio.to_thread(show, context.store(person), TARGETS)
        return CommandReply(f"{person}\n{shown}")
    if sub == "sessions":
        return CommandReply(await sessions_of(context, person, f"Sessions of {person}"))
    if sub == "search":
        found = await search_as(context, person, more, own=False)
        return CommandReply(f"In {person}'s archive:\n{found}")
    if sub == "pending":
        return await pending(context, person, mine=False)
    return await decide(context, request, person, sub, more, mine=False)


def _blocked(context: CommandContext) -> str:
    lines = []
    for store in context.stores:
        blocked, drifts = store.check()
        for item in blocked:
            lines.append(
                f"{store.person} · {FILE_NAMES[item.target]} entry {item.index + 1}"
                f" [{', '.join(item.ids)}]: {visible(preview(item.entry, 80))}"
            )
        for drift in drifts:
            lines.append(f"{store.person} · {FILE_NAMES[drift.target]} drifted: {drift.reason}")
    return "\n".join(lines) if lines else "No blocked entries and no drifted files."


async def _stats_text(context: CommandContext) -> str:
    archive = context.archive
    counts = await archive.counts()
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    today = await archive.usage_since(midnight.timestamp())
    extra = await context.stats() if context.stats is not None else {}
    lines = [
        f"People: {counts['people']:,} (with memory files: {len(context.stores.people()):,})",
        f"Sessions: {counts['sessions']:,}",
        f"Messages: {counts['messages']:,}",
        f"Turns today (UTC): {today['turns']:,}",
        f"Tokens today: {today['prompt']:,} prompt"
        f" ({share(today['cached'], today['prompt'])} cached),"
        f" {today['completion']:,} completion",
    ]
    lines += [f"{name}: {value}" for name, value in extra.items()]
    return "\n".join(lines)


async def pair_command(context: CommandContext, request: CommandRequest) -> CommandReply:
    sub, _, rest = request.args.partition(" ")
    sub, rest = sub.lower(), rest.strip()
    store = context.pairing
    if sub in ("approve", "deny") and rest:
        code = rest.upper()
        who = await asyncio.to_thread(store.approve if sub == "approve" else store.deny, code)
        if who is None:
            return _pair_answer(
                request,
                code,
                f"No waiting pairing code {label(code)!r} (approved, denied or expired?).",
                f"{code}: decided earlier, or expired",
            )
        if sub == "deny":
            return _pair_answer(
                request,
                code,
                f"Denied {code} of {who}. They may ask again later.",
                f"✗ {code}: denied ({who})",
            )
        if context.on_paired is not None:
            await context.on_paired()  # tell them now, not at the next poll
        return _pair_answer(
            request,
            code,
            f"Approved {who}. They can talk to me now.",
            f"✓ {code}: approved ({who})",
        )
    if sub in ("revoke", "block", "unblock") and rest:
        who = qualified_id(rest)
        if who is None:
            return CommandReply(f"{label(rest)!r} is not PLATFORM:ID (e.g. telegram:123).")
        if sub == "block" and who in context.admins():
            return CommandReply(f"{who} is an admin (gateway.admins): not blocked.")
        action = {"revoke": store.revoke, "block": store.block, "unblock": store.unblock}[sub]
        done = await asyncio.to_thread(action, who)
        return CommandReply(_PAIR_DONE[sub][0 if done else 1].format(who=who))
    if sub == "list":
        listing = await asyncio.to_thread(store.listing)
        return CommandReply(listing_text(listing, now=store.now))
    return CommandReply(
        "Usage: /pair list | approve CODE | deny CODE | revoke PLATFORM:ID"
        " | block PLATFORM:ID | unblock PLATFORM:ID"
    )


def _pair_answer(request: CommandRequest, code: str, text: str, outcome: str) -> CommandReply:
    """``text`` for a typed ``/pair approve|deny CODE``; for a press on a pairing notice,
    the notice edited instead: that code's buttons gone, ``outcome`` added below (the other
    requests in it keep theirs)."""
    pressed = request.message.pressed
    if not request.message.is_callback or pressed is None:
        return CommandReply(text)
    buttons = tuple(b for b in pressed.buttons if not b[1].upper().endswith(f" {code}"))
    return CommandReply("", edit=Card(f"{pressed.text}\n\n{outcome}".strip(), buttons))
