"""Slash commands: answered by the gateway itself, never by the model.

Every command is about the person who sent it — their memory, their sessions, their
archive — except ``/admin`` and ``/pair``, which only admins may run (anyone else gets a
clear refusal). The same text arrives from a Telegram ``/command``, a Discord application
command or a button press; authorization already happened at the choke point.

A group is a public place. ``answered_privately`` is the one rule that says which answers
carry memory, archive, pairing or usage data; the gateway sends those to the asker alone
(a private chat, or Discord's ephemeral answer), never to the group. In a group, ``/memory``
and ``/forget`` act on the store the group's sessions use when an admin asks (the chat's
own, with ``memory.group_scope: chat``) and on the asker's own store otherwise.

``Commands.run(request)`` returns a ``CommandReply`` (plain text, optional buttons, and for
a button press how to edit the pressed message); the caller sends it through the outbox,
which chunks long output like any reply. Write approval's wording (the listings of staged
writes, what a decision answers) lives in ``gateway.approvals``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adapters.base import BotCommand
from adapters.messages import InboundMessage, label
from gateway.approvals import Card, answer, decider, listing
from gateway.pairing import PairingStore, listing_text, qualified_id
from gateway.people import parse_person
from gateway.router import SessionKey
from gateway.sessions import Sessions
from gateway.terminal import visible
from memory import (
    FILE_NAMES,
    TARGETS,
    MemoryStore,
    MemoryStores,
    MemoryTurn,
    Target,
)
from memory.archive import Archive, Searcher, when, without_header
from memory.curated import preview
from memory.skills import SkillError, SkillStore

__all__ = [
    "COMMANDS",
    "PRIVATE",
    "PUBLIC",
    "CommandReply",
    "CommandRequest",
    "Commands",
    "answered_privately",
    "parse_command",
]

COMMANDS: tuple[BotCommand, ...] = (
    BotCommand("help", "What I can do and the commands", args=False),
    BotCommand("new", "Start a fresh session", args=False),
    BotCommand("status", "This session: turns, tokens, memory usage", args=False),
    BotCommand("memory", "What I remember: notes, profile, pending, approve ID, reject ID"),
    BotCommand("forget", "Forget memory entry N, or the entry matching TEXT"),
    BotCommand("sessions", "Your recent sessions", args=False),
    BotCommand("search", "Search your past conversations"),
    BotCommand("skills", "The skills I know; admins: pending, diff, approve, reject"),
    BotCommand("admin", "Admins: memory, sessions, search, pending, blocked, stats", admin=True),
    BotCommand("pair", "Admins: pairing requests: list, approve, deny, revoke, block", admin=True),
)
NAMES = frozenset(command.name for command in COMMANDS)
ADMIN_ONLY = frozenset(command.name for command in COMMANDS if command.admin)
# (/skills is admin-only in part: its review subcommands)
#: Answers that carry someone's memory, archive, pairing or usage data.
PRIVATE = frozenset({"status", "memory", "forget", "sessions", "search", "admin", "pair"})
#: Answers anyone in the chat may read (``/skills`` lists what everyone shares; its review
#: subcommands are private: ``answered_privately``).
PUBLIC = frozenset({"help", "new", "skills"})


def answered_privately(name: str, args: str) -> bool:
    """Whether the answer to ``/name args`` may be read by the asker only."""
    if name == "skills":
        return bool(args.strip())
    return name in PRIVATE


HELP = """\
I'm an assistant with a memory of my own. Talk to me normally; I keep short notes about our \
work and about you, and I can search our past conversations.

/new — start a fresh session (with a fresh view of my memory)
/status — this session: turns, tokens, memory usage
/memory — everything I remember (/memory notes, /memory profile)
/memory pending — memory writes waiting for your approval (approve ID / reject ID)
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
/admin stats — people, sessions, messages, turns and tokens today
/admin pending PERSON — a person's (or a chat's) staged memory writes
/admin approve PERSON ID, /admin reject PERSON ID — decide one
/pair list — pending pairing codes, approved and blocked people
/pair approve CODE — let the person who got CODE talk to me
/pair deny CODE — drop that code (they may ask again, three times a day)
/pair revoke PLATFORM:ID — take that approval back
/pair block PLATFORM:ID, /pair unblock PLATFORM:ID — ignore someone silently, or stop
/skills pending — skill changes waiting for approval (diff ID, approve ID, reject ID)"""

TARGET_WORDS: dict[str, Target] = {"notes": "memory", "profile": "user"}
ADMIN_USAGE = {
    "memory": "/admin memory PERSON",
    "sessions": "/admin sessions PERSON",
    "search": "/admin search PERSON QUERY",
    "pending": "/admin pending PERSON",
    "approve": "/admin approve PERSON ID",
    "reject": "/admin reject PERSON ID",
}


def parse_command(text: str) -> tuple[str, str] | None:
    """``("memory", "approve 3")`` from ``/memory approve 3``; None if not one of ours."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if name not in NAMES:
        return None
    return name, rest.strip()


@dataclass(frozen=True, slots=True)
class CommandRequest:
    message: InboundMessage
    key: SessionKey
    name: str
    args: str
    admin: bool

    @property
    def person(self) -> str:
        """The speaker: commands are always about them."""
        return self.message.sender.person


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: str
    buttons: tuple[tuple[str, str], ...] = ()
    edit: Card | None = None
    """For a button press: the pressed message's new text and buttons (``text`` may then
    be "", nothing more to say)."""


class Commands:
    def __init__(
        self,
        *,
        archive: Archive,
        stores: MemoryStores,
        sessions: Sessions,
        pairing: PairingStore,
        stats: Callable[[], Awaitable[dict[str, Any]]] | None = None,
        on_paired: Callable[[], Awaitable[None]] | None = None,
        skills: SkillStore | None = None,
        budget: Callable[..., Awaitable[str]] | None = None,
        admins: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        """``budget(person, admin=…)``: the /status line on their budgets (gateway.limits);
        ``admins()``: the configured admins (``telegram:123``), whom /pair block refuses."""
        self.skills = skills
        self.archive = archive
        self.stores = stores
        self.sessions = sessions
        self.pairing = pairing
        self.searcher = Searcher(archive)
        self._stats = stats
        self._on_paired = on_paired
        self._budget = budget
        self._admins = admins

    async def run(self, request: CommandRequest) -> CommandReply:
        if request.name in ADMIN_ONLY and not request.admin:
            return CommandReply(f"Sorry, /{request.name} is for the admins of this bot.")
        handler = getattr(self, f"_cmd_{request.name}")
        reply: CommandReply = await handler(request)
        return reply

    # -- everyone -------------------------------------------------------------------------

    async def _cmd_help(self, request: CommandRequest) -> CommandReply:
        private = request.message.chat_type == "dm" or request.message.private_reply
        return CommandReply(HELP + ("\n\n" + ADMIN_HELP if request.admin and private else ""))

    async def _cmd_new(self, request: CommandRequest) -> CommandReply:
        ended = await self.sessions.reset(request.key)
        note = f" (session {ended} ended)" if ended else ""
        return CommandReply(
            f"Fresh start{note}. Your next message begins a new session with my memory as it"
            " is now."
        )

    async def _cmd_status(self, request: CommandRequest) -> CommandReply:
        session_person = self.sessions.person_for(request.message, request.key)
        store = self._store(session_person)
        lines = []
        conversation = self.sessions.peek(request.key)
        session_id = (
            conversation.id if conversation else await self.sessions.current_id(request.key)
        )
        if session_id is None:
            lines.append("No session yet: your next message starts one.")
        else:
            lines.append(f"Session {session_id}")
            if conversation is not None:
                usage = conversation.usage
                lines.append(f"Turns: {conversation.turns}")
                cached = _share(usage.cached_tokens, usage.prompt_tokens)
                lines.append(
                    f"Tokens: {usage.prompt_tokens:,} prompt ({cached} cached),"
                    f" {usage.completion_tokens:,} completion"
                )
            else:
                messages = await self.archive.messages(session_id, viewer=session_person)
                turns = sum(1 for m in messages if m.role == "user")
                lines.append(f"Turns: {turns} (resumes on your next message)")
        usages = await asyncio.to_thread(lambda: [(t, store.usage(t)) for t in TARGETS])
        lines += [f"{FILE_NAMES[t]}: {u}" for t, u in usages]
        if self._budget is not None:
            lines.append(await self._budget(request.person, admin=request.admin))
        return CommandReply("\n".join(lines))

    async def _cmd_memory(self, request: CommandRequest) -> CommandReply:
        word, _, rest = request.args.partition(" ")
        word = word.lower()
        subject = self._subject(request)
        store = self._store(subject)
        if word in ("", "notes", "profile"):
            targets: tuple[Target, ...] = (TARGET_WORDS[word],) if word else TARGETS
            shown = await asyncio.to_thread(_show, store, targets)
            if subject != request.person:
                shown = f"The memory of this chat ({subject}):\n{shown}"
            return CommandReply(shown)
        mine = subject == request.person
        if word == "pending":
            return await self._pending(subject, mine=mine)
        if word in ("approve", "reject"):
            pending_id = rest.strip()
            if not pending_id:
                return CommandReply(f"Usage: /memory {word} ID (see /memory pending)")
            return await self._decide(request, subject, word, pending_id, mine=mine)
        return CommandReply("Usage: /memory [notes|profile|pending|approve ID|reject ID]")

    def _subject(self, request: CommandRequest) -> str:
        """Whose memory ``/memory`` and ``/forget`` show and change: in a group, an
        admin's are the store the group's sessions use; anyone else's, their own."""
        if request.message.chat_type != "dm" and request.admin:
            return self.sessions.person_for(request.message, request.key)
        return request.person

    async def _pending(self, person: str, *, mine: bool) -> CommandReply:
        """Staged writes of ``person``'s store with their content, and buttons deciding
        each (``/memory approve ID`` for one's own, ``/admin approve PERSON ID`` else)."""
        items = await asyncio.to_thread(self._store(person).pending)
        header = (
            "Waiting for your approval:"
            if mine
            else f"Waiting for approval in the memory of {person}:"
        )
        card = listing(items, decider(person, mine=mine), header=header)
        return CommandReply(card.text, card.buttons)

    async def _decide(
        self, request: CommandRequest, person: str, word: str, pending_id: str, *, mine: bool
    ) -> CommandReply:
        """Approve or reject; a press also edits the message it was pressed on."""
        store = self._store(person)
        decision = await asyncio.to_thread(store.decide, pending_id, approve=word == "approve")
        said = answer(decision, decider(person, mine=mine), request.message)
        return CommandReply(said.text, edit=said.edit)

    async def _cmd_forget(self, request: CommandRequest) -> CommandReply:
        text = request.args.strip()
        if not text:
            return CommandReply(
                "Usage: /forget N — forgets entry N of /memory; /forget TEXT — forgets the one"
                " entry that contains TEXT."
            )
        store = self._store(self._subject(request))
        store.write_approval = False  # the person's own hand, not the model's
        return CommandReply(await asyncio.to_thread(_forget, store, text))

    async def _cmd_sessions(self, request: CommandRequest) -> CommandReply:
        return CommandReply(await self._sessions_of(request.person, "Your recent sessions"))

    async def _cmd_search(self, request: CommandRequest) -> CommandReply:
        if not request.args:
            return CommandReply("Usage: /search QUERY")
        return CommandReply(await self._search_as(request.person, request.args))

    async def _cmd_skills(self, request: CommandRequest) -> CommandReply:
        if self.skills is None:
            return CommandReply("Skills are turned off on this bot (skills.enabled).")
        store = self.skills
        sub, _, rest = request.args.partition(" ")
        sub, rest = sub.lower(), rest.strip()
        if not sub:
            skills, _problems = await asyncio.to_thread(store.scan)
            if not skills:
                return CommandReply(
                    "I have no skills yet. I write one when I work out a procedure."
                )
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

    # -- admins ---------------------------------------------------------------------------

    async def _cmd_admin(self, request: CommandRequest) -> CommandReply:
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
            return await self._about(request, person, sub, more)
        if sub == "blocked":
            return CommandReply(await asyncio.to_thread(self._blocked))
        if sub == "stats":
            return CommandReply(await self._stats_text())
        return CommandReply(ADMIN_HELP)

    async def _about(
        self, request: CommandRequest, person: str, sub: str, more: str
    ) -> CommandReply:
        """``/admin memory|sessions|search|pending|approve|reject PERSON …``."""
        if sub == "memory":
            shown = await asyncio.to_thread(_show, self._store(person), TARGETS)
            return CommandReply(f"{person}\n{shown}")
        if sub == "sessions":
            return CommandReply(await self._sessions_of(person, f"Sessions of {person}"))
        if sub == "search":
            found = await self._search_as(person, more, own=False)
            return CommandReply(f"In {person}'s archive:\n{found}")
        if sub == "pending":
            return await self._pending(person, mine=False)
        return await self._decide(request, person, sub, more, mine=False)

    async def _cmd_pair(self, request: CommandRequest) -> CommandReply:
        sub, _, rest = request.args.partition(" ")
        sub, rest = sub.lower(), rest.strip()
        store = self.pairing
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
            if self._on_paired is not None:
                await self._on_paired()  # tell them now, not at the next poll
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
            if sub == "block" and who in self._admins():
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

    # -- helpers --------------------------------------------------------------------------

    def _store(self, person: str) -> MemoryStore:
        return self.stores.for_person(person)

    async def _sessions_of(self, person: str, title: str) -> str:
        sessions = await self.archive.sessions(viewer=person, limit=10)
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

    async def _search_as(self, person: str, query: str, *, own: bool = True) -> str:
        """What people see of a search: the conversation itself (no tool output, no
        headers the gateway adds), each hit an excerpt around the words searched."""
        hits, parsed = await self.searcher.find(
            query, viewer=person, limit=5, conversation_only=True
        )
        if parsed.empty:
            return "That has no words I can search for. Try /search with a few words you said."
        if not hits:
            return (
                f"Nothing in {'your' if own else 'their'} past conversations matches"
                f" «{label(query)}». Try other or fewer words, or /sessions for the recent ones."
            )
        lines = []
        for hit in hits:
            session = await self.archive.get_session(hit.session_id, viewer=person)
            found = await self.archive.messages(
                hit.session_id,
                viewer=person,
                before_id=hit.message_id + 1,
                limit=1,
                newest_first=True,
            )
            if session is None or not found:  # pragma: no cover - the SQL already scoped it
                continue
            message = found[0]
            who = ("you" if own else "they") if message.role == "user" else "me"
            excerpt = _excerpt(without_header(message.content), parsed.all_terms())
            lines.append(
                f"{when(message.created_at)} · {label(session.title or '(untitled)')}\n"
                f"  {who}: {visible(excerpt)}"
            )
        return "\n".join(lines)

    def _blocked(self) -> str:
        lines = []
        for store in self.stores:
            blocked, drifts = store.check()
            for item in blocked:
                lines.append(
                    f"{store.person} · {FILE_NAMES[item.target]} entry {item.index + 1}"
                    f" [{', '.join(item.ids)}]: {visible(preview(item.entry, 80))}"
                )
            for drift in drifts:
                lines.append(f"{store.person} · {FILE_NAMES[drift.target]} drifted: {drift.reason}")
        return "\n".join(lines) if lines else "No blocked entries and no drifted files."

    async def _stats_text(self) -> str:
        counts = await self.archive.counts()
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        today = await self.archive.usage_since(midnight.timestamp())
        extra = await self._stats() if self._stats is not None else {}
        lines = [
            f"People: {counts['people']:,} (with memory files: {len(self.stores.people()):,})",
            f"Sessions: {counts['sessions']:,}",
            f"Messages: {counts['messages']:,}",
            f"Turns today (UTC): {today['turns']:,}",
            f"Tokens today: {today['prompt']:,} prompt"
            f" ({_share(today['cached'], today['prompt'])} cached),"
            f" {today['completion']:,} completion",
        ]
        lines += [f"{name}: {value}" for name, value in extra.items()]
        return "\n".join(lines)


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


def _pair_answer(request: CommandRequest, code: str, text: str, outcome: str) -> CommandReply:
    """``text`` for a typed ``/pair approve|deny CODE``; for a press on a pairing notice,
    the notice edited instead: that code's buttons gone, ``outcome`` added below (the other
    requests in it keep theirs)."""
    pressed = request.message.pressed
    if not request.message.is_callback or pressed is None:
        return CommandReply(text)
    buttons = tuple(b for b in pressed.buttons if not b[1].upper().endswith(f" {code}"))
    return CommandReply("", edit=Card(f"{pressed.text}\n\n{outcome}".strip(), buttons))


def _share(part: int, whole: int) -> str:
    return f"{(100 * part / whole):.0f}%" if whole else "0%"


def _numbered(store: MemoryStore) -> list[tuple[int, Target, str]]:
    """Every entry with the number ``/memory`` shows and ``/forget N`` takes: MEMORY.md's
    entries first, then USER.md's, counted on across both."""
    rows = [(target, entry) for target in TARGETS for entry in store.entries(target)]
    return [(n, target, entry) for n, (target, entry) in enumerate(rows, 1)]


def _show(store: MemoryStore, targets: tuple[Target, ...]) -> str:
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
    result = store.call({"action": "remove", "target": target, "old_text": entry}, MemoryTurn())
    if not result.get("success"):
        return _tool_text(result)
    return f"Forgot entry {number} of {FILE_NAMES[target]}: «{visible(preview(entry, 300))}»"


def _excerpt(text: str, terms: Sequence[str], width: int = 160) -> str:
    """``width`` characters of ``text`` around the first of ``terms`` it contains."""
    flat = " ".join(text.split())
    lowered = flat.casefold()
    places = [i for i in (lowered.find(t.casefold()) for t in terms if t) if i >= 0]
    start = max(0, min(places, default=0) - width // 3)
    cut = flat[start : start + width]
    return f"{'…' if start else ''}{cut}{'…' if start + width < len(flat) else ''}"


def _tool_text(result: dict[str, Any]) -> str:
    if result.get("success"):
        return str(result.get("message") or "Done.")
    return str(result.get("error") or "That did not work.")
