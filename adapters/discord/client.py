"""The Discord adapter: discord.py 2.x behind the gateway's ``Adapter`` protocol.

This module is the client and its gateway connection: start, stop, reconnects, the
endpoints, and where events come in. The rest is one module each: ``commands`` (the slash
command tree and its sync), ``interactions`` (deferred answers, fallbacks, dismiss),
``sending`` (channel messages, nonces, rate limits), ``components`` (buttons, presses,
edits), ``intake`` (events that cannot be used), ``errors`` (discord.py's errors
translated).

Lifecycle. ``start(sink)`` logs in (``GET /users/@me``, ``GET /oauth2/applications/@me``),
runs ``Client.connect(reconnect=True)`` in a named task and returns once READY (bounded by
``ready_timeout``). A bad token raises ``Forbidden`` whose message never contains the token.
``stop()`` is idempotent: it closes the client (gateway socket, aiohttp session), awaits the
connect task and the handlers still delivering to ``sink``. ``async with adapter:``
guarantees ``stop`` on the way out (``start(sink)`` is still needed).

Endpoints. discord.py has no per-client base URL: ``api_base`` and ``gateway_url`` are
written to the process-global class attributes ``discord.http.Route.BASE`` (read whenever a
request is built) and ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` in ``start`` and
restored in ``stop``. So every discord.py client in the process shares them: one Discord
endpoint per process (tests point them at the loopback fake).

Sharding. Discord sends each guild's events on one gateway connection only, that of its
shard ``(guild_id >> 22) % shard_count`` (DMs on shard 0), so a bot on several replicas
splits its shards among them: ``shard_count`` (all replicas together) and ``shard_ids`` (this
replica's; None: all of them). With a ``shard_count`` the client is discord.py's
``AutoShardedClient`` (``intake.ShardedClient``), one connection per shard id, IDENTIFYing
with ``shard: [id, count]``; ``connected`` then means every one of them is open. Without it,
one unsharded connection (Discord's shard 0 of 1), as before. discord.py waits 5 s before
each IDENTIFY after a replica's first (its ``before_identify_hook``, Discord's
``max_concurrency`` of 1), so a replica with many shards takes that long per shard to start:
``ready_timeout`` must allow it.

Reconnects are discord.py's own: a socket closed by Discord or by the network resumes the
session at once (``ReconnectWebSocket`` -> RESUME to ``resume_gateway_url``); other failures
(``OSError``, ``aiohttp.ClientError``, 5xx, a timed-out connect) sleep
``ExponentialBackoff().delay()``, a uniformly jittered delay in [0, 2^n] s, n growing to 10,
then RESUME; an invalidated session IDENTIFYs again (after discord.py's fixed 5 s pause
before any non-initial IDENTIFY). Only fatal closes (4004 bad token,
4014 privileged intent not enabled, ...) end the connect task; ``connected`` then stays False.

Inbound. Every MESSAGE_CREATE goes through ``normalize`` to ``sink``; slash commands and
button presses go through ``interactions``. An event discord.py cannot parse, or one
``normalize`` cannot map, is logged, counted in ``skipped`` and dropped; the connection
reads on (``intake`` says how, and why discord.py alone would have ended it).

Outbound. ``send`` renders (``sending.units``: 2,000 characters, fences intact) and skips
``skip_chunks``; a reply to an interaction the adapter still holds goes through its token
(``interactions``), any other to ``thread_id or chat_id`` (``sending.post``). Errors are
always the ``adapters.base`` family with ``sent`` (ids already delivered;
``errors.translate``): 429 -> ``RateLimited``; 403 -> ``Forbidden``; 404 -> ``NotFound``;
5xx, aiohttp and timeouts -> ``Unavailable``; others -> ``BadRequest``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Self

import discord
import yarl

from adapters.base import BotCommand, Delivered, Forbidden, NotFound, Sink, Unavailable
from adapters.discord import commands as slash
from adapters.discord.components import edit
from adapters.discord.errors import snowflake, translate
from adapters.discord.intake import Client as _Client
from adapters.discord.intake import ShardedClient, Tree, guard_parsers, normalised
from adapters.discord.interactions import Interactions
from adapters.discord.normalize import normalize
from adapters.discord.sending import Progress, post, units
from adapters.messages import Button, InboundMessage, OutboundMessage
from adapters.skips import SkipReason, Skips

__all__ = ["DiscordAdapter"]

log = logging.getLogger(__name__)


class DiscordAdapter:
    """``Adapter`` for Discord; see the module docstring for the behaviour."""

    platform = "discord"

    def __init__(
        self,
        token: str,
        *,
        api_base: str | None = None,
        gateway_url: str | None = None,
        ready_timeout: float = 30.0,
        guild_ready_timeout: float = 2.0,
        request_timeout: float = 60.0,
        max_ratelimit_timeout: float = 30.0,
        interaction_ttl: float = 14.5 * 60,
        shutdown_timeout: float = 10.0,
        shard_count: int | None = None,
        shard_ids: Sequence[int] | None = None,
    ) -> None:
        if shard_ids is not None and shard_count is None:
            raise ValueError("shard_ids needs shard_count")
        if shard_count is not None and shard_ids is not None:
            if not shard_ids or len(set(shard_ids)) != len(shard_ids):
                raise ValueError("shard_ids must be distinct, and at least one")
            if not all(0 <= i < shard_count for i in shard_ids):
                raise ValueError(f"shard_ids must lie in 0..{shard_count - 1}")
        self._shard_count = shard_count
        self._shard_ids = list(shard_ids) if shard_ids is not None else None
        self._token = token
        self._api_base = api_base
        self._gateway_url = gateway_url
        self._ready_timeout = ready_timeout
        self._guild_ready_timeout = guild_ready_timeout  # discord.py waits this after the
        # last GUILD_CREATE before READY fires
        self._request_timeout = request_timeout
        self._max_ratelimit_timeout = max_ratelimit_timeout
        self._interaction_ttl = interaction_ttl
        self._shutdown_timeout = shutdown_timeout
        self._client: _Client | None = None
        self._tree: Tree | None = None
        self._skips = Skips(self.platform, log)
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._sink: Sink | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self._interactions = Interactions(
            skips=self._skips, deliver=self._deliver, ttl=interaction_ttl, timeout=request_timeout
        )
        self._command_names: frozenset[str] | None = None
        self._saved_hooks: tuple[str, yarl.URL] | None = None

    def __repr__(self) -> str:  # never show the token
        return f"<DiscordAdapter connected={self.connected}>"

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        client = self._client
        if client is None or client.is_closed() or not client.is_ready():
            return False
        if isinstance(client, ShardedClient):
            shards = client.shards.values()
            return bool(shards) and not any(shard.is_closed() for shard in shards)
        return client.ws is not None and client.ws.open

    @property
    def shards(self) -> tuple[int, ...]:
        """The shard ids this adapter runs (``(0,)`` unsharded: Discord's shard 0 of 1)."""
        if self._shard_count is None:
            return (0,)
        return tuple(self._shard_ids or range(self._shard_count))

    @property
    def skipped(self) -> Mapping[SkipReason, int]:
        return self._skips.counts

    async def __aenter__(self) -> Self:
        """``async with adapter:`` guarantees ``stop``; ``start(sink)`` is still needed."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self, sink: Sink) -> None:
        if self._client is not None:
            raise RuntimeError("DiscordAdapter is already started")
        self._install_hooks()
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enable it in the developer portal
        intents.dm_messages = intents.guild_messages = True
        options: dict[str, Any] = {
            "intents": intents,
            "guild_ready_timeout": self._guild_ready_timeout,
            "chunk_guilds_at_startup": False,
            "max_ratelimit_timeout": self._max_ratelimit_timeout,
        }
        client: _Client
        if self._shard_count is None:
            client = _Client(self._on_message, self._on_press, **options)
        else:
            client = ShardedClient(
                self._on_message, self._on_press, shard_count=self._shard_count,
                shard_ids=self._shard_ids, **options,
            )  # fmt: skip
        guard_parsers(client, self._skips)
        tree = Tree(client, skips=self._skips, on_unknown=self._interactions.on_command)
        self._client, self._tree, self._sink = client, tree, sink
        self._failure = None
        try:
            async with asyncio.timeout(self._ready_timeout):
                await client.login(self._token)
                self._task = asyncio.create_task(self._run(client), name="discord-gateway")
                await self._until_ready(client, self._task)
        except BaseException as exc:
            await self.stop()
            error = self._start_error(exc)
            if error is exc:
                raise
            raise error from None  # the cause chain may hold request details: keep it out
        sharding = (
            ""
            if self._shard_count is None
            else f", shards {list(self.shards)} of {self._shard_count}"
        )
        log.info("discord: connected as %s (%s%s)", client.user, client.application_id, sharding)

    def _start_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, discord.LoginFailure) or (
            isinstance(exc, discord.ConnectionClosed) and exc.code == 4004
        ):
            return Forbidden("Discord rejected the bot token (401 Unauthorized); check it")
        if isinstance(exc, discord.PrivilegedIntentsRequired):
            return Forbidden(
                "Discord refused the Message Content intent: enable it for the bot in the "
                "Developer Portal (Bot -> Privileged Gateway Intents)"
            )
        if isinstance(exc, TimeoutError):
            return Unavailable(f"Discord did not become ready within {self._ready_timeout:g}s")
        translated = translate(exc, ())
        if translated is not None:
            return Unavailable(f"could not connect to Discord: {translated}")
        return exc

    async def _until_ready(self, client: _Client, task: asyncio.Task[None]) -> None:
        ready = asyncio.create_task(client.wait_until_ready(), name="discord-ready")
        try:
            await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if not client.is_ready():
            raise self._failure or Unavailable("the Discord gateway closed before READY")

    async def _run(self, client: _Client) -> None:
        try:
            await client.connect(reconnect=True)
        except Exception as exc:  # fatal: bad token, disallowed intents, ...
            self._failure = exc
            if client.is_ready():
                log.error("discord: gateway connection ended: %s", type(exc).__name__)

    async def stop(self) -> None:
        client, self._client = self._client, None
        self._sink = None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(task, self._shutdown_timeout)
            except TimeoutError:
                log.warning("discord: the gateway task did not stop in time")
        handlers = self._handlers - {asyncio.current_task()}  # stop() called from a sink
        if handlers:
            _, late = await asyncio.wait(handlers, timeout=self._shutdown_timeout)
            for handler in late:
                handler.cancel()
            if late:
                await asyncio.wait(late, timeout=1.0)
        self._interactions.clear()
        self._tree = None
        self._restore_hooks()

    def _install_hooks(self) -> None:
        if self._api_base is None and self._gateway_url is None:
            return
        gateway = discord.gateway.DiscordWebSocket
        self._saved_hooks = (discord.http.Route.BASE, gateway.DEFAULT_GATEWAY)
        if self._api_base is not None:
            discord.http.Route.BASE = self._api_base.rstrip("/")
        if self._gateway_url is not None:
            gateway.DEFAULT_GATEWAY = yarl.URL(self._gateway_url)

    def _restore_hooks(self) -> None:
        saved, self._saved_hooks = self._saved_hooks, None
        if saved is None:
            return
        gateway = discord.gateway.DiscordWebSocket
        if self._api_base is not None and self._api_base.rstrip("/") == discord.http.Route.BASE:
            discord.http.Route.BASE = saved[0]
        if self._gateway_url is not None and yarl.URL(self._gateway_url) == gateway.DEFAULT_GATEWAY:
            gateway.DEFAULT_GATEWAY = saved[1]

    def _running(self) -> _Client:
        client = self._client
        if client is None or client.is_closed():
            raise Unavailable("the Discord adapter is not running")
        return client

    # -- inbound --------------------------------------------------------------------------

    async def _deliver(self, message: InboundMessage) -> None:
        sink = self._sink
        if sink is None:
            return
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await sink(message)
        except Exception:
            log.exception("discord: the sink failed on %s", message.dedup_key)
        finally:
            if task is not None:
                self._handlers.discard(task)

    async def _on_message(self, message: discord.Message) -> None:
        client = self._client
        if client is None or client.user is None:
            return
        bot_id, names = client.user.id, self._command_names
        inbound = normalised(
            self._skips, "MESSAGE_CREATE", message.id,
            lambda: normalize(message, bot_id=bot_id, command_names=names),
        )  # fmt: skip
        if inbound is not None:
            await self._deliver(inbound)

    async def _on_press(self, interaction: discord.Interaction[Any]) -> None:
        client = self._client
        if client is None or client.user is None:
            return
        await self._interactions.on_press(interaction, client.user.id)

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        """Mirror the gateway's commands as slash commands and sync them (PUT, global;
        ``commands``). ``admins`` are not needed: Discord narrows admin commands by
        permission."""
        self._running()
        tree = self._tree
        assert tree is not None
        self._command_names = slash.install(tree, commands, self._interactions.on_command)
        await slash.sync(tree, timeout=self._request_timeout)

    # -- outbound -------------------------------------------------------------------------

    async def dismiss(self, message: InboundMessage) -> None:
        """A slash command the gateway will not answer: its deferred "thinking…" is
        deleted (``interactions``)."""
        await self._interactions.dismiss(message)

    async def private_chat(self, user_id: str) -> str:
        """The user's DM channel (``POST /users/@me/channels``; discord.py's cache first)."""
        client = self._running()
        target = snowflake(user_id)
        if target is None:
            raise NotFound(f"not a Discord user id: {user_id!r}")
        try:
            async with asyncio.timeout(self._request_timeout):
                channel = await client.create_dm(discord.Object(id=target))
        except Exception as exc:
            raise (translate(exc, ()) or exc) from exc
        return str(channel.id)

    async def edit(
        self, chat_id: str, message_id: str, text: str, *,
        thread_id: str | None = None, buttons: tuple[Button, ...] = (),
    ) -> None:  # fmt: skip
        """``components.edit``: through a fresh press on the message, else the channel."""
        channel, target = snowflake(thread_id or chat_id), snowflake(message_id)
        if channel is None or target is None:
            raise NotFound(f"not a Discord message: {chat_id!r}/{message_id!r}")
        await edit(self._running(), channel, target, text, buttons,
                   presses=self._interactions.pending, ttl=self._interaction_ttl,
                   timeout=self._request_timeout)  # fmt: skip

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        client = self._running()
        target = snowflake(thread_id or chat_id)
        if target is None:
            raise NotFound(f"not a Discord channel id: {thread_id or chat_id!r}")
        try:
            async with asyncio.timeout(self._request_timeout):
                await client.get_partial_messageable(target).typing()
        except Exception as exc:
            raise (translate(exc, ()) or exc) from exc

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        chunks = units(message)
        client = self._running()
        progress = Progress(message.key, message.skip_chunks, len(chunks), delivered)
        chunks = chunks[message.skip_chunks :]
        if not chunks:
            return []
        pending = self._interactions.find(message.reply_to_message_id)
        if pending is not None:
            return await self._interactions.answer(client, pending, chunks, message, progress)
        target = snowflake(message.thread_id or message.chat_id)
        if target is None:
            raise NotFound(f"not a Discord channel id: {message.thread_id or message.chat_id!r}")
        reply = message.reply_to_message_id if message.skip_chunks == 0 else None
        return await post(
            client, target, chunks, reply, progress,
            buttons=message.buttons, timeout=self._request_timeout,
        )  # fmt: skip
