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
/oauth2/applications/@me``; ``/gateway`` and ``/gateway/bot`` answer too), opening a DM
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
session, as on Discord.

Test API. Configure with :meth:`~FakeDiscord.add_guild`, :meth:`~FakeDiscord.add_channel`,
:meth:`~FakeDiscord.add_thread`, :meth:`~FakeDiscord.add_user`, :meth:`~FakeDiscord.add_dm`
and :meth:`~FakeDiscord.forbid` (before the client connects: GUILD_CREATE is sent at
IDENTIFY). Drive with :meth:`~FakeDiscord.push_message` (MESSAGE_CREATE; ``<@id>`` in the
content become mentions, ``reply_to`` fills ``message_reference`` and
``referenced_message``), :meth:`~FakeDiscord.push_interaction` (INTERACTION_CREATE type 2),
:meth:`~FakeDiscord.redeliver`, :meth:`~FakeDiscord.flood`,
:meth:`~FakeDiscord.fail_next`, :meth:`~FakeDiscord.hang_next` and
:meth:`~FakeDiscord.drop_connection`. Inspect :attr:`~FakeDiscord.sent` (what the bot made
visible, with ``time.monotonic()`` stamps), :attr:`~FakeDiscord.callbacks`,
:attr:`~FakeDiscord.calls` (every REST request), :attr:`~FakeDiscord.commands`,
:attr:`~FakeDiscord.identify`, :attr:`~FakeDiscord.resumes`, :attr:`~FakeDiscord.typing`;
wait with :meth:`~FakeDiscord.wait_sent` / :meth:`~FakeDiscord.wait_for` (always bounded).
The bot's own messages are echoed as MESSAGE_CREATE, as Discord does.

Bounded: leaving the ``async with`` wakes hung requests, closes every WebSocket and the
listening socket, and waits at most ``shutdown_timeout`` for handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import secrets
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self

from aiohttp import WSMsgType, web

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

DISCORD_EPOCH_MS = 1_420_070_400_000
EPHEMERAL = 64
_JSON = {"Content-Type": "application/json"}
_MAX_CONTENT = 2000
_CDN = "https://cdn.discordapp.com"
_BUFFERED_EVENTS = 1000


def snowflake_time(snowflake: int) -> float:
    """The UNIX time (seconds) a snowflake id was made at."""
    return ((snowflake >> 22) + DISCORD_EPOCH_MS) / 1000


def _iso(snowflake: int) -> str:
    return datetime.fromtimestamp(snowflake_time(snowflake), UTC).isoformat()


# -- what tests configure ------------------------------------------------------------------


@dataclass(frozen=True)
class FakeUser:
    id: int
    username: str
    global_name: str | None = None
    bot: bool = False

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(self.id),
            "username": self.username,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": None,
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
            "primary_guild": None,
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass
class FakeChannel:
    id: int
    kind: Literal["text", "thread", "dm"]
    name: str = ""
    guild_id: int | None = None
    parent_id: int | None = None
    recipient: FakeUser | None = None
    forbidden_code: int | None = None  # 50013 Missing Permissions, 50007 DM closed

    def payload(self, bot: FakeUser) -> dict[str, Any]:
        if self.kind == "dm":
            recipients = [self.recipient.payload()] if self.recipient else []
            return {"id": str(self.id), "type": 1, "recipients": recipients, "flags": 0}
        base: dict[str, Any] = {
            "id": str(self.id),
            "guild_id": str(self.guild_id),
            "name": self.name,
            "parent_id": str(self.parent_id) if self.parent_id else None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        if self.kind == "thread":
            return base | {
                "type": 11,
                "owner_id": str(bot.id),
                "message_count": 0,
                "member_count": 1,
                "total_message_sent": 0,
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": _iso(self.id),
                    "locked": False,
                    "create_timestamp": _iso(self.id),
                },
            }
        return base | {
            "type": 0,
            "position": 0,
            "permission_overwrites": [],
            "topic": None,
            "nsfw": False,
        }


@dataclass
class _Guild:
    id: int
    name: str
    bot_role_id: int
    members: dict[int, FakeUser] = field(default_factory=dict)
    channels: list[int] = field(default_factory=list)


# -- what tests inspect --------------------------------------------------------------------


@dataclass(frozen=True)
class RestCall:
    method: str
    path: str  # under /api/v10, without the query
    query: dict[str, str]
    body: Any  # parsed JSON or None
    status: int
    time: float  # time.monotonic() when the request arrived


@dataclass(frozen=True)
class Sent:
    """A message the bot made visible: ``kind`` is ``message`` (channel POST), ``edit``
    (PATCH of a message), ``followup`` (interaction webhook) or ``original`` (the edit that
    fills a deferred interaction response)."""

    kind: Literal["message", "edit", "followup", "original"]
    channel_id: int
    content: str
    message_id: int
    time: float  # time.monotonic() when accepted
    reference: int | None = None  # message_reference.message_id (a reply)
    interaction_id: int | None = None
    ephemeral: bool = False
    allowed_mentions: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Callback:
    """An interaction callback: ``type`` 4 = message, 5 = deferred ("thinking")."""

    interaction_id: int
    type: int
    flags: int
    time: float
    data: Mapping[str, Any] | None


@dataclass
class FakeInteraction:
    id: int
    token: str
    name: str
    channel_id: int
    guild_id: int | None
    user: FakeUser
    created: float  # time.monotonic()
    payload: dict[str, Any]
    callback: Callback | None = None
    original_id: int | None = None


@dataclass
class _Injected:
    status: int | None  # None: hang until the fake closes
    method: str | None
    path: str | None  # a regex searched in the path
    body: Any
    times: int


# -- gateway plumbing ----------------------------------------------------------------------


class _Connection:
    def __init__(
        self,
        ws: web.WebSocketResponse,
        compress: str | None,
        transport: asyncio.BaseTransport | None,
    ) -> None:
        self.ws = ws
        self.transport = transport
        self.deflater = zlib.compressobj() if compress == "zlib-stream" else None
        self.lock = asyncio.Lock()
        self.session: _Session | None = None
        self.dropped = False

    async def send(self, frame: Mapping[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":"))
        async with self.lock:
            if self.ws.closed:
                return
            with contextlib.suppress(ConnectionError):
                if self.deflater is None:
                    await self.ws.send_str(data)
                else:
                    raw = self.deflater.compress(data.encode()) + self.deflater.flush(
                        zlib.Z_SYNC_FLUSH
                    )
                    await self.ws.send_bytes(raw)


@dataclass
class _Session:
    id: str
    intents: int
    seq: int = 0
    alive: bool = True
    conn: _Connection | None = None
    buffer: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_BUFFERED_EVENTS))


_Handler = Callable[[web.Request, re.Match[str], Any], Any]


class FakeDiscord:
    """The fake; ``async with FakeDiscord(token=...) as dc:`` serves on an ephemeral port."""

    def __init__(
        self,
        *,
        token: str = "fake-discord-token",
        bot_name: str = "mnemo",
        heartbeat_interval: float = 0.5,
        interaction_deadline: float = 3.0,
        interaction_ttl: float = 900.0,
        echo_own_messages: bool = True,
        shutdown_timeout: float = 2.0,
    ) -> None:
        self.token = token
        self.heartbeat_interval = heartbeat_interval  # seconds, sent in HELLO as ms
        self.interaction_deadline = interaction_deadline  # the 3-second rule
        self.interaction_ttl = interaction_ttl  # interaction tokens live 15 minutes
        self.echo_own_messages = echo_own_messages  # MESSAGE_CREATE for the bot's sends
        self._ids = itertools.count(1)
        self._last_id = 0
        self.bot = FakeUser(self._snowflake(), bot_name, bot=True)
        self.application_id = self.bot.id
        self.users: dict[int, FakeUser] = {self.bot.id: self.bot}
        self.channels: dict[int, FakeChannel] = {}
        self.guilds: dict[int, _Guild] = {}
        self.messages: dict[int, dict[str, Any]] = {}  # every message payload by id
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
        self._floods: dict[int, deque[float | None]] = {}
        self._injected: list[_Injected] = []
        self._sessions: dict[str, _Session] = {}
        self._connections: set[_Connection] = set()
        self._changed = asyncio.Condition()
        self._closing = asyncio.Event()
        self._shutdown_timeout = shutdown_timeout
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._routes: list[tuple[str, re.Pattern[str], _Handler]] = [
            ("GET", re.compile(r"/users/@me"), self._get_me),
            ("GET", re.compile(r"/oauth2/applications/@me"), self._get_application),
            ("GET", re.compile(r"/gateway(/bot)?"), self._get_gateway),
            ("POST", re.compile(r"/users/@me/channels"), self._post_dm),
            ("POST", re.compile(r"/channels/(?P<channel>\d+)/messages"), self._post_message),
            (
                "PATCH",
                re.compile(r"/channels/(?P<channel>\d+)/messages/(?P<message>\d+)"),
                self._patch_message,
            ),
            ("POST", re.compile(r"/channels/(?P<channel>\d+)/typing"), self._post_typing),
            ("PUT", re.compile(r"/applications/(?P<app>\d+)(/guilds/(?P<guild>\d+))?/commands"),
             self._put_commands),
            ("GET", re.compile(r"/applications/(?P<app>\d+)(/guilds/(?P<guild>\d+))?/commands"),
             self._get_commands),
            ("POST", re.compile(r"/interactions/(?P<id>\d+)/(?P<token>[^/]+)/callback"),
             self._post_callback),
            ("POST", re.compile(r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)"), self._post_followup),
            (
                "PATCH",
                re.compile(r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)/messages/(?P<message>@original|\d+)"),
                self._patch_webhook_message,
            ),
        ]  # fmt: skip

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
        if exc is None and self.handler_errors:
            first = self.handler_errors[0]
            raise RuntimeError(f"the fake Discord failed to answer: {first!r}") from first

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("FakeDiscord is already running")
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=self._shutdown_timeout
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self._port = int(runner.addresses[0][1])
        except BaseException:
            await runner.cleanup()
            raise
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
        guild = _Guild(id or self._snowflake(), name, self._snowflake())
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
        self._injected.append(_Injected(status, method, path, body, times))

    def hang_next(
        self, *, times: int = 1, method: str | None = None, path: str | None = None
    ) -> None:
        """The next ``times`` matching REST requests never answer (until the fake closes)."""
        self._injected.append(_Injected(None, method, path, None, times))

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

    def _guild_of(self, channel: FakeChannel) -> int | None:
        return channel.guild_id

    def _member(self, user: FakeUser, guild_id: int) -> dict[str, Any]:
        guild = self.guilds[guild_id]
        roles = [str(guild.bot_role_id)] if user.id == self.bot.id else []
        return {
            "roles": roles, "nick": None, "avatar": None, "banner": None,
            "joined_at": _iso(guild.id), "premium_since": None, "deaf": False, "mute": False,
            "pending": False, "flags": 0,
            "communication_disabled_until": None,
        }  # fmt: skip

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
        ``guild_id`` defaults to the channel's)."""
        channel = self.channels[channel_id]
        guild_id = guild_id or self._guild_of(channel)
        message_id = self._snowflake()
        mentioned: dict[int, FakeUser] = {}
        ids = [m if isinstance(m, int) else m.id for m in mentions]
        ids += [int(x) for x in re.findall(r"<@!?(\d+)>", content)]
        for user_id in ids:
            if user_id in self.users:
                mentioned[user_id] = self.users[user_id]
        payload: dict[str, Any] = {
            "id": str(message_id),
            "channel_id": str(channel_id),
            "author": author.payload(),
            "content": content,
            "timestamp": _iso(message_id),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": "@everyone" in content or "@here" in content,
            "mentions": [],
            "mention_roles": re.findall(r"<@&(\d+)>", content),
            "attachments": [
                {
                    "id": str(self._snowflake()),
                    "filename": a.get("filename", "file.bin"),
                    "size": a.get("size", 0),
                    "url": f"{_CDN}/attachments/{channel_id}/{a.get('filename', 'file.bin')}",
                    "proxy_url": f"{_CDN}/attachments/{channel_id}/proxy",
                    "content_type": a.get("content_type"),
                } | dict(a)
                for a in attachments
            ],
            "embeds": [],
            "components": [],
            "pinned": False,
            "type": type if type is not None else (19 if reply_to else 0),
            "flags": flags,
            "nonce": None,
        }  # fmt: skip
        if guild_id is not None:
            payload["guild_id"] = str(guild_id)
            payload["member"] = self._member(author, guild_id)
        for user in mentioned.values():
            mention = user.payload()
            if guild_id is not None:
                mention["member"] = self._member(user, guild_id)
            payload["mentions"].append(mention)
        if reply_to is not None:
            reference: dict[str, Any] = {
                "type": 0, "message_id": str(reply_to), "channel_id": str(channel_id),
                "fail_if_not_exists": False,
            }  # fmt: skip
            if guild_id is not None:
                reference["guild_id"] = str(guild_id)
            payload["message_reference"] = reference
            referenced = self.messages.get(reply_to)
            payload["referenced_message"] = (
                {k: v for k, v in referenced.items() if k != "referenced_message"}
                if referenced
                else None
            )
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
        channel = self.channels[channel_id]
        guild_id = guild_id or self._guild_of(channel)
        interaction_id = self._snowflake()
        registered = self.guild_commands.get(guild_id or 0, []) + self.commands
        command_id = next(
            (c["id"] for c in registered if c["name"] == name), str(self._snowflake())
        )
        data: dict[str, Any] = {"id": command_id, "name": name, "type": 1}
        if options:
            data["options"] = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
        token = secrets.token_urlsafe(48)
        payload: dict[str, Any] = {
            "id": str(interaction_id), "application_id": str(self.application_id), "type": 2,
            "data": data, "channel_id": str(channel_id), "channel": channel.payload(self.bot),
            "token": token, "version": 1, "locale": "en-US", "app_permissions": "2248473465835073",
            "entitlements": [], "attachment_size_limit": 10 * 1024 * 1024,
            "context": 0 if guild_id else 1,
            "authorizing_integration_owners": (
                {"0": str(guild_id)} if guild_id else {"1": str(user.id)}
            ),
        }  # fmt: skip
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
            payload["guild_id"] = str(guild_id)
            payload["guild_locale"] = "en-US"
            payload["guild"] = {"id": str(guild_id), "locale": "en-US", "features": []}
            payload["member"] = self._member(user, guild_id) | {
                "user": user.payload(),
                "permissions": "2248473465835073",
            }
        else:
            payload["user"] = user.payload()
        interaction = FakeInteraction(
            interaction_id, token, name, channel_id, guild_id, user, time.monotonic(), payload
        )
        self.interactions[interaction_id] = interaction
        await self.dispatch("INTERACTION_CREATE", payload)
        return interaction

    async def dispatch(self, event: str, data: Mapping[str, Any]) -> None:
        """Send one dispatch (op 0) to every live session, buffered for RESUME."""
        for session in list(self._sessions.values()):
            if session.alive:
                await self._dispatch_to(session, event, data)

    async def _dispatch_to(self, session: _Session, event: str, data: Mapping[str, Any]) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(frame)
        if session.conn is not None:
            await session.conn.send(frame)

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

    # -- gateway -----------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        compress = request.query.get("compress")
        self.compression.append(compress)
        conn = _Connection(ws, compress, request.transport)
        if compress not in (None, "zlib-stream"):
            await ws.close(code=4000, message=f"unsupported compress={compress}".encode())
            return ws
        self._connections.add(conn)
        try:
            ms = int(self.heartbeat_interval * 1000)
            await conn.send({"op": 10, "d": {"heartbeat_interval": ms}, "s": None, "t": None})
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(conn, json.loads(msg.data))
        except Exception as exc:  # a broken fake must not pass silently
            self.handler_errors.append(exc)
            raise
        finally:
            self._connections.discard(conn)
            session = conn.session
            if session is not None and session.conn is conn:
                session.conn = None
                if not conn.dropped and ws.close_code in (1000, 1001):
                    session.alive = False  # a clean close ends the session
            await self._notify()
        return ws

    async def _on_frame(self, conn: _Connection, frame: dict[str, Any]) -> None:
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:
            await conn.send({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            await self._on_identify(conn, data)
        elif op == 6:
            await self._on_resume(conn, data)
        await self._notify()

    async def _on_identify(self, conn: _Connection, data: dict[str, Any]) -> None:
        self.identify.append(data)
        if data.get("token") != self.token:
            conn.dropped = True
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        session = _Session(secrets.token_hex(16), int(data.get("intents", 0)), conn=conn)
        self._sessions[session.id] = session
        conn.session = session
        ready = {
            "v": 10,
            "user": self.bot.payload() | {"verified": True, "mfa_enabled": False, "email": None},
            "guilds": [{"id": str(g), "unavailable": True} for g in self.guilds],
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "session_type": "normal",
            "application": {"id": str(self.application_id), "flags": 1 << 19},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
            "auth": {},
        }
        await self._dispatch_to(session, "READY", ready)
        for guild_id in self.guilds:
            await self._dispatch_to(session, "GUILD_CREATE", self._guild_payload(guild_id))

    async def _on_resume(self, conn: _Connection, data: dict[str, Any]) -> None:
        self.resumes.append(data)
        session = self._sessions.get(str(data.get("session_id")))
        if session is None or not session.alive or data.get("token") != self.token:
            await conn.send({"op": 9, "d": False, "s": None, "t": None})
            return
        if session.conn is not None and session.conn is not conn:
            session.conn.dropped = True
            await session.conn.ws.close(code=4000)
        session.conn = conn
        conn.session = session
        seq = int(data.get("seq") or 0)
        for frame in list(session.buffer):
            if frame["s"] > seq:
                await conn.send(frame)
        await self._dispatch_to(session, "RESUMED", {})

    def _guild_payload(self, guild_id: int) -> dict[str, Any]:
        guild = self.guilds[guild_id]
        channels = [self.channels[c] for c in guild.channels]
        return {
            "id": str(guild.id), "name": guild.name, "icon": None, "owner_id": str(self.bot.id - 1),
            "unavailable": False, "large": False, "member_count": len(guild.members),
            "joined_at": _iso(guild.id), "features": [], "emojis": [], "stickers": [],
            "verification_level": 0, "default_message_notifications": 0,
            "explicit_content_filter": 0, "mfa_level": 0, "nsfw_level": 0, "premium_tier": 0,
            "preferred_locale": "en-US", "system_channel_id": None, "afk_timeout": 300,
            "roles": [
                {"id": str(guild.id), "name": "@everyone", "permissions": "1071698660929",
                 "position": 0, "color": 0, "hoist": False, "managed": False,
                 "mentionable": False, "flags": 0},
                {"id": str(guild.bot_role_id), "name": self.bot.username,
                 "permissions": "2248473465835073", "position": 1, "color": 0, "hoist": False,
                 "managed": True, "mentionable": False, "flags": 0,
                 "tags": {"bot_id": str(self.bot.id)}},
            ],
            "members": [
                self._member(user, guild.id) | {"user": user.payload()}
                for user in guild.members.values()
            ],
            "channels": [c.payload(self.bot) for c in channels if c.kind == "text"],
            "threads": [c.payload(self.bot) for c in channels if c.kind == "thread"],
            "voice_states": [], "presences": [], "stage_instances": [],
            "guild_scheduled_events": [], "soundboard_sounds": [],
        }  # fmt: skip

    # -- REST --------------------------------------------------------------------------

    @staticmethod
    def _json(status: int, body: Any, headers: Mapping[str, str] | None = None) -> web.Response:
        return web.Response(
            status=status,
            body=json.dumps(body).encode(),
            headers={**_JSON, "Via": "1.1 google", **(headers or {})},
        )

    @staticmethod
    def _error(status: int, code: int, message: str, errors: Any = None) -> web.Response:
        body: dict[str, Any] = {"message": message, "code": code}
        if errors is not None:
            body["errors"] = errors
        return FakeDiscord._json(status, body)

    @staticmethod
    def _ratelimit_headers(bucket: str, remaining: int, reset_after: float) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": bucket,
        }

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        path = "/" + request.match_info["tail"]
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        response = await self._answer(request, path, body)
        self.calls.append(
            RestCall(request.method, path, dict(request.query), body, response.status, arrived)
        )
        await self._notify()
        return response

    async def _answer(self, request: web.Request, path: str, body: Any) -> web.Response:
        webhook = path.startswith(("/interactions/", "/webhooks/"))
        if not webhook and request.headers.get("Authorization") != f"Bot {self.token}":
            return self._error(401, 0, "401: Unauthorized")
        for injected in self._injected:
            if (
                injected.times > 0
                and (injected.method in (None, request.method))
                and (injected.path is None or re.search(injected.path, path))
            ):
                injected.times -= 1
                if injected.status is None:
                    await self._closing.wait()
                    return self._error(503, 0, "fake closing")
                answer = injected.body or {"message": f"{injected.status}: injected", "code": 0}
                return self._json(injected.status, answer)
        for method, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if match and method == request.method:
                try:
                    result: web.Response = await handler(request, match, body)
                except Exception as exc:
                    self.handler_errors.append(exc)
                    return self._error(500, 0, f"fake handler failed: {exc!r}")
                return result
        return self._error(404, 0, "404: Not Found")

    async def _get_me(self, request: web.Request, match: re.Match[str], body: Any) -> web.Response:
        return self._json(200, self.bot.payload() | {"verified": True, "mfa_enabled": False})

    async def _get_application(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        owner = FakeUser(self.application_id - 1, "owner")
        return self._json(200, {
            "id": str(self.application_id), "name": self.bot.username, "icon": None,
            "description": "", "summary": "", "bot_public": False,
            "bot_require_code_grant": False, "verify_key": "0" * 64, "flags": 1 << 19,
            "owner": owner.payload(), "team": None, "bot": self.bot.payload(),
            "redirect_uris": [], "interactions_endpoint_url": None,
            "integration_types_config": {"0": {}},
        })  # fmt: skip

    async def _get_gateway(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        return self._json(200, {
            "url": self.gateway_url, "shards": 1,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14400000,
                                    "max_concurrency": 1},
        })  # fmt: skip

    async def _post_dm(self, request: web.Request, match: re.Match[str], body: Any) -> web.Response:
        user = self.users.get(int(body.get("recipient_id", 0))) if isinstance(body, dict) else None
        if user is None:
            return self._error(400, 50035, "Invalid Form Body")
        channel = next(
            (c for c in self.channels.values() if c.kind == "dm" and c.recipient == user), None
        )
        channel = channel or self.channels[self.add_dm(user)]
        return self._json(200, channel.payload(self.bot) | {"last_message_id": None})

    def _check_content(self, body: Any) -> web.Response | None:
        content = body.get("content") if isinstance(body, dict) else None
        if content is not None and len(content) > _MAX_CONTENT:
            return self._error(400, 50035, "Invalid Form Body", {"content": {"_errors": [
                {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}
            ]}})  # fmt: skip
        if not content and not (isinstance(body, dict) and body.get("embeds")):
            return self._error(400, 50006, "Cannot send an empty message")
        return None

    def _channel_error(self, channel_id: int) -> web.Response | None:
        channel = self.channels.get(channel_id)
        if channel is None:
            return self._error(404, 10003, "Unknown Channel")
        if channel.forbidden_code == 50007:
            return self._error(403, 50007, "Cannot send messages to this user")
        if channel.forbidden_code is not None:
            return self._error(403, channel.forbidden_code, "Missing Permissions")
        return None

    def _bot_message(
        self, channel_id: int, body: dict[str, Any], *, flags: int = 0
    ) -> dict[str, Any]:
        reference = body.get("message_reference") or {}
        reply_to = int(reference["message_id"]) if reference.get("message_id") else None
        return self.message_payload(
            channel_id, self.bot, body.get("content") or "", reply_to=reply_to, flags=flags
        )

    async def _record(self, sent: Sent) -> None:
        self.sent.append(sent)
        await self._notify()

    async def _post_message(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        channel_id = int(match["channel"])
        bucket = "f00dfeed"  # POST /channels/{id}/messages
        flood = self._floods.get(channel_id)
        retry_after = flood.popleft() if flood else None
        if retry_after is not None:
            return self._json(
                429,
                {"message": "You are being rate limited.", "retry_after": retry_after,
                 "global": False},
                self._ratelimit_headers(bucket, 0, retry_after)
                | {"Retry-After": str(max(1, round(retry_after))), "X-RateLimit-Scope": "user"},
            )  # fmt: skip
        error = self._channel_error(channel_id) or self._check_content(body)
        if error is not None:
            return error
        reference = body.get("message_reference") or {}
        if reference.get("message_id") and int(reference["message_id"]) not in self.messages:
            if reference.get("fail_if_not_exists", True):
                return self._error(400, 50035, "Invalid Form Body", {"message_reference": {
                    "_errors": [{"code": "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                                 "message": "Unknown message"}]}})  # fmt: skip
            body = {k: v for k, v in body.items() if k != "message_reference"}
        payload = self._bot_message(channel_id, body)
        reply = payload.get("message_reference", {}).get("message_id")
        await self._record(Sent(
            "message", channel_id, payload["content"], int(payload["id"]), time.monotonic(),
            reference=int(reply) if reply else None, allowed_mentions=body.get("allowed_mentions"),
        ))  # fmt: skip
        if self.echo_own_messages:
            await self.dispatch("MESSAGE_CREATE", payload)
        return self._json(200, payload, self._ratelimit_headers(bucket, 4, 1.0))

    async def _patch_message(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        channel_id, message_id = int(match["channel"]), int(match["message"])
        error = self._channel_error(channel_id) or self._check_content(body)
        if error is not None:
            return error
        payload = self.messages.get(message_id)
        if payload is None or payload["channel_id"] != str(channel_id):
            return self._error(404, 10008, "Unknown Message")
        payload.update(content=body["content"], edited_timestamp=datetime.now(UTC).isoformat())
        await self._record(Sent("edit", channel_id, body["content"], message_id, time.monotonic()))
        return self._json(200, payload)

    async def _post_typing(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        channel_id = int(match["channel"])
        error = self._channel_error(channel_id)
        if error is not None:
            return error
        self.typing.append((channel_id, time.monotonic()))
        return web.Response(status=204, headers={"Via": "1.1 google"})

    async def _put_commands(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        if int(match["app"]) != self.application_id:
            return self._error(403, 50001, "Missing Access")
        guild = int(match["guild"]) if match["guild"] else None
        stored = [
            {
                "id": str(self._snowflake()), "application_id": str(self.application_id),
                "version": str(self._snowflake()), "type": 1, "options": [],
                "default_member_permissions": None, "nsfw": False,
                "contexts": None, "integration_types": [0],
            } | command | ({"guild_id": str(guild)} if guild else {})
            for command in body
        ]  # fmt: skip
        if guild is None:
            self.commands = stored
        else:
            self.guild_commands[guild] = stored
        return self._json(200, stored)

    async def _get_commands(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        guild = int(match["guild"]) if match["guild"] else None
        return self._json(
            200, self.commands if guild is None else self.guild_commands.get(guild, [])
        )

    def _interaction_by_token(self, app: str, token: str) -> FakeInteraction | web.Response:
        interaction = next((i for i in self.interactions.values() if i.token == token), None)
        if interaction is None or int(app) != self.application_id:
            return self._error(404, 10015, "Unknown Webhook")
        if time.monotonic() - interaction.created > self.interaction_ttl:
            return self._error(401, 50027, "Invalid Webhook Token")
        if interaction.callback is None:
            return self._error(404, 10015, "Unknown Webhook")
        return interaction

    async def _post_callback(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self.interactions.get(int(match["id"]))
        if interaction is None or interaction.token != match["token"]:
            return self._error(404, 10062, "Unknown interaction")
        if interaction.callback is not None:
            return self._error(400, 40060, "Interaction has already been acknowledged.")
        if time.monotonic() - interaction.created > self.interaction_deadline:
            return self._error(404, 10062, "Unknown interaction")
        kind, data = int(body["type"]), body.get("data")
        flags = int((data or {}).get("flags", 0))
        if kind == 4:
            error = self._check_content(data)
            if error is not None:
                return error
        interaction.callback = Callback(interaction.id, kind, flags, time.monotonic(), data)
        self.callbacks.append(interaction.callback)
        resource: dict[str, Any] = {"type": kind}
        if kind == 4:
            message = self._bot_message(interaction.channel_id, data or {}, flags=flags)
            interaction.original_id = int(message["id"])
            resource["message"] = message
            await self._record(Sent(
                "message", interaction.channel_id, message["content"], int(message["id"]),
                time.monotonic(), interaction_id=interaction.id, ephemeral=bool(flags & EPHEMERAL),
            ))  # fmt: skip
        await self._notify()
        if "with_response" not in request.query:
            return web.Response(status=204, headers={"Via": "1.1 google"})
        return self._json(200, {
            "interaction": {
                "id": str(interaction.id), "type": 2,
                "response_message_id": str(interaction.original_id or interaction.id),
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            },
            "resource": resource,
        })  # fmt: skip

    async def _post_followup(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self._interaction_by_token(match["app"], match["token"])
        if isinstance(interaction, web.Response):
            return interaction
        error = self._check_content(body)
        if error is not None:
            return error
        flags = int(body.get("flags", 0))
        message = self._bot_message(interaction.channel_id, body, flags=flags)
        message["webhook_id"] = str(self.application_id)
        await self._record(Sent(
            "followup", interaction.channel_id, message["content"], int(message["id"]),
            time.monotonic(), interaction_id=interaction.id, ephemeral=bool(flags & EPHEMERAL),
            allowed_mentions=body.get("allowed_mentions"),
        ))  # fmt: skip
        if request.query.get("wait") in ("true", "1", "True"):
            return self._json(200, message)
        return web.Response(status=204, headers={"Via": "1.1 google"})

    async def _patch_webhook_message(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self._interaction_by_token(match["app"], match["token"])
        if isinstance(interaction, web.Response):
            return interaction
        error = self._check_content(body)
        if error is not None:
            return error
        assert interaction.callback is not None
        ephemeral = bool(interaction.callback.flags & EPHEMERAL)
        if match["message"] == "@original":
            if interaction.original_id is None:  # fills the deferred ("thinking") response
                message = self._bot_message(interaction.channel_id, body)
                interaction.original_id = int(message["id"])
            message = self.messages[interaction.original_id]
            kind: Literal["original", "edit"] = "original"
        else:
            found = self.messages.get(int(match["message"]))
            if found is None:
                return self._error(404, 10008, "Unknown Message")
            message, kind = found, "edit"
        message.update(content=body.get("content", message["content"]))
        message["webhook_id"] = str(self.application_id)
        message["flags"] = EPHEMERAL if ephemeral else 0
        await self._record(Sent(
            kind, interaction.channel_id, message["content"], int(message["id"]),
            time.monotonic(), interaction_id=interaction.id, ephemeral=ephemeral,
            allowed_mentions=body.get("allowed_mentions"),
        ))  # fmt: skip
        return self._json(200, message)
