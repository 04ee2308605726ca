"""The Discord adapter: discord.py 2.x behind the gateway's ``Adapter`` protocol.

Lifecycle. ``start(sink)`` logs in (``GET /users/@me``, ``GET /oauth2/applications/@me``),
runs ``Client.connect(reconnect=True)`` in a named task and returns once READY (bounded by
``ready_timeout``). A bad token raises ``Forbidden`` whose message never contains the token.
``stop()`` is idempotent: it closes the client (gateway socket, aiohttp session), awaits the
connect task and the handlers still delivering to ``sink``.

Endpoints. discord.py has no per-client base URL: ``api_base`` and ``gateway_url`` are
written to the process-global class attributes ``discord.http.Route.BASE`` (read whenever a
request is built) and ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` in ``start`` and
restored in ``stop``. So every discord.py client in the process shares them: one Discord
endpoint per process (tests point them at the loopback fake).

Reconnects are discord.py's own: a socket closed by Discord or by the network resumes the
session at once (``ReconnectWebSocket`` -> RESUME to ``resume_gateway_url``); other failures
(``OSError``, ``aiohttp.ClientError``, 5xx, a timed-out connect) sleep
``ExponentialBackoff().delay()``, a uniformly jittered delay in [0, 2^n] s, n growing to 10,
then RESUME; an invalidated session IDENTIFYs again (after discord.py's fixed 5 s pause
before any non-initial IDENTIFY). Only fatal closes (4004 bad token,
4014 privileged intent not enabled, ...) end the connect task; ``connected`` then stays False.

Inbound. Every MESSAGE_CREATE goes through ``normalize`` to ``sink``. Slash commands are a
``CommandTree`` mirroring ``set_commands``: one that takes text has one optional string
option ``args``; admin commands carry ``default_member_permissions`` (Administrator).
The interaction is deferred at once (Discord's 3-second rule; ephemeral in guilds, so command
output is private to whoever asked), remembered, and handed to ``sink`` as
``InboundMessage(is_command=True, text="/name args", message_id=<interaction id>)``. An event
discord.py cannot parse, or one ``normalize`` cannot map, is logged, counted in ``skipped``
and dropped; the connection reads on (``intake`` says how, and why discord.py alone would
have ended it).

Outbound. ``send`` renders (2,000 characters, fences intact), skips ``skip_chunks``, and
sends with ``AllowedMentions.none()`` (nothing in a reply can ping). A reply to a deferred
interaction fills the deferred response with the first chunk and sends the rest as followups
(ephemeral in guilds). Interaction tokens live 15 minutes: past ``interaction_ttl``, when
Discord says the token is gone, or when the defer itself failed, the rest goes as normal
messages: to the channel for a DM command, to the asker's DM for a guild command (its output
was meant to be private, so it never falls back to the public channel). Other replies go
to ``thread_id or chat_id`` (cached channel, else a ``PartialMessageable``, e.g. a DM after a
restart), the first chunk as a reply (``fail_if_not_exists=False``), each chunk with the
nonce ``render.nonce`` derives from ``OutboundMessage.key`` and its index, so Discord
answers a chunk sent again after a restart with the message it already made (for a few
minutes: its ``enforce_nonce`` window). Interaction responses carry no nonce.

Rate limits. discord.py buckets routes by their major parameter (the channel id) and on a
429 sleeps ``retry_after`` and retries inside that bucket only, so flood control on one
channel delays that channel alone. Waits longer than ``max_ratelimit_timeout`` (discord.py's
minimum is 30 s) raise ``discord.RateLimited`` instead, translated to ``RateLimited`` for the
gateway to retry later. Note discord.py also retries 500/502/504/524 itself (sleeping 1, 3, 5,
7, 9 s), so one request may take 25 s: ``request_timeout`` bounds each one.

Buttons, presses and edits: ``adapters.discord.components``. Errors (``errors.translate``),
always with ``sent`` (ids already delivered): 429 -> ``RateLimited``; 403 -> ``Forbidden``;
404 -> ``NotFound``; 5xx, aiohttp and timeouts -> ``Unavailable``; others -> ``BadRequest``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import discord
import yarl
from discord import app_commands

from adapters.base import (
    BotCommand,
    Delivered,
    Forbidden,
    NotFound,
    Sink,
    Unavailable,
)
from adapters.chunking import REPLY_FILE, file_caption, fold
from adapters.discord.components import Deferred, acknowledge, edit, make_view
from adapters.discord.errors import NO_PINGS, TOKEN_GONE, snowflake, translate
from adapters.discord.intake import Client as _Client
from adapters.discord.intake import Tree, guard_parsers, normalised
from adapters.discord.normalize import normalize, normalize_interaction, normalize_press
from adapters.discord.render import nonce, render
from adapters.messages import Button, InboundMessage, OutboundMessage
from adapters.skips import SkipReason, Skips

__all__ = ["DiscordAdapter"]

log = logging.getLogger(__name__)

_MAX_PENDING = 1000


_COMMAND_NAME = re.compile(r"[-_a-z0-9]{1,32}")


@dataclass(frozen=True, slots=True)
class _WholeText:
    """The last unit of a reply past ``max_chunks``: its whole text, as a Markdown file."""

    text: str


def _content(chunk: str | _WholeText) -> dict[str, Any]:
    """``Messageable.send`` / ``followup.send`` arguments for one unit of a reply."""
    if isinstance(chunk, str):
        return {"content": chunk}
    data = io.BytesIO(chunk.text.encode("utf-8"))
    return {"content": file_caption(chunk.text), "file": discord.File(data, REPLY_FILE)}


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
    ) -> None:
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
        self._pending: dict[int, Deferred] = {}
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
        return client.ws is not None and client.ws.open

    @property
    def skipped(self) -> Mapping[SkipReason, int]:
        return self._skips.counts

    async def start(self, sink: Sink) -> None:
        if self._client is not None:
            raise RuntimeError("DiscordAdapter is already started")
        self._install_hooks()
        intents = discord.Intents.default()
        intents.message_content = True  # privileged: enable it in the developer portal
        intents.dm_messages = intents.guild_messages = True
        client = _Client(
            self._on_message,
            self._on_press,
            intents=intents,
            guild_ready_timeout=self._guild_ready_timeout,
            chunk_guilds_at_startup=False,
            max_ratelimit_timeout=self._max_ratelimit_timeout,
        )
        guard_parsers(client, self._skips)
        tree = Tree(client, skips=self._skips, on_unknown=self._on_command)
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
        log.info("discord: connected as %s (%s)", client.user, client.application_id)

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
        self._pending.clear()
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

    async def _on_command(
        self, interaction: discord.Interaction[Any], name: str, args: str | None
    ) -> None:
        inbound = normalised(  # first: what we cannot answer is not deferred
            self._skips, "INTERACTION_CREATE", interaction.id,
            lambda: normalize_interaction(interaction, name=name, args=args),
        )  # fmt: skip
        if inbound is None:
            return
        ephemeral = interaction.guild_id is not None
        deferred = False
        try:
            async with asyncio.timeout(self._request_timeout):
                await interaction.response.defer(ephemeral=ephemeral, thinking=True)
            deferred = True
        except (discord.DiscordException, aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.warning("discord: could not defer /%s: %s", name, translate(exc, ()) or exc)
        # remembered even when the defer failed: the answer then takes the fallback route,
        # which keeps guild command output out of the public channel
        self._remember(Deferred(interaction, time.monotonic(), ephemeral, deferred))
        await self._deliver(inbound)

    async def _on_press(self, interaction: discord.Interaction[Any]) -> None:
        """A button press: acknowledged at once, remembered (answers go as followups, the
        edit of its message through its token), then normalised for the sink."""
        client = self._client
        if client is None or client.user is None:
            return
        bot_id = client.user.id
        inbound = normalised(  # first: what we cannot answer is not acknowledged
            self._skips, "INTERACTION_CREATE", interaction.id,
            lambda: normalize_press(interaction, bot_id=bot_id),
        )  # fmt: skip
        if inbound is None:
            return
        deferred = await acknowledge(interaction, self._request_timeout)
        ephemeral = interaction.guild_id is not None
        self._remember(Deferred(interaction, time.monotonic(), ephemeral, deferred, True))
        await self._deliver(inbound)

    def _remember(self, pending: Deferred) -> None:
        now = time.monotonic()
        for key in [k for k, p in self._pending.items() if now - p.created > self._interaction_ttl]:
            del self._pending[key]
        while len(self._pending) >= _MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        self._pending[pending.interaction.id] = pending

    def _make_command(self, command: BotCommand) -> app_commands.Command[Any, ..., Any]:
        """An application command that hands ``/name [args]`` to the gateway. It has the
        optional ``args`` option only when it takes text; an admin command is shown by
        default to members with Administrator only (a hint: the gateway decides)."""
        name = command.name

        async def with_args(interaction: discord.Interaction[Any], args: str | None = None) -> None:
            await self._on_command(interaction, name, args)

        async def bare(interaction: discord.Interaction[Any]) -> None:
            await self._on_command(interaction, name, None)

        callback: Any = (
            app_commands.describe(args="Arguments, e.g. notes")(with_args) if command.args else bare
        )
        made: app_commands.Command[Any, ..., Any] = app_commands.Command(
            name=name, description=(command.description.strip() or name)[:100], callback=callback
        )
        if command.admin:
            made.default_permissions = discord.Permissions(administrator=True)
        return made

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        """Mirror the gateway's commands as slash commands and sync them (PUT, global).
        ``admins`` are not needed: Discord narrows admin commands by permission."""
        self._running()
        tree = self._tree
        assert tree is not None
        tree.clear_commands(guild=None)
        # Discord takes lower-case names of 1-32 letters, digits, - and _ (at most 100);
        # others are left out of the menu (typed in a DM they still arrive as commands)
        usable = [c for c in commands if _COMMAND_NAME.fullmatch(c.name)][:100]
        for command in usable:
            tree.add_command(self._make_command(command))
        self._command_names = frozenset(command.name for command in usable)
        try:
            async with asyncio.timeout(self._request_timeout):
                await tree.sync()
        except Exception as exc:
            raise (translate(exc, ()) or exc) from exc

    # -- outbound -------------------------------------------------------------------------

    async def dismiss(self, message: InboundMessage) -> None:
        """A slash command the gateway will not answer: its deferred "thinking…" is
        deleted (a press was acknowledged without one: nothing to undo)."""
        pending = self._pending.get(snowflake(message.message_id) or 0)
        if pending is None or pending.original_used or message.is_callback:
            return
        del self._pending[pending.interaction.id]
        if not pending.deferred:
            return
        try:
            async with asyncio.timeout(self._request_timeout):
                await pending.interaction.delete_original_response()
        except Exception as exc:  # best effort: it expires by itself
            log.debug("discord: could not withdraw a deferred answer: %s", exc)

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
        await edit(self._running(), channel, target, text, buttons, presses=self._pending,
                   ttl=self._interaction_ttl, timeout=self._request_timeout)  # fmt: skip

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
        chunks: list[str | _WholeText] = list(render(message))
        kept, as_file = fold(len(chunks), message.max_chunks)
        if as_file:  # past max_chunks: the first chunks, then the whole text as a file
            chunks = [*chunks[:kept], _WholeText(message.text)]
        client = self._running()
        progress = _Progress(message.key, message.skip_chunks, len(chunks), delivered)
        chunks = chunks[message.skip_chunks :]
        if not chunks:
            return []
        reply_id = snowflake(message.reply_to_message_id)
        pending = self._pending.get(reply_id) if reply_id is not None else None
        if pending is not None:
            return await self._answer(client, pending, chunks, message, progress)
        target = snowflake(message.thread_id or message.chat_id)
        if target is None:
            raise NotFound(f"not a Discord channel id: {message.thread_id or message.chat_id!r}")
        reply = message.reply_to_message_id if message.skip_chunks == 0 else None
        return await self._post(client, target, chunks, reply, progress, buttons=message.buttons)

    async def _post(
        self, client: _Client, target: int, chunks: Sequence[str | _WholeText],
        reply: str | None, progress: _Progress, *, buttons: tuple[Button, ...] = (),
    ) -> list[str]:  # fmt: skip
        channel: Any = client.get_channel(target)
        if not isinstance(channel, discord.abc.Messageable):
            channel = client.get_partial_messageable(target)
        for index, chunk in enumerate(chunks):
            reference = None
            if index == 0 and reply is not None and reply.isdigit():
                reference = discord.MessageReference(
                    message_id=int(reply), channel_id=target, fail_if_not_exists=False
                )
            try:
                async with asyncio.timeout(self._request_timeout):
                    posted = await channel.send(
                        **_content(chunk), reference=reference, allowed_mentions=NO_PINGS,
                        nonce=progress.nonce(), **_view(buttons, index == len(chunks) - 1),
                    )  # fmt: skip
            except Exception as exc:
                raise (translate(exc, progress.sent) or exc) from exc
            await progress.done(posted.id)
        return progress.sent

    async def _answer(
        self,
        client: _Client,
        pending: Deferred,
        chunks: Sequence[str | _WholeText],
        message: OutboundMessage,
        progress: _Progress,
    ) -> list[str]:
        sent, rest = progress.sent, self._fallback
        interaction = pending.interaction
        async with pending.lock:
            for index, chunk in enumerate(chunks):
                expired = time.monotonic() - pending.created > self._interaction_ttl
                if expired or not pending.deferred:
                    return await rest(client, pending, chunks[index:], message, progress)
                view = _view(message.buttons, index == len(chunks) - 1)
                try:
                    async with asyncio.timeout(self._request_timeout):
                        if not pending.original_used and isinstance(chunk, str):
                            posted: discord.Message = await interaction.edit_original_response(
                                content=chunk, allowed_mentions=NO_PINGS, **view
                            )
                            pending.original_used = True
                        else:
                            posted = await interaction.followup.send(
                                **_content(chunk),
                                ephemeral=pending.ephemeral,
                                allowed_mentions=NO_PINGS,
                                wait=True,
                                **view,
                            )
                except discord.HTTPException as exc:
                    if exc.code in TOKEN_GONE:
                        return await rest(client, pending, chunks[index:], message, progress)
                    raise (translate(exc, sent) or exc) from exc
                except Exception as exc:
                    raise (translate(exc, sent) or exc) from exc
                await progress.done(posted.id)
        return sent

    async def _fallback(
        self, client: _Client, pending: Deferred, chunks: Sequence[str | _WholeText],
        message: OutboundMessage, progress: _Progress,
    ) -> list[str]:  # fmt: skip
        """The interaction cannot answer (token expired or gone, or never deferred): a DM
        interaction continues in its channel, a guild one (private output) in the asker's DM."""
        self._pending.pop(pending.interaction.id, None)
        if not pending.ephemeral:
            return await self._post(
                client, int(message.chat_id), chunks, None, progress, buttons=message.buttons
            )
        try:
            async with asyncio.timeout(self._request_timeout):
                dm = await pending.interaction.user.create_dm()
        except Exception as exc:
            raise (translate(exc, progress.sent) or exc) from exc
        return await self._post(client, dm.id, chunks, None, progress, buttons=message.buttons)


@dataclass(slots=True)
class _Progress:
    """One ``send`` under way: the ids delivered, the next chunk's nonce, the report."""

    key: str  # OutboundMessage.key: chunks get stable nonces only with one
    skip: int  # chunks delivered by earlier attempts
    total: int
    report: Delivered | None
    sent: list[str] = field(default_factory=list)

    def nonce(self) -> str | None:
        """None: discord.py draws a random one (a re-send is then a new message)."""
        return nonce(self.key, self.skip + len(self.sent)) if self.key else None

    async def done(self, message_id: int) -> None:
        self.sent.append(str(message_id))
        if self.report is not None:
            await self.report(self.skip + len(self.sent), self.total)


def _view(buttons: tuple[Button, ...], last: bool) -> dict[str, Any]:
    """``view=`` for a send: the buttons ride on the last chunk only."""
    view = make_view(buttons) if last else None
    return {"view": view} if view is not None else {}
