"""The Telegram adapter: python-telegram-bot's ``Application`` behind the ``Adapter`` protocol.

This module is the Application's setup and lifecycle and where updates come in; the rest
is one module each: ``sending`` (sendMessage, files, typing), ``menus`` (setMyCommands,
editMessageText), ``polling`` and ``webhook`` (the two ways updates arrive), ``errors``
(PTB's errors translated, the token kept out of logs).

Lifecycle (``start`` -> ``stop``)::

    ApplicationBuilder().token(...).updater(None)  # base_url/base_file_url only when given
    start: Application.initialize() (getMe: bot id/username; a bad token fails here)
           polling: deleteWebhook(drop_pending_updates=False), then our getUpdates loop
           webhook: aiohttp listener on webhook_listen:webhook_port, then setWebhook
                    (a secret token is required: ``webhook`` says why)
    every update -> Application.process_update -> TypeHandler -> normalize -> sink
    stop:  end the loop (an in-flight long poll is cancelled), confirm the offset of every
           update already handed to the sink, close the listener, Application.shutdown()

``async with adapter:`` guarantees ``stop`` on the way out (``start(sink)`` is still needed).
Polling is our own getUpdates loop (``polling.Poller``; why not ``Updater.start_polling`` is
written there), which reads each update of a batch on its own (``updates.read``); why not
``Updater.start_webhook`` is written in ``webhook``.

Skipped updates (see ``adapters.skips``): one PTB cannot read (polling or webhook) counts as
``unparsable``; one ``normalize`` raises on as ``unnormalisable``. Each is logged with its
``update_id`` and kind, confirmed and skipped; the next update is handled normally. A button
press is answered (answerCallbackQuery) as soon as it arrives, so its spinner stops.

While the adapter runs, its token is registered with ``errors.REDACTOR``: no log line and no
error raised here contains it (see ``errors``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Self

from telegram import Update
from telegram import error as tg
from telegram.ext import Application, ApplicationBuilder, ContextTypes, ExtBot, TypeHandler

from adapters.base import BotCommand, Delivered, Forbidden, Sink, Unavailable
from adapters.messages import Button, InboundMessage, OutboundMessage
from adapters.skips import SkipReason, Skips
from adapters.telegram import menus, sending, updates
from adapters.telegram.errors import REDACTOR, translate
from adapters.telegram.menus import menu_for
from adapters.telegram.normalize import normalize
from adapters.telegram.polling import Poller
from adapters.telegram.webhook import REFUSALS, Listener, Refusal, valid_secret

__all__ = ["TelegramAdapter", "menu_for"]

_LOGGER = logging.getLogger(__name__)
_ALLOWED_UPDATES = ("message", "callback_query")


class TelegramAdapter:
    """The Telegram side of the gateway (see the module docstring)."""

    platform = "telegram"

    def __init__(
        self,
        token: str,
        *,
        base_url: str | None = None,
        base_file_url: str | None = None,
        mode: Literal["polling", "webhook"] = "polling",
        webhook_listen: str = "127.0.0.1",
        webhook_port: int = 8443,
        webhook_url: str | None = None,
        webhook_path: str = "/telegram",
        webhook_secret: str | None = None,
        webhook_max_connections: int = 40,
        poll_timeout: float = 30.0,
        request_timeout: float = 10.0,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        allowed_updates: Sequence[str] = _ALLOWED_UPDATES,
    ) -> None:
        if not token:
            raise ValueError("a Telegram bot token is required")
        if mode not in ("polling", "webhook"):
            raise ValueError(f"mode must be 'polling' or 'webhook', not {mode!r}")
        if mode == "webhook" and not webhook_url:
            raise ValueError("webhook mode needs webhook_url (the public HTTPS URL)")
        if mode == "webhook" and not valid_secret(webhook_secret):
            raise ValueError(
                "webhook mode needs a webhook secret: 1-256 characters of A-Z, a-z, 0-9, _ and -"
            )
        self._token = token
        self._base_url = base_url
        self._base_file_url = base_file_url
        self.mode = mode
        self._webhook_listen = webhook_listen
        self._webhook_port = webhook_port
        self._webhook_url = webhook_url
        self._webhook_path = "/" + webhook_path.lstrip("/")
        self._webhook_secret = webhook_secret
        self._webhook_max_connections = webhook_max_connections
        self._poll_timeout = poll_timeout
        self._request_timeout = request_timeout
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._allowed_updates = list(allowed_updates)
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._sink: Sink | None = None
        self._bot_id = 0
        self._bot_username = ""
        self._connected = False
        self._lifecycle = asyncio.Lock()
        self._poller: Poller | None = None
        self._poll_task: asyncio.Task[None] | None = None
        self._listener: Listener | None = None
        self._skips = Skips(self.platform, _LOGGER)
        self._refused: dict[Refusal, int] = dict.fromkeys(REFUSALS, 0)

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        poller = self._poller
        return self._connected and (poller is None or poller.connected)

    @property
    def poll_failures(self) -> int:
        """Consecutive failed getUpdates calls (0 while polling works)."""
        return 0 if self._poller is None else self._poller.failures

    @property
    def skipped(self) -> Mapping[SkipReason, int]:
        return self._skips.counts

    @property
    def webhook_refused(self) -> Mapping[Refusal, int]:
        """Webhook posts refused (403/400) by reason: ``secret``, ``content_type``, ``body``."""
        return self._refused

    @property
    def bot_username(self) -> str:
        return self._bot_username

    @property
    def webhook_port(self) -> int:
        """The port the webhook listener is bound to (useful with ``webhook_port=0``)."""
        if self._listener is None:
            raise RuntimeError("the webhook listener is not running")
        return self._listener.port

    async def __aenter__(self) -> Self:
        """``async with adapter:`` guarantees ``stop``; ``start(sink)`` is still needed."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self, sink: Sink) -> None:
        """Check the token (getMe), then begin delivering updates to ``sink``."""
        async with self._lifecycle:
            if self._app is not None:
                raise RuntimeError("the Telegram adapter is already started")
            REDACTOR.register(self._token)
            try:
                app = self._build()
            except BaseException:
                REDACTOR.unregister(self._token)
                raise
            try:
                await app.initialize()
                self._bot_id, self._bot_username = app.bot.id, app.bot.username
                app.add_handler(TypeHandler(Update, self._on_update))
                app.add_error_handler(self._on_error)
                await app.start()
                self._app, self._sink = app, sink
                if self.mode == "webhook":
                    self._listener = self._make_listener(app)
                    await self._listener.start()
                else:
                    await app.bot.delete_webhook(drop_pending_updates=False)
                    self._poller = self._make_poller(app)
                    self._poll_task = asyncio.create_task(
                        self._poller.run(), name=f"telegram:{self._bot_username}:poll"
                    )
                self._connected = True
            except tg.TelegramError as exc:
                error = translate(exc, (), "start", token=self._token)  # while registered
                await self._teardown(app)
                raise error from None
            except BaseException:
                await self._teardown(app)
                raise
            where: str = self.mode
            if self._listener is not None:
                where += f" on {self._webhook_listen}:{self._listener.port}{self._webhook_path}"
            _LOGGER.info("telegram: @%s connected (%s)", self._bot_username, where)

    async def stop(self) -> None:
        """Stop receiving updates and shut the application down (idempotent)."""
        async with self._lifecycle:
            app = self._app
            if app is None:
                return
            await self._teardown(app)
            _LOGGER.info("telegram: @%s stopped", self._bot_username)

    async def _teardown(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self._connected = False
        try:
            task, self._poll_task = self._poll_task, None
            poller, self._poller = self._poller, None
            if task is not None and poller is not None:
                poller.stop()
                if poller.fetching:
                    task.cancel()  # an idle long poll; updates it brings back stay unconfirmed
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                await poller.confirm()
            listener, self._listener = self._listener, None
            if listener is not None:
                await listener.close()
            if app.running:
                await app.stop()
        finally:
            with contextlib.suppress(Exception):
                await app.shutdown()
            with contextlib.suppress(Exception):
                await app.bot.shutdown()  # if initialize failed, shutdown() skips the bot
            self._app = self._sink = None
            REDACTOR.unregister(self._token)

    def _build(self) -> Application[Any, Any, Any, Any, Any, Any]:
        timeout = self._request_timeout
        builder = (
            ApplicationBuilder()
            .token(self._token)
            .updater(None)
            .job_queue(None)
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .write_timeout(timeout)
            .pool_timeout(timeout)
            .get_updates_connect_timeout(timeout)
            .get_updates_read_timeout(timeout)
            .get_updates_write_timeout(timeout)
            .get_updates_pool_timeout(timeout)
        )
        if self._base_url is not None:
            builder = builder.base_url(self._base_url)
        if self._base_file_url is not None:
            builder = builder.base_file_url(self._base_file_url)
        return builder.build()

    # -- receiving ---------------------------------------------------------------------

    def _make_poller(self, app: Application[Any, Any, Any, Any, Any, Any]) -> Poller:
        return Poller(
            app.bot,
            handle=app.process_update,
            skips=self._skips,
            redact=REDACTOR.redact,
            allowed_updates=self._allowed_updates,
            poll_timeout=self._poll_timeout,
            request_timeout=self._request_timeout,
            backoff_base=self._backoff_base,
            backoff_cap=self._backoff_cap,
        )

    def _make_listener(self, app: Application[Any, Any, Any, Any, Any, Any]) -> Listener:
        return Listener(
            app,
            skips=self._skips,
            listen=self._webhook_listen,
            port=self._webhook_port,
            path=self._webhook_path,
            url=str(self._webhook_url),
            secret=str(self._webhook_secret),
            max_connections=self._webhook_max_connections,
            allowed_updates=self._allowed_updates,
            refused=self._refused,
        )

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is not None:
            try:
                await query.answer()  # stop the button's spinner at once
            except tg.TelegramError as exc:
                _LOGGER.warning(
                    "telegram: answerCallbackQuery failed: %s", REDACTOR.redact(str(exc))
                )
        try:
            inbound = normalize(update, bot_id=self._bot_id, bot_username=self._bot_username)
        except Exception as exc:  # a shape PTB accepted and we cannot map: skip, never stall
            self._skips.skip(updates.name(update), "unnormalisable", exc)
            return
        if inbound is not None and self._sink is not None:
            await self._sink(inbound)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        error = context.error
        update_id = update.update_id if isinstance(update, Update) else None
        _LOGGER.error(
            "telegram: handling update %s failed",
            update_id,
            exc_info=(type(error), error, error.__traceback__) if error else None,
        )

    # -- the Adapter protocol: sending, menus, edits (``sending``, ``menus``) ----------------

    def _bot(self) -> ExtBot[Any]:
        if self._app is None:
            raise Unavailable("the Telegram adapter is not running")
        bot: ExtBot[Any] = self._app.bot
        return bot

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        """Render, split and send; the ids of the messages sent, in order (``sending``)."""
        return await sending.send(self._bot(), message, token=self._token, delivered=delivered)

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        """Show "typing..." once (Telegram shows it for 5 s or until the next message)."""
        await sending.typing(self._bot(), chat_id, thread_id, token=self._token)

    async def edit(
        self, chat_id: str, message_id: str, text: str, *,
        thread_id: str | None = None, buttons: tuple[Button, ...] = (),
    ) -> None:  # fmt: skip
        """editMessageText, plain; without ``reply_markup`` Telegram drops the keyboard."""
        await menus.edit(self._bot, chat_id, message_id, text, buttons, token=self._token)

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        """Register the menu (``menus.set_commands``): everyone's commands in the default
        scope, and with the admin commands too in each admin's own chat."""
        await menus.set_commands(self._bot, commands, admins, token=self._token)

    async def dismiss(self, message: InboundMessage) -> None:
        """Nothing is held open on Telegram (a press is answered when it arrives)."""

    async def private_chat(self, user_id: str) -> str:
        """A person's private chat with a bot has their user id. Telegram lets the bot write
        there only once they have started it: a send before that is ``Forbidden``."""
        if not user_id.isdigit():  # a message sent as a chat (anonymous admin, channel)
            raise Forbidden(f"telegram: {user_id} is a chat, not a person: no private chat")
        return user_id
