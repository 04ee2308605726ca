"""The Telegram adapter: python-telegram-bot's ``Application`` behind the ``Adapter`` protocol.

Lifecycle (``start`` -> ``stop``)::

    ApplicationBuilder().token(...).updater(None)  # base_url/base_file_url only when given
    start: Application.initialize() (getMe: bot id/username; a bad token fails here)
           polling: deleteWebhook(drop_pending_updates=False), then our getUpdates loop
           webhook: aiohttp listener on webhook_listen:webhook_port, then setWebhook
    every update -> Application.process_update -> TypeHandler -> normalize -> sink
    stop:  end the loop (an in-flight long poll is cancelled), confirm the offset of every
           update already handed to the sink, close the listener, Application.shutdown()

Polling is our own getUpdates loop (``polling.Poller``; why not ``Updater.start_polling``
is written there), which reads each update of a batch on its own (``updates.read``).

Why not ``Updater.start_webhook``: it needs the ``python-telegram-bot[webhooks]`` extra
(tornado), which is not a dependency. aiohttp (already installed with discord.py) serves the
webhook instead, with PTB's handler rules: POST with ``Content-Type: application/json``, the
``X-Telegram-Bot-Api-Secret-Token`` header compared in constant time (403 otherwise), 400 for
a body that is not JSON, 200 once the sink has it. Unlike PTB's handler (400), a JSON body
that is not a usable update gets 200: Telegram retries every non-2xx delivery, and one that
can never be read would come back forever.

Skipped updates (see ``adapters.skips``): one PTB cannot read (polling or webhook) counts as
``unparsable``; one ``normalize`` raises on as ``unnormalisable``. Each is logged with its
``update_id`` and kind, confirmed and skipped; the next update is handled normally.

Sending never retries or waits: there is no ``AIORateLimiter``; a 429 becomes
``RateLimited(retry_after, sent=...)`` at once and the gateway waits for that chat only.
Errors are translated into the ``adapters.base`` family (``RetryAfter`` -> ``RateLimited``,
``Forbidden``/bad token -> ``Forbidden``, "chat not found"/"message thread not found"/
``ChatMigrated`` -> ``NotFound``, other ``BadRequest`` -> ``BadRequest``, network trouble,
timeouts and 5xx -> ``Unavailable``), always with the ids already sent. When Telegram
cannot parse a chunk's HTML, that chunk is sent again as its plain Markdown source. ``edit``
(editMessageText) takes an edit that changes nothing ("message is not modified") as done.

Secrets: PTB puts the token in every request URL, which httpx logs at INFO
(``HTTP Request: POST https://api.telegram.org/bot<token>/getMe ...``), in a DEBUG line of
``Bot.__init__`` and in the message of the ``InvalidToken`` that ``Bot.initialize`` raises.
While an adapter runs, a filter on the ``httpx``, ``httpcore``, ``telegram.*`` and our own
loggers replaces the token in messages and tracebacks (the ``httpx`` level is left alone:
other clients share that logger), and every exception raised here is built from redacted
text with its cause suppressed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from typing import Any, Literal, TypeVar

from aiohttp import web
from telegram import (
    BotCommand as TgBotCommand,
)
from telegram import (
    BotCommandScopeChat,
    InputFile,
    Message,
    ReplyParameters,
    Update,
)
from telegram import error as tg
from telegram.constants import ChatAction
from telegram.ext import Application, ApplicationBuilder, ContextTypes, ExtBot, TypeHandler

from adapters.base import (
    BadRequest,
    BotCommand,
    Delivered,
    Forbidden,
    NotFound,
    PlatformError,
    RateLimited,
    Sink,
    Unavailable,
)
from adapters.chunking import REPLY_FILE, file_caption, fold
from adapters.messages import Button, InboundMessage, OutboundMessage
from adapters.skips import SkipReason, Skips
from adapters.telegram import updates
from adapters.telegram.normalize import normalize
from adapters.telegram.polling import Poller, retry_after
from adapters.telegram.render import Chunk, keyboard, render

__all__ = ["TelegramAdapter", "menu_for"]

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")
_ALLOWED_UPDATES = ("message", "callback_query")
_PARSE_FAILURES = ("can't parse entities", "message text is empty")
_GONE = ("chat not found", "thread not found", "message to edit not found")
_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 -- a header name


class _TokenRedactor(logging.Filter):
    """Replaces registered tokens in log records (message, arguments and traceback)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: Counter[str] = Counter()

    def redact(self, text: str) -> str:
        for token in self.tokens:
            text = text.replace(token, "<token>")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.tokens:
            return True
        with contextlib.suppress(Exception):
            message = record.getMessage()
            redacted = self.redact(message)
            if redacted != message:
                record.msg, record.args = redacted, ()
            if record.exc_info:
                formatted = logging.Formatter().formatException(record.exc_info)
                record.exc_text, record.exc_info = self.redact(formatted), None
            elif record.exc_text:
                record.exc_text = self.redact(record.exc_text)
        return True

    def register(self, token: str) -> None:
        names = [n for n in logging.root.manager.loggerDict if n.startswith("telegram")]
        for name in ["httpx", "httpcore", __name__, Poller.__module__, *names]:
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)
        self.tokens[token] += 1

    def unregister(self, token: str) -> None:
        self.tokens[token] -= 1
        if self.tokens[token] <= 0:
            del self.tokens[token]


_REDACTOR = _TokenRedactor()


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
        self._runner: web.AppRunner | None = None
        self._skips = Skips(self.platform, _LOGGER)

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
    def bot_username(self) -> str:
        return self._bot_username

    @property
    def webhook_port(self) -> int:
        """The port the webhook listener is bound to (useful with ``webhook_port=0``)."""
        if self._runner is None or not self._runner.addresses:
            raise RuntimeError("the webhook listener is not running")
        return int(self._runner.addresses[0][1])

    async def __aenter__(self) -> TelegramAdapter:
        """``async with adapter:`` guarantees ``stop``; ``start(sink)`` is still needed."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self, sink: Sink) -> None:
        """Check the token (getMe), then begin delivering updates to ``sink``."""
        async with self._lifecycle:
            if self._app is not None:
                raise RuntimeError("the Telegram adapter is already started")
            _REDACTOR.register(self._token)
            try:
                app = self._build()
            except BaseException:
                _REDACTOR.unregister(self._token)
                raise
            try:
                await app.initialize()
                self._bot_id, self._bot_username = app.bot.id, app.bot.username
                app.add_handler(TypeHandler(Update, self._on_update))
                app.add_error_handler(self._on_error)
                await app.start()
                self._app, self._sink = app, sink
                if self.mode == "webhook":
                    await self._start_webhook(app)
                else:
                    await app.bot.delete_webhook(drop_pending_updates=False)
                    self._poller = self._make_poller(app)
                    self._poll_task = asyncio.create_task(
                        self._poller.run(), name=f"telegram:{self._bot_username}:poll"
                    )
                self._connected = True
            except tg.TelegramError as exc:
                error = self._translate(exc, (), "start")  # while the token is registered
                await self._teardown(app)
                raise error from None
            except BaseException:
                await self._teardown(app)
                raise
            _LOGGER.info("telegram: @%s connected (%s)", self._bot_username, self.mode)

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
            runner, self._runner = self._runner, None
            if runner is not None:
                await runner.cleanup()
            if app.running:
                await app.stop()
        finally:
            with contextlib.suppress(Exception):
                await app.shutdown()
            with contextlib.suppress(Exception):
                await app.bot.shutdown()  # if initialize failed, shutdown() skips the bot
            self._app = self._sink = None
            _REDACTOR.unregister(self._token)

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
            redact=_REDACTOR.redact,
            allowed_updates=self._allowed_updates,
            poll_timeout=self._poll_timeout,
            request_timeout=self._request_timeout,
            backoff_base=self._backoff_base,
            backoff_cap=self._backoff_cap,
        )

    async def _start_webhook(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        listener = web.Application()
        listener.router.add_post(self._webhook_path, self._on_webhook)
        runner = web.AppRunner(listener, access_log=None)
        await runner.setup()
        self._runner = runner
        site = web.TCPSite(runner, self._webhook_listen, self._webhook_port)
        await site.start()
        await app.bot.set_webhook(
            url=str(self._webhook_url),
            allowed_updates=self._allowed_updates,
            drop_pending_updates=False,
            max_connections=self._webhook_max_connections,
            secret_token=self._webhook_secret,
        )

    async def _on_webhook(self, request: web.Request) -> web.Response:
        app = self._app
        if app is None:
            return web.Response(status=503)
        if request.content_type != "application/json":
            return web.Response(status=403)
        if self._webhook_secret is not None:
            given = request.headers.get(_SECRET_HEADER, "")
            if not hmac.compare_digest(given.encode(), self._webhook_secret.encode()):
                return web.Response(status=403)
        try:
            data = json.loads(await request.read())
        except ValueError:
            _LOGGER.warning("telegram: the webhook received a body that is not JSON")
            return web.Response(status=400)
        try:
            update = updates.read(data, app.bot)
        except Exception as exc:  # acknowledged: Telegram would retry it forever
            self._skips.skip(updates.name(data), "unparsable", exc)
            return web.Response(status=200)
        await app.process_update(update)
        return web.Response(status=200)

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is not None:
            try:
                await query.answer()  # stop the button's spinner at once
            except tg.TelegramError as exc:
                _LOGGER.warning(
                    "telegram: answerCallbackQuery failed: %s", _REDACTOR.redact(str(exc))
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

    # -- sending -----------------------------------------------------------------------

    def _bot(self) -> ExtBot[Any]:
        if self._app is None:
            raise Unavailable("the Telegram adapter is not running")
        bot: ExtBot[Any] = self._app.bot
        return bot

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        """Render, split and send; the ids of the messages sent, in order. Past
        ``max_chunks`` the whole text goes as a Markdown file (``fold``). Telegram has no
        idempotency key: a chunk in flight when the process dies may arrive twice."""
        bot = self._bot()
        chat_id = _chat_id(message.chat_id)
        thread_id = _thread_id(message.thread_id)
        chunks = render(message)
        kept, as_file = fold(len(chunks), message.max_chunks)
        total = kept + as_file
        sent: list[str] = []
        for index in range(total):
            if index < message.skip_chunks:
                continue
            reply = None
            reply_to = message.reply_to_message_id
            if index == 0 and reply_to and reply_to.isdigit():  # a callback's query id is not
                reply = ReplyParameters(message_id=int(reply_to), allow_sending_without_reply=True)
            try:
                if index < kept:
                    posted = await self._send_chunk(bot, chat_id, thread_id, chunks[index], reply)
                else:
                    posted = await self._send_file(bot, chat_id, thread_id, message, reply)
            except tg.TelegramError as exc:
                raise self._translate(exc, sent, "sendMessage") from None
            sent.append(str(posted.message_id))
            if delivered is not None:
                await delivered(index + 1, total)
        return sent

    async def _send_file(
        self,
        bot: ExtBot[Any],
        chat_id: int | str,
        thread_id: int | None,
        message: OutboundMessage,
        reply: ReplyParameters | None,
    ) -> Message:
        """The whole reply as ``reply.md`` (sendDocument), with the buttons, if any."""
        return await bot.send_document(
            chat_id,
            InputFile(message.text.encode("utf-8"), filename=REPLY_FILE),
            caption=file_caption(message.text),
            message_thread_id=thread_id,
            reply_parameters=reply,
            reply_markup=keyboard(message.buttons),
        )

    async def _send_chunk(
        self,
        bot: ExtBot[Any],
        chat_id: int | str,
        thread_id: int | None,
        chunk: Chunk,
        reply: ReplyParameters | None,
    ) -> Message:
        markup = keyboard(chunk.buttons)

        def attempt(text: str, parse_mode: str | None) -> Coroutine[Any, Any, Message]:
            return bot.send_message(
                chat_id,
                text,
                parse_mode=parse_mode,
                message_thread_id=thread_id,
                reply_parameters=reply,
                reply_markup=markup,
            )

        try:
            return await attempt(chunk.text, chunk.parse_mode)
        except tg.BadRequest as exc:
            lowered = exc.message.lower()
            if chunk.parse_mode is None or not any(p in lowered for p in _PARSE_FAILURES):
                raise
            _LOGGER.warning(
                "telegram: HTML refused (%s); sending the chunk as plain text", exc.message
            )
            return await attempt(chunk.fallback, None)

    async def edit(
        self, chat_id: str, message_id: str, text: str, *,
        thread_id: str | None = None, buttons: tuple[Button, ...] = (),
    ) -> None:  # fmt: skip
        """editMessageText, plain; without ``reply_markup`` Telegram drops the keyboard."""
        if not message_id.isdigit():
            raise BadRequest(f"telegram: a message id is a number, not {message_id!r}")
        try:
            await self._bot().edit_message_text(
                text, chat_id=_chat_id(chat_id), message_id=int(message_id),
                reply_markup=keyboard(buttons),
            )  # fmt: skip
        except tg.BadRequest as exc:
            if "message is not modified" not in exc.message.lower():  # else: already so
                raise self._translate(exc, (), "editMessageText") from None
        except tg.TelegramError as exc:
            raise self._translate(exc, (), "editMessageText") from None

    async def dismiss(self, message: InboundMessage) -> None:
        """Nothing is held open on Telegram (a press is answered when it arrives)."""

    async def private_chat(self, user_id: str) -> str:
        """A person's private chat with a bot has their user id. Telegram lets the bot write
        there only once they have started it: a send before that is ``Forbidden``."""
        if not user_id.isdigit():  # a message sent as a chat (anonymous admin, channel)
            raise Forbidden(f"telegram: {user_id} is a chat, not a person: no private chat")
        return user_id

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        """Show "typing..." once (Telegram shows it for 5 s or until the next message)."""
        await self._call(
            self._bot().send_chat_action(
                _chat_id(chat_id), ChatAction.TYPING, message_thread_id=_thread_id(thread_id)
            ),
            "sendChatAction",
        )

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        """Register the menu (``menu_for``): everyone's commands in the default scope, and
        with the admin commands too in each admin's own chat (``BotCommandScopeChat``).
        An admin who has not started the bot yet has no chat to scope: that is logged."""
        everyone = menu_for([c for c in commands if not c.admin])
        await self._call(self._bot().set_my_commands(everyone), "setMyCommands")
        full = menu_for(commands)
        for admin in admins:
            if not admin.isdigit():
                continue
            try:
                await self._call(
                    self._bot().set_my_commands(full, scope=BotCommandScopeChat(int(admin))),
                    "setMyCommands",
                )
            except PlatformError as exc:
                _LOGGER.warning("telegram: no admin menu for admin %s yet: %s", admin, exc)

    async def _call(self, call: Awaitable[_T], action: str) -> _T:
        try:
            return await call
        except tg.TelegramError as exc:
            raise self._translate(exc, (), action) from None

    def _translate(self, exc: tg.TelegramError, sent: Sequence[str], action: str) -> PlatformError:
        """The ``adapters.base`` error for a PTB error, its text free of the token."""
        error = _translate(exc, sent, action)
        message = str(error).replace(self._token, "<token>")
        if message != str(error):
            error.args = (message,)
        return error


_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")


def menu_for(commands: Sequence[BotCommand]) -> list[TgBotCommand]:
    """Telegram menu entries: names take only ``[a-z0-9_]{1,32}``, so ``-`` and ``.`` are
    spelled ``_`` (``rotate-logs`` -> ``/rotate_logs``, which the gateway maps back); a
    name still unusable, or taken already, stays out of the menu (typed, it still works).
    At most 100 entries, descriptions cut to 256 characters."""
    menu: dict[str, TgBotCommand] = {}
    for command in commands:
        name = command.name.lower().replace("-", "_").replace(".", "_")
        if _COMMAND_NAME.fullmatch(name) and name not in menu:
            menu[name] = TgBotCommand(name, (command.description or name)[:256])
    return list(menu.values())[:100]


def _chat_id(value: str) -> int | str:
    """Telegram chat ids are integers; ``@channelname`` stays a string."""
    try:
        return int(value)
    except ValueError:
        return value


def _thread_id(value: str | None) -> int | None:
    if not value:
        return None
    if not value.isdigit():
        raise BadRequest(f"telegram: a message thread id is a number, not {value!r}")
    return int(value)


def _translate(exc: tg.TelegramError, sent: Sequence[str], action: str) -> PlatformError:
    """The ``adapters.base`` error for a PTB error; messages are redacted."""
    text = f"telegram {action}: {_REDACTOR.redact(exc.message)}"
    if isinstance(exc, tg.RetryAfter):
        seconds = retry_after(exc)
        return RateLimited(
            f"telegram {action}: flood control, retry in {seconds:g} s", seconds, sent=sent
        )
    if isinstance(exc, tg.InvalidToken):
        return Forbidden(f"telegram {action}: the bot token was rejected (Unauthorized)", sent=sent)
    if isinstance(exc, tg.ChatMigrated):
        return NotFound(
            f"telegram {action}: the group is now the supergroup {exc.new_chat_id}", sent=sent
        )
    if isinstance(exc, tg.Forbidden):
        return Forbidden(text, sent=sent)
    if isinstance(exc, tg.BadRequest):  # before NetworkError: BadRequest subclasses it
        lowered = exc.message.lower()
        if any(gone in lowered for gone in _GONE):
            return NotFound(text, sent=sent)
        return BadRequest(text, sent=sent)
    if isinstance(exc, tg.EndPointNotFound):
        return BadRequest(text, sent=sent)
    return Unavailable(text, sent=sent)  # NetworkError, TimedOut, Conflict, bad responses
