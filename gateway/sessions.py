"""Live sessions by key: resume from the archive, start fresh, end on /new, evict when idle.

``SessionKey.for_message`` gives ``<platform>:<chat type>:<chat id>[:<thread>][:<user>]``:
each DM is its own session, threads and topics are separate, and in groups each person
has their own session unless ``per_user_in_groups`` is off. The key names a session's lane
in ``gateway.router`` and its rows in the archive.

A ``Conversation`` (agent_core) is the live half of a session: its frozen system prompt and
history. ``Sessions.get`` returns the key's live one, else resumes the open session the
archive holds for that key (same prompt bytes, same history — a restart changes nothing),
else starts a new one from the person's memory as it is now. ``reset`` ends it (``/new``);
the next message starts over with a fresh snapshot. Conversations idle longer than
``idle_s`` leave memory; they come back from the archive on the next message. Both tell the
memory provider, if there is one, that the session ended (``Agent.session_ended``).

Whose memory a session uses (``session_person``): in a DM, the speaker's. A group is a
public place, so with ``memory.group_scope: chat`` (the default) every group session uses
a store of the chat's own, named after it (``telegram-chat--100123``): the group's memory,
its archive scope for ``session_search``, and what the review writes to. Nothing a member
told the bot in private reaches a group prompt. ``group_scope: person`` gives per-person
group sessions the speaker's own memory (their private facts are then in a prompt whose
replies everyone reads); a session the whole group shares
(``gateway.group_sessions_per_user: false``) uses the chat's store in either case, since
it cannot follow each speaker without rebuilding its frozen prompt.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from adapters.messages import ChatType, InboundMessage
from agent_core.agent import Agent, Conversation
from memory.archive import SessionSpec, new_session_id
from memory.people import names_of

__all__ = [
    "GroupScope",
    "SessionKey",
    "Sessions",
    "chat_person",
    "person_names",
    "platform_label",
    "session_person",
]

GroupScope = Literal["chat", "person"]
_SAFE = re.compile(r"[^a-z0-9._-]")

PUBLIC_NOTE = {
    "chat": (
        "This is a public place: several people read every reply. The memory above belongs"
        " to this chat, not to any one member; keep private details out of it and out of"
        " your replies."
    ),
    "person": (
        "This is a public place: several people read every reply. The memory above is the"
        " private memory of the person speaking; do not repeat it here unless they ask."
    ),
}


@dataclass(frozen=True, slots=True, order=True)
class SessionKey:
    platform: str
    chat_type: ChatType
    chat_id: str
    thread_id: str | None = None
    user_id: str | None = None

    @classmethod
    def for_message(cls, message: InboundMessage, *, per_user_in_groups: bool = True) -> SessionKey:
        user = message.sender.user_id if message.chat_type != "dm" and per_user_in_groups else None
        return cls(message.platform, message.chat_type, message.chat_id, message.thread_id, user)

    def __str__(self) -> str:
        parts = [self.platform, self.chat_type, self.chat_id]
        parts += [p for p in (self.thread_id, self.user_id) if p is not None]
        return ":".join(parts)


def chat_person(message: InboundMessage) -> str:
    """The store of a group chat itself, e.g. ``telegram-chat--100123``."""
    return f"{message.platform}-chat-{_SAFE.sub('_', message.chat_id.lower())}"


def session_person(
    message: InboundMessage, key: SessionKey, group_scope: GroupScope = "chat"
) -> str:
    """The person whose memory and archive a session uses."""
    if message.chat_type == "dm":
        return message.sender.person
    if group_scope == "person" and key.user_id is not None:
        return message.sender.person
    return chat_person(message)


def person_names(message: InboundMessage, person: str) -> tuple[str, ...]:
    """What the session's ``person`` is called, from the message's sender when they are that
    person (their display name, ``names_of``); none for a chat's own store."""
    return names_of(message.sender.display_name) if person == message.sender.person else ()


def platform_label(message: InboundMessage, person: str) -> str:
    """The platform line of a session's prompt: where it is and, in a group, that it is a
    public place and whose memory the prompt carries (``person``: the session's)."""
    if message.platform == "console":
        return "Console (terminal)"
    name = message.platform.capitalize()
    where = {"dm": "private chat", "group": "group chat", "thread": "thread in a group"}
    label = f"{name} ({where[message.chat_type]})"
    if message.chat_type == "dm":
        return label
    return f"{label}. {PUBLIC_NOTE['person' if person == message.sender.person else 'chat']}"


@dataclass(slots=True)
class _Live:
    conversation: Conversation
    last_used: float


class Sessions:
    def __init__(
        self,
        agent: Agent,
        *,
        idle_s: float = 3600.0,
        group_scope: GroupScope = "chat",
        clock: Callable[[], float] = time.monotonic,
        shared: bool = False,
    ) -> None:
        """``shared``: other replicas may run this process's chats too (a shared archive):
        a live conversation is checked against the archive before each turn."""
        self.agent = agent
        self.shared = shared
        self.idle_s = idle_s
        self.group_scope: GroupScope = group_scope
        self._clock = clock
        self._live: OrderedDict[SessionKey, _Live] = OrderedDict()  # least recently used first

    def __len__(self) -> int:
        return len(self._live)

    def person_for(self, message: InboundMessage, key: SessionKey) -> str:
        """Whose memory and archive the key's session uses (``session_person``)."""
        return session_person(message, key, self.group_scope)

    def peek(self, key: SessionKey) -> Conversation | None:
        live = self._live.get(key)
        return live.conversation if live else None

    async def get(
        self, key: SessionKey, message: InboundMessage, *, admin: bool = False
    ) -> Conversation:
        """The key's live conversation, resumed or started; ``admin``: the speaker is one
        (their own session may change skills without approval)."""
        self.evict_idle()
        now = self._clock()
        live = self._live.get(key)
        if live is not None and self.shared and await self._moved_on(key, live.conversation):
            del self._live[key]  # another replica answered since: what the archive says wins
            live = None
        if live is not None:
            live.last_used = now
            self._live.move_to_end(key)
            live.conversation.names = person_names(message, live.conversation.person)
            return live.conversation
        person = self.person_for(message, key)
        names = person_names(message, person)
        admin = admin and person == message.sender.person  # never in a chat's own session
        conversation = await self.agent.resume(str(key), person=person, admin=admin, names=names)
        if conversation is None:
            spec = SessionSpec(
                id=new_session_id(),
                platform=message.platform,
                chat_id=message.chat_id,
                chat_type=message.chat_type,
                people=(person,),
                thread_id=message.thread_id,
                session_key=str(key),
            )
            label = platform_label(message, person)
            conversation = await self.agent.start(
                spec, person=person, platform_label=label, admin=admin, names=names
            )
        self._live[key] = _Live(conversation, now)
        return conversation

    async def _moved_on(self, key: SessionKey, conversation: Conversation) -> bool:
        """Whether the archive holds what this process has not seen of the key's session:
        another replica's turns (a count this process did not make), or another session
        (a /new or a compression there). Its turns held the session's lease, so nothing is
        written while this one holds it. One indexed read a turn, with replicas only."""
        if _busy(conversation):
            return False  # a review or compression of ours is still writing to it
        session = await self.agent.archive.latest_session(str(key))
        return (
            session is None
            or session.id != conversation.id
            or session.message_count != conversation.archived
        )

    async def current_id(self, key: SessionKey) -> str | None:
        live = self.peek(key)
        if live is not None:
            return live.id
        session = await self.agent.archive.latest_session(str(key))
        return session.id if session else None

    async def reset(self, key: SessionKey) -> str | None:
        """End the key's session (``/new``); the id ended, or None if there was none."""
        session_id = await self.current_id(key)
        live = self._live.pop(key, None)
        if session_id is not None:
            await self.agent.archive.end_session(session_id, "new")
        if live is not None:  # the memory provider hears what this session said
            self.agent.session_ended(live.conversation, "new")
        return session_id

    def evict_idle(self) -> int:
        """Drop conversations idle past ``idle_s`` (oldest first; stops at the first recent
        one, so a turn pays for what it evicts, not for every live session)."""
        cutoff = self._clock() - self.idle_s
        busy: list[tuple[SessionKey, _Live]] = []
        evicted = 0
        while self._live:
            key, live = next(iter(self._live.items()))
            if live.last_used >= cutoff:
                break
            del self._live[key]
            if _busy(live.conversation):
                busy.append((key, live))  # a review or compression still needs it
            else:
                evicted += 1
                self.agent.session_ended(live.conversation, "idle")
        for key, live in busy:  # kept, and looked at again once the next one goes stale
            live.last_used = self._clock()
            self._live[key] = live
        return evicted


def _busy(conversation: Conversation) -> bool:
    review, compressing = conversation.review_task, conversation.compressing
    return (review is not None and not review.done()) or (
        compressing is not None and not compressing.done()
    )
