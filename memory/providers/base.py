"""The provider contract: the hooks the agent calls, and the data it passes.

Everything a provider is told is about one ``Subject``: whose memory it is (a person, or a
group chat's own store under ``memory.group_scope: chat``). A provider keys all it keeps by
``subject.key`` and answers only from that key, so nothing of one person reaches another's
prompt or tools; the agent never mixes subjects in one call.

When the agent calls each hook (and only then):

* ``context(subject)`` once, when a session starts: a block for the frozen system prompt;
* ``prefetch(subject, message)`` as soon as a message arrives, before the model call: text
  recalled for it, appended to that user message (late answers are dropped);
* ``sync_turn(exchange)`` after the reply, in the background;
* ``on_session_end(end)`` when a session ends (``/new``, idle expiry, compression);
* ``on_memory_write(subject, action, target, entry)`` after each write the ``memory`` tool
  applied to the built-in memory;
* ``tools(subject)`` once, when a session starts: extra tools, fixed for the session;
* ``rank_messages(subject, query, limit)``, optional (a provider that ranks archived
  messages by meaning: ``local``), at each ``session_search`` discover: the ids of the
  subject's messages closest to the query, best first, which the search fuses with its
  word ranking (``agent_core.recall.Recall.ranker``; the subject carries the person's
  ``names`` the search was given). No text of it reaches a prompt.

Every hook may be slow or fail: the agent bounds each with a timeout and never lets one fail
or delay a turn beyond it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["Exchange", "Provider", "ProviderError", "ProviderTool", "SessionEnd", "Subject"]

#: A provider tool: a typed async function (the signature is the tool's JSON schema and the
#: docstring its description, as for the built-in tools), already bound to its subject.
ProviderTool = Callable[..., Awaitable[dict[str, Any]]]


class ProviderError(Exception):
    """A provider could not answer (its service is down, its index is missing, …)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """Whose memory a call is about: ``key`` is a person id (``telegram-5001``) or a group
    chat's store (``telegram-chat--100123``); ``group``: the session is a group chat.

    ``names``: what the person is called, when the agent knows (their display name on the
    platform and its first word, ``memory.people.names_of``; none for a group's own store):
    a provider may read a question that names them as one about the person it serves (the
    local one embeds it in the first person). Untrusted text, to be matched as data only.
    They do not change whose memory it is: two subjects with the same key and ``group``
    are equal whatever their names."""

    key: str
    group: bool = False
    names: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One turn as the person and the bot said it (no headers, no recalled blocks)."""

    subject: Subject
    session_id: str
    user: str
    reply: str
    at: float  # when the reply was made, seconds since the epoch


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """A session that ended, with what was said in it (person and bot messages only)."""

    subject: Subject
    session_id: str
    reason: Literal["new", "idle", "compression"]
    messages: tuple[tuple[str, str], ...]  # (role, text), oldest first


class Provider(Protocol):
    """What a memory provider implements (see the module doc for when each is called)."""

    name: str

    async def context(self, subject: Subject) -> str: ...

    async def prefetch(self, subject: Subject, message: str) -> str: ...

    async def sync_turn(self, exchange: Exchange) -> None: ...

    async def on_session_end(self, end: SessionEnd) -> None: ...

    async def on_memory_write(
        self, subject: Subject, action: str, target: str, entry: str
    ) -> None: ...

    def tools(self, subject: Subject) -> Sequence[ProviderTool]: ...

    async def aclose(self) -> None: ...
