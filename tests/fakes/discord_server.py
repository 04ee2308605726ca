"""A loopback fake of Discord: the REST API (``/api/v10``) and the gateway WebSocket.

Tests start it on 127.0.0.1 and point the real ``discord.py`` at it through its two
process-global hooks, so every byte crosses real HTTP and a real WebSocket and is parsed by
the library's own code (rate-limit buckets, zlib-stream inflater, cache, models)::

    async with FakeDiscord(token="t0k") as dc:
        guild = dc.add_guild("home")
        general = dc.add_channel(guild, "general")
        alice = dc.add_user("alice", global_name="Alice")
        discord.http.Route.BASE = dc.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(dc.gateway_url)
        ...  # start a discord.Client with token "t0k"
        await dc.push_message(general, alice, "<@%d> hi" % dc.bot.id)
        sent = await dc.wait_sent(1, channel_id=general)

REST. Whatever discord.py calls to log in (``GET /users/@me``, ``GET
/oauth2/applications/@me``; ``/gateway`` and ``/gateway/bot`` answer too, the latter with
``recommended_shards`` as ``shards``), opening a DM
(``POST /users/@me/channels``), channel messages (``POST``/``PATCH``), typing, application
commands (``PUT`` bulk overwrite, global and guild) and the interaction webhooks (callback,
followups, ``@original``). Errors carry Discord's JSON shape and codes: 2,000-character
limit -> 400 ``50035 Invalid Form Body``; unknown channel -> 404 ``10003``;
:meth:`FakeDiscord.forbid` -> 403 ``50013``/``50007``; a wrong ``Authorization: Bot
<token>`` -> 401. Every JSON answer has ``Content-Type: application/json`` exactly
(discord.py decodes nothing else) and ``Via`` plus ``X-RateLimit-*`` headers as Discord
sends them; a 429 (:meth:`FakeDiscord.flood`) carries ``{"message", "retry_after", "global":
false}`` and ``Via: 1.1 google`` (without ``Via`` discord.py takes a 429 for a Cloudflare
ban).

Gateway (``/gateway``). HELLO (op 10, ``heartbeat_interval``), IDENTIFY (op 2, recorded in
:attr:`FakeDiscord.identify`; a wrong token closes 4004), READY (user, ``session_id``,
``resume_gateway_url`` pointing back here, ``application``, unavailable guilds) followed by
one GUILD_CREATE per configured guild with its channels, threads, roles and members.
Heartbeats (op 1) get ACKs (op 11). With ``compress=zlib-stream`` in the query (discord.py
always asks for it) every frame is binary, deflated by ONE ``compressobj`` per connection and
flushed with ``Z_SYNC_FLUSH`` so it ends in ``00 00 ff ff``. Dispatches carry increasing
sequence numbers per session and are buffered, so RESUME (op 6) after
:meth:`FakeDiscord.drop_connection` replays what the client missed and sends RESUMED; an
unknown session gets INVALID_SESSION (op 9). A client closing with 1000/1001 ends its
session, as on Discord. IDENTIFY's ``shard: [id, count]`` is honoured as Discord does: a
session gets only the guilds of its shard, ``(guild_id >> 22) % count``, and their events;
events of no guild (DMs) go to shard 0 (``discord_gateway``).

Test API. Configure with :meth:`~FakeDiscord.add_guild`, :meth:`~FakeDiscord.add_channel`,
:meth:`~FakeDiscord.add_thread`, :meth:`~FakeDiscord.add_user`, :meth:`~FakeDiscord.add_dm`
and :meth:`~FakeDiscord.forbid` (before the client connects: GUILD_CREATE is sent at
IDENTIFY). Drive with :meth:`~FakeDiscord.push_message` (MESSAGE_CREATE; ``<@id>`` in the
content become mentions, ``reply_to`` fills ``message_reference`` and
``referenced_message``), :meth:`~FakeDiscord.push_interaction` (INTERACTION_CREATE type 2),
:meth:`~FakeDiscord.dispatch` (any event with any payload, malformed ones included: build a
real one with :meth:`~FakeDiscord.message_payload` or
:meth:`~FakeDiscord.interaction_payload`, break it, dispatch it),
:meth:`~FakeDiscord.press` (INTERACTION_CREATE type 3: someone presses a button of a
message the bot sent with ``components``; see ``discord_rest`` for how the bot may answer),
:meth:`~FakeDiscord.redeliver`, :meth:`~FakeDiscord.flood`, :meth:`~FakeDiscord.fail_next`,
:meth:`~FakeDiscord.hang_next` (also after the request was carried out: ``handled=True``)
and :meth:`~FakeDiscord.drop_connection`. A message POST repeating a nonce of the last
``nonce_window`` seconds gets the message it made, as with Discord's ``enforce_nonce``. Inspect
:attr:`~FakeDiscord.sent` (what the bot made visible, with ``time.monotonic()`` stamps),
:attr:`~FakeDiscord.callbacks`, :attr:`~FakeDiscord.calls` (every REST request),
:attr:`~FakeDiscord.commands`, :attr:`~FakeDiscord.identify`, :attr:`~FakeDiscord.resumes`,
:attr:`~FakeDiscord.typing`; wait with :meth:`~FakeDiscord.wait_sent` /
:meth:`~FakeDiscord.wait_for` (always bounded).
The bot's own messages are echoed as MESSAGE_CREATE, as Discord does.

Bounded: leaving the ``async with`` wakes hung requests, closes every WebSocket and the
listening socket, and waits at most ``shutdown_timeout`` for handlers.

Layout. :class:`FakeDiscord` (here) owns the state, the lifecycle and the test API; it is
assembled from :mod:`tests.fakes.discord_models` (the data classes and pure payload
builders), :mod:`tests.fakes.discord_gateway` (the ``DiscordGateway`` mixin: the WebSocket,
sessions, dispatch) and :mod:`tests.fakes.discord_rest` (the ``DiscordRest`` mixin, layered on
the gateway: routing, auth, injected failures and one handler per endpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiohttp import web

from tests.fakes.discord_gateway import Connection, Session
from tests.fakes.discord_models import (
    DISCORD_EPOCH_MS,
    Callback,
    FakeChannel,
    FakeInteraction,
    FakeUser,
    Guild,
    RestCall,
    Sent,
    build_interaction,
    build_message,
    build_press,
    buttons_of,
    snowflake_time,
)
from tests.fakes.discord_rest import EPHEMERAL, DiscordRest, Injected
from tests.fakes.loopback import LoopbackServer, serve

__all__ = [
    "Callback",
    "FakeChannel",
    "FakeDiscord",
    "FakeInteraction",
    "FakeUser",
    "RestCall",
    "Sent",
    "snowflake_time",
]


class FakeDiscord(DiscordRest, LoopbackServer):
    """The fake; ``async with FakeDiscord(token=...) as dc:`` serves on an ephemeral port."""

    name = "the fake Discord"

    def __init__(
        self,
        *,
        token: str = "fake-discord-token",
        bot_name: str = "mnemo",
        heartbeat_interval: float = 0.5,
        interaction_deadline: float = 3.0,
        interaction_ttl: float = 900.0,
        nonce_window: float = 300.0,
        echo_own_messages: bool = True,
        shutdown_timeout: float = 2.0,
        recommended_shards: int = 1,
    ) -> None:
        self.token = token
        self.recommended_shards = recommended_shards  # GET /gateway/bot ``shards``
        self.heartbeat_interval = heartbeat_interval  # seconds, sent in HELLO as ms
        self.interaction_deadline = interaction_deadline  # the 3-second rule
        self.interaction_ttl = interaction_ttl  # interaction tokens live 15 minutes
        self.nonce_window = nonce_window  # enforce_nonce: "the past few minutes"
        self.echo_own_messages = echo_own_messages  # MESSAGE_CREATE for the bot's sends
        self._ids = itertools.count(1)
        self._last_id = 0
        self.bot = FakeUser(self._snowflake(), bot_name, bot=True)
        self.application_id = self.bot.id
        self.users: dict[int, FakeUser] = {self.bot.id: self.bot}
        self.channels: dict[int, FakeChannel] = {}
        self.guilds: dict[int, Guild] = {}
        self.messages: dict[int, dict[str, Any]] = {}  # every message payload by id
        self.nonces: dict[str, tuple[int, float]] = {}  # the bot's: message id, monotonic time
        self.interactions: dict[int, FakeInteraction] = {}
        # records
        self.sent: list[Sent] = []
        self.calls: list[RestCall] = []
        self.callbacks: list[Callback] = []
        self.typing: list[tuple[int, float]] = []
        self.commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}
        self.identify: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.compression: list[str | None] = []  # ``compress`` query of each connection
        self.handler_errors: list[BaseException] = []
        self.nonce_hits: list[str] = []  # sends answered with the message their nonce made
        self._floods: dict[int, deque[float | None]] = {}
        self._injected: list[Injected] = []
        self._sessions: dict[str, Session] = {}
        self._connections: set[Connection] = set()
        self._changed = asyncio.Condition()
        self._closing = asyncio.Event()
        self._shutdown_timeout = shutdown_timeout
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._routes = self._rest_routes()

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("FakeDiscord is already running")
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        runner, self._port = await serve(app, shutdown_timeout=self._shutdown_timeout)
        self._closing.clear()
        self._runner = runner

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._closing.set()
        for conn in list(self._connections):
            conn.dropped = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.ws.close(code=1001), self._shutdown_timeout)
        await runner.cleanup()

    @property
    def port(self) -> int:
        if self._port is None or self._runner is None:
            raise RuntimeError("FakeDiscord is not running")
        return self._port

    @property
    def api_base(self) -> str:
        """For ``discord.http.Route.BASE``: ``http://127.0.0.1:<port>/api/v10``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """For ``DiscordWebSocket.DEFAULT_GATEWAY``: ``ws://127.0.0.1:<port>/gateway``."""
        return f"ws://127.0.0.1:{self.port}/gateway"

    # -- configuration -----------------------------------------------------------------

    def _snowflake(self) -> int:
        now = int(time.time() * 1000) - DISCORD_EPOCH_MS
        value = max((now << 22) | (next(self._ids) % 4096), self._last_id + 1)
        self._last_id = value
        return value

    def add_user(
        self, username: str, *, id: int | None = None, global_name: str | None = None,
        bot: bool = False,
    ) -> FakeUser:  # fmt: skip
        user = FakeUser(id or self._snowflake(), username, global_name, bot)
        self.users[user.id] = user
        return user

    def add_guild(self, name: str = "guild", *, id: int | None = None) -> int:
        """A guild the bot is in (with its managed bot role); returns its id."""
        guild = Guild(id or self._snowflake(), name, self._snowflake())
        guild.members[self.bot.id] = self.bot
        self.guilds[guild.id] = guild
        return guild.id

    def add_channel(self, guild_id: int, name: str = "general", *, id: int | None = None) -> int:
        channel = FakeChannel(id or self._snowflake(), "text", name, guild_id=guild_id)
        self.channels[channel.id] = channel
        self.guilds[guild_id].channels.append(channel.id)
        return channel.id

    def add_thread(self, parent_id: int, name: str = "thread", *, id: int | None = None) -> int:
        parent = self.channels[parent_id]
        thread = FakeChannel(
            id or self._snowflake(), "thread", name, guild_id=parent.guild_id, parent_id=parent_id
        )
        self.channels[thread.id] = thread
        assert parent.guild_id is not None
        self.guilds[parent.guild_id].channels.append(thread.id)
        return thread.id

    def add_dm(self, user: FakeUser, *, id: int | None = None) -> int:
        channel = FakeChannel(id or self._snowflake(), "dm", recipient=user)
        self.channels[channel.id] = channel
        return channel.id

    def bot_role_id(self, guild_id: int) -> int:
        return self.guilds[guild_id].bot_role_id

    def forbid(self, channel_id: int, code: int = 50013) -> None:
        """Sends to the channel answer 403 with ``code`` (50013 permissions, 50007 DM)."""
        self.channels[channel_id].forbidden_code = code

    # -- failure injection -------------------------------------------------------------

    def flood(self, channel_id: int, retry_after: float, times: int = 1, *, after: int = 0) -> None:
        """After ``after`` more message POSTs to the channel pass, the next ``times`` answer
        429 with ``retry_after`` seconds."""
        self._floods.setdefault(channel_id, deque()).extend([None] * after + [retry_after] * times)

    def fail_next(
        self, status: int = 503, *, times: int = 1, method: str | None = None,
        path: str | None = None, body: Any = None,
    ) -> None:  # fmt: skip
        """The next ``times`` matching REST requests answer ``status`` (``path``: a regex)."""
        self._injected.append(Injected(status, method, path, body, times))

    def hang_next(
        self, *, times: int = 1, method: str | None = None, path: str | None = None,
        after: int = 0, handled: bool = False,
    ) -> None:  # fmt: skip
        """The next ``times`` matching REST requests never answer (until the fake closes),
        once ``after`` of them went through. ``handled``: each is carried out first (the
        message is posted) and only its answer is lost, as when a connection dies with the
        request already at Discord."""
        self._injected.append(Injected(None, method, path, None, times, after, handled))

    async def drop_connection(self, code: int | None = 4000) -> None:
        """Close every gateway socket (``code``; ``None`` aborts TCP without a close frame).
        Sessions stay resumable."""
        for conn in list(self._connections):
            conn.dropped = True
            if code is None:
                if isinstance(conn.transport, asyncio.Transport):
                    conn.transport.abort()
            else:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(conn.ws.close(code=code), self._shutdown_timeout)

    # -- pushing events ----------------------------------------------------------------

    def message_payload(
        self,
        channel_id: int,
        author: FakeUser,
        content: str,
        *,
        mentions: Iterable[FakeUser | int] = (),
        reply_to: int | None = None,
        attachments: Iterable[Mapping[str, Any]] = (),
        type: int | None = None,
        flags: int = 0,
        guild_id: int | None = None,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE payload as Discord sends it (mentions in ``content`` resolved;
        ``guild_id`` defaults to the channel's), remembered in :attr:`messages`."""
        channel = self.channels[channel_id]
        guild_id = guild_id or channel.guild_id
        message_id = self._snowflake()
        payload = build_message(
            message_id, channel_id, author, content, bot=self.bot,
            guild=self.guilds[guild_id] if guild_id is not None else None, users=self.users,
            mentions=mentions, reply_to=reply_to,
            referenced=self.messages.get(reply_to) if reply_to is not None else None,
            attachments=[(self._snowflake(), a) for a in attachments], type=type, flags=flags,
        )  # fmt: skip
        self.messages[message_id] = payload
        return payload

    async def push_message(
        self,
        channel_id: int,
        author: FakeUser,
        content: str,
        *,
        mentions: Iterable[FakeUser | int] = (),
        reply_to: int | None = None,
        attachments: Iterable[Mapping[str, Any]] = (),
        type: int | None = None,
        guild_id: int | None = None,
    ) -> dict[str, Any]:
        """Dispatch MESSAGE_CREATE to every live session; returns the payload."""
        payload = self.message_payload(
            channel_id, author, content, mentions=mentions, reply_to=reply_to,
            attachments=attachments, type=type, guild_id=guild_id,
        )  # fmt: skip
        await self.dispatch("MESSAGE_CREATE", payload)
        return payload

    async def redeliver(self, payload: Mapping[str, Any], event: str = "MESSAGE_CREATE") -> None:
        """Dispatch the same payload again (same message id), as after a gateway replay."""
        await self.dispatch(event, dict(payload))

    async def push_interaction(
        self,
        name: str,
        options: Mapping[str, str] | None,
        user: FakeUser,
        channel_id: int,
        guild_id: int | None = None,
    ) -> FakeInteraction:
        """Dispatch INTERACTION_CREATE for slash command ``name`` with string ``options``."""
        interaction = self.interaction_payload(name, options, user, channel_id, guild_id)
        await self.dispatch("INTERACTION_CREATE", interaction.payload)
        return interaction

    def interaction_payload(
        self,
        name: str,
        options: Mapping[str, str] | None,
        user: FakeUser,
        channel_id: int,
        guild_id: int | None = None,
    ) -> FakeInteraction:
        """An INTERACTION_CREATE for slash command ``name`` as Discord sends it (its token
        answers), remembered in :attr:`interactions` but not dispatched."""
        channel = self.channels[channel_id]
        guild_id = guild_id or channel.guild_id
        interaction_id = self._snowflake()
        registered = self.guild_commands.get(guild_id or 0, []) + self.commands
        command_id = next(
            (c["id"] for c in registered if c["name"] == name), str(self._snowflake())
        )
        token = secrets.token_urlsafe(48)
        guild = self.guilds[guild_id] if guild_id is not None else None
        payload = build_interaction(
            interaction_id, token, user, channel, guild=guild, bot=self.bot,
            application_id=self.application_id, command_id=command_id, name=name, options=options,
        )  # fmt: skip
        interaction = FakeInteraction(
            interaction_id, token, name, channel_id, guild_id, user, time.monotonic(), payload
        )
        self.interactions[interaction_id] = interaction
        return interaction

    async def press(self, message_id: int, custom_id: str, user: FakeUser) -> FakeInteraction:
        """``user`` presses the button ``custom_id`` on the message ``message_id``: dispatch
        INTERACTION_CREATE type 3 (MESSAGE_COMPONENT) with the message as it is now. As in
        Discord's clients, only a button the message carries can be pressed, and an
        ephemeral message only by the person it was shown to (``LookupError`` otherwise)."""
        message = self.messages[message_id]
        if custom_id not in [c for _, c in buttons_of(message.get("components") or [])]:
            raise LookupError(f"message {message_id} has no button {custom_id!r}")
        if message.get("flags", 0) & EPHEMERAL:
            made_by = {s.interaction_id for s in self.sent if s.message_id == message_id}
            if not any(self.interactions[i].user == user for i in made_by if i is not None):
                raise LookupError(
                    f"message {message_id} is ephemeral: {user.username} cannot see it"
                )
        channel = self.channels[int(message["channel_id"])]
        guild_id = channel.guild_id
        interaction_id = self._snowflake()
        token = secrets.token_urlsafe(48)
        payload = build_press(
            interaction_id, token, user, channel, message=message, custom_id=custom_id,
            guild=self.guilds[guild_id] if guild_id is not None else None, bot=self.bot,
            application_id=self.application_id,
        )  # fmt: skip
        interaction = FakeInteraction(
            interaction_id, token, custom_id, channel.id, guild_id, user, time.monotonic(),
            payload, kind=3, message_id=message_id,
        )  # fmt: skip
        self.interactions[interaction_id] = interaction
        await self.dispatch("INTERACTION_CREATE", payload)
        return interaction

    # -- waiting -----------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:  # noqa: ASYNC109
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(predicate)

    async def wait_sent(
        self,
        n: int,
        *,
        channel_id: int | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 (the tests' own bound, as documented)
    ) -> list[Sent]:
        """Wait until ``n`` messages went to ``channel_id`` (any channel: None); return them."""

        def matching() -> list[Sent]:
            return [s for s in self.sent if channel_id is None or s.channel_id == channel_id]

        await self.wait_for(lambda: len(matching()) >= n, timeout)
        return matching()

    async def wait_identified(self, n: int = 1, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        await self.wait_for(lambda: len(self.identify) >= n, timeout)
