"""Honcho (Plastic Labs) as the memory provider, through its official SDK, ``honcho-ai``.

What leaves the machine, and only when a hook runs: to ``base_url`` (else ``$HONCHO_URL``,
else Honcho's cloud, ``https://api.honcho.dev``), over HTTP with the API key (else
``$HONCHO_API_KEY``) as a bearer token, go the person's message and the bot's reply of
every turn (``sync_turn``), each incoming message as a search query (``prefetch``) and, at a
session's start, a request for what Honcho has concluded about the person (``context``).
No system prompt, no curated memory, no telemetry (the SDK sends none).

How our ids become Honcho's: everything sits in one workspace (``workspace``, "mnemo" by
default). A subject (a person, ``telegram-5001``, or a group chat's store,
``telegram-chat--100123``) is the peer ``honcho_name(subject.key)``: Honcho names allow only
``[A-Za-z0-9_-]``, so ASCII letters, digits and ``-`` stay as they are and every other byte
of the key's UTF-8 is written ``_xx`` (``telegram-5001`` is unchanged, ``a.b`` is ``a_2eb``);
``_`` then only ever opens an escape, so two keys never share a name (one past 512
characters ends in a SHA-256 instead). The bot is one peer, ``mnemo_assistant`` (``_a``
followed by ``s`` is no escape, so no key maps to it), which Honcho is told not to model. A
session of ours is one Honcho session *per subject*, ``<session>_s_<subject>``: in a group
chat kept per person, each member's turns go to a session of their own, so what another
member said never sits in the conversation Honcho reasons over for this one.

The hooks: ``context`` is the peer's context (its peer card, then its representation: what
Honcho concluded about the person); ``prefetch`` searches the person's own messages for the
new one and answers a few lines; ``sync_turn`` adds the message and the reply to the session;
``tools`` offers ``recall(query)``, the same search for the model to run.
``on_session_end`` and ``on_memory_write`` send nothing (each says why).

Errors: any failure of the SDK (an HTTP error status, no connection, no answer within
``timeout_s``, an answer that is not the JSON it expects) raises ``ProviderError`` naming the
hook and the kind of failure, never the API key. The SDK is told not to retry: the agent bounds
every hook, and a retry's backoff (0.5 s, then 1 s) would spend a prefetch's whole budget
(300 ms) asleep.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import pydantic
from honcho import (
    APIError,
    AuthenticationError,
    Honcho,
    HonchoError,
    Peer,
    PermissionDeniedError,
    Session,
)
from honcho import ConnectionError as HonchoConnectionError
from honcho import TimeoutError as HonchoTimeoutError
from honcho.api_types import PeerConfig, SessionPeerConfig

from memory.providers.base import Exchange, ProviderError, ProviderTool, SessionEnd, Subject

__all__ = ["ASSISTANT_PEER", "HonchoProvider", "honcho_name", "session_name"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")

#: The bot's peer: ``_`` followed by a non-hex letter, which ``honcho_name`` never writes.
ASSISTANT_PEER = "mnemo_assistant"
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,512}")
_MAX_NAME = 512  # Honcho's limit for workspace, peer and session names
_SEARCH_LIMIT = 5  # messages a prefetch or a recall asks for
_QUERY_CHARS = 1000  # a search query is the start of the message
_LINE_CHARS = 300  # one recalled message, as a line
_MESSAGE_CHARS = 25_000  # Honcho's default MAX_MESSAGE_SIZE: longer is refused, so cut
_KNOWN = 4096  # peers and sessions known to exist, remembered to skip their get-or-create


def honcho_name(key: str) -> str:
    """``key`` as a Honcho name: ASCII letters, digits and ``-`` kept, every other byte of
    its UTF-8 as ``_xx`` (lower-case hex); past 512 characters, its first 400 and
    ``_h`` + the SHA-256 of ``key``. Different keys give different names."""
    name = "".join(ch if ch in _PLAIN else _escaped(ch) for ch in key)
    if len(name) <= _MAX_NAME:
        return name
    return f"{name[:400]}_h{hashlib.sha256(key.encode()).hexdigest()}"


def _escaped(ch: str) -> str:
    return "".join(f"_{byte:02x}" for byte in ch.encode())


def session_name(session_id: str, key: str) -> str:
    """The Honcho session holding ``key``'s turns of our session ``session_id``."""
    return honcho_name(session_id) + "_s_" + honcho_name(key)


def _line(text: str) -> str:
    """A message as one line of a recalled list: whitespace runs folded, cut to its budget."""
    line = " ".join(text.split())
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1].rstrip() + "…"


class _Recent(Generic[K, V]):
    """The last ``size`` entries put: what this process already made sure exists."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def drop(self, key: K) -> None:
        self._items.pop(key, None)


class HonchoProvider:
    """Honcho behind the ``Provider`` contract (see the module doc)."""

    name = "honcho"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        workspace: str = "mnemo",
        timeout_s: float = 10.0,
    ) -> None:
        if not _NAME_RE.fullmatch(workspace):
            raise ValueError(
                f"invalid Honcho workspace {workspace!r}: use 1 to 512 letters, digits, '_' or '-'"
            )
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._client = Honcho(
            api_key=api_key,
            base_url=base_url,
            workspace_id=workspace,
            timeout=timeout_s,
            max_retries=0,
        )
        self._assistant = Peer(ASSISTANT_PEER, self._client)
        self._assistant_known = False
        self._peers: _Recent[str, Peer] = _Recent(_KNOWN)
        self._sessions: _Recent[str, Session] = _Recent(_KNOWN)

    # -- the hooks ------------------------------------------------------------------------

    async def context(self, subject: Subject) -> str:
        peer = await self._person(subject, "context")
        found = await self._sdk("context", peer.aio.context())
        lines = [f"- {_line(fact)}" for fact in found.peer_card or () if fact.strip()]
        representation = (found.representation or "").strip()
        if representation:
            lines.append(representation)
        return "\n".join(lines)

    async def prefetch(self, subject: Subject, message: str) -> str:
        return "\n".join(f"- {line}" for line in await self._search(subject, message, "prefetch"))

    async def sync_turn(self, exchange: Exchange) -> None:
        session = await self._session(exchange.subject, exchange.session_id)
        person = Peer(honcho_name(exchange.subject.key), self._client)
        at = datetime.fromtimestamp(exchange.at, UTC)
        messages = [
            person.message(exchange.user[:_MESSAGE_CHARS], created_at=at),
            self._assistant.message(exchange.reply[:_MESSAGE_CHARS], created_at=at),
        ]
        await self._sdk("sync_turn", session.aio.add_messages(messages))

    async def on_session_end(self, end: SessionEnd) -> None:
        # Honcho has no end to a session: it reasons over messages as they arrive, and every
        # turn was sent by sync_turn already. Only this process's note of the session goes.
        self._sessions.drop(session_name(end.session_id, end.subject.key))

    async def on_memory_write(self, subject: Subject, action: str, target: str, entry: str) -> None:
        # Nothing to send: Honcho draws its conclusions from the messages themselves, and the
        # turn that led to this write reaches it through sync_turn. Mirroring entries as
        # conclusions would count a fact twice, and a replace or a remove names no Honcho id.
        return None

    def tools(self, subject: Subject) -> Sequence[ProviderTool]:
        async def recall(query: str) -> dict[str, Any]:
            """Search what this person said in earlier conversations (kept by Honcho).

            Args:
                query: words or a question to look for in their earlier messages
            """
            try:
                found = await self._search(subject, query, "recall")
            except ProviderError as exc:
                return {"success": False, "error": str(exc)}
            return {"success": True, "found": found}

        return (recall,)

    async def aclose(self) -> None:
        # Honcho has no close(): shut the HTTP clients it made (the async one, built for the
        # running loop on first use, and the sync one it makes at construction, never used).
        await self._client._async_http_client.close()
        self._client._http.close()

    # -- helpers --------------------------------------------------------------------------

    async def _search(self, subject: Subject, query: str, hook: str) -> list[str]:
        """Lines of the person's own messages that match ``query`` (none for a blank one)."""
        query = " ".join(query.split())[:_QUERY_CHARS]
        if not query:
            return []
        peer = await self._person(subject, hook)
        messages = await self._sdk(hook, peer.aio.search(query, limit=_SEARCH_LIMIT))
        # The search is the peer's own messages; a message of anyone else is never passed on.
        return [_line(m.content) for m in messages if m.peer_id == peer.id and m.content.strip()]

    async def _person(self, subject: Subject, hook: str) -> Peer:
        """The subject's peer, made sure to exist once per process (get-or-create)."""
        name = honcho_name(subject.key)
        peer = self._peers.get(name)
        if peer is None:
            peer = await self._sdk(hook, self._client.aio.peer(name))
            self._peers.put(name, peer)
        return peer

    async def _session(self, subject: Subject, session_id: str) -> Session:
        """The subject's Honcho session for ``session_id``, with the person and the bot in it
        (the bot unobserved), made sure to exist once per process."""
        name = session_name(session_id, subject.key)
        session = self._sessions.get(name)
        if session is not None:
            return session
        if not self._assistant_known:
            unobserved = PeerConfig(observe_me=False)
            await self._sdk(
                "sync_turn", self._client.aio.peer(ASSISTANT_PEER, configuration=unobserved)
            )
            self._assistant_known = True
        peers: list[Any] = [
            honcho_name(subject.key),
            (ASSISTANT_PEER, SessionPeerConfig.model_validate({"observe_me": False})),
        ]
        session = await self._sdk("sync_turn", self._client.aio.session(name, peers=peers))
        self._sessions.put(name, session)
        return session

    async def _sdk(self, hook: str, work: Awaitable[T]) -> T:
        """``work`` (a call of the SDK), its failures as ``ProviderError``."""
        try:
            return await work
        except (HonchoError, pydantic.ValidationError) as exc:
            message = f"honcho {hook} failed: {_reason(exc, self._timeout_s)}"
            if self._api_key:
                message = message.replace(self._api_key, "[api key]")
            raise ProviderError(message) from exc


def _reason(exc: Exception, timeout_s: float) -> str:
    """What went wrong, in a few words of ours (no text of the server's)."""
    if isinstance(exc, AuthenticationError | PermissionDeniedError):
        return f"HTTP {exc.status}, the API key was refused"
    if isinstance(exc, APIError):
        return f"HTTP {exc.status}"
    if isinstance(exc, HonchoTimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, HonchoConnectionError):
        return (
            "the answer was not JSON" if isinstance(exc.__cause__, ValueError) else "no connection"
        )
    if isinstance(exc, pydantic.ValidationError):
        return "a request or an answer of a shape the SDK rejects"
    return type(exc).__name__
