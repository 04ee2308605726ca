"""A loopback fake of the Telegram Bot API, for driving the real python-telegram-bot.

Tests start it on 127.0.0.1 and point PTB at it, so every request crosses real HTTP and is
encoded and parsed by PTB's own code (``HTTPXRequest``, ``BaseRequest`` error mapping,
``Update``/``Message`` de-serialisation)::

    async with FakeBotAPI(token=TOKEN) as api, Bot(TOKEN, base_url=api.base_url) as bot:
        api.push_text(chat=42, sender=42, text="/start")
        [update] = await bot.get_updates(timeout=1)
        await bot.send_message(42, "<b>hi</b>", parse_mode="HTML")
        [sent] = await api.wait_sent(1)
        assert sent.text == "hi" and sent.source == "<b>hi</b>"

``base_url`` is ``http://127.0.0.1:<port>/bot``: PTB appends the token to it (``Bot`` and
``ApplicationBuilder.base_url`` both do), giving ``/bot<token>/<method>``. A wrong token
answers 401 ``Unauthorized`` (PTB: ``InvalidToken``); an unknown method 404 ``Not Found``.

Wire format. PTB posts ``application/x-www-form-urlencoded`` bodies (``multipart/form-data``
when uploading) in which strings are sent as they are and every other value (ints, bools,
``reply_markup``, ``reply_parameters``, ``commands``, ``allowed_updates`` ...) is a JSON
document; JSON bodies and query strings are accepted too, as Telegram does. Answers are
``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code", "description"[,
"parameters"]}`` with the HTTP status equal to ``error_code``, as Telegram sends them.

Methods and the rules they enforce (Telegram's own error texts; implemented in
:mod:`tests.fakes.telegram_methods`):

- ``getMe``; ``getUpdates`` with real long polling: the request is held up to ``timeout``
  seconds and answered as soon as an update is pushed. ``offset`` confirms (drops) every
  earlier update; unconfirmed updates are delivered again on the next call, as Telegram does
  (a negative offset keeps the last ``-offset``). ``limit`` (1-100) and ``allowed_updates``
  (remembered between calls; by default all but ``chat_member``, ``message_reaction`` and
  ``message_reaction_count``) are honoured. A second getUpdates while one is waiting ends the
  first with 409 ``Conflict: terminated by other getUpdates request``; getUpdates while a
  webhook is set answers 409 too.
- ``sendMessage``/``editMessageText``: ``parse_mode=HTML`` is parsed by
  :mod:`tests.fakes.telegram_html` (TDLib's rules: unknown tag, bad nesting ->
  ``Bad Request: can't parse entities: ...``); the visible text is trimmed and measured in
  UTF-16 (> 4096 -> ``message is too long``, blank -> ``message text is empty``);
  ``message_thread_id``, ``reply_parameters`` / ``reply_to_message_id`` (a missing message
  -> ``message to be replied not found`` unless ``allow_sending_without_reply``) and an
  inline ``reply_markup`` (``callback_data`` over 64 bytes -> ``BUTTON_DATA_INVALID``). Other
  parse modes answer ``unsupported parse_mode``. Known chats: once a test registers a chat
  (:meth:`FakeBotAPI.add_chat` or ``known_chats=``), sends to any chat the fake has not seen
  answer ``chat not found``; a chat registered as a forum rejects unknown topic ids with
  ``message thread not found``. A person seen only in groups has not started the bot: a
  send to their private chat answers 403 ``Forbidden: bot can't initiate conversation with
  a user`` until they write to it privately, as on Telegram.
- ``sendChatAction``, ``setMyCommands``/``getMyCommands``/``deleteMyCommands`` (per scope and
  language), ``answerCallbackQuery`` (only for pushed, unanswered queries), ``setWebhook``
  (HTTPS only, secret token charset checked), ``deleteWebhook``, ``getWebhookInfo``;
  ``drop_pending_updates`` drops the queue.

Scripting failures: :meth:`FakeBotAPI.flood` (429 with ``parameters.retry_after``, PTB:
``RetryAfter``), :meth:`FakeBotAPI.blocked` (403 ``Forbidden: bot was blocked by the user``),
:meth:`FakeBotAPI.fail` (any status/description for a method, optionally for one chat; e.g.
502 for PTB's ``NetworkError``) and :meth:`FakeBotAPI.hang` (hold the answer to trip client
timeouts). Scripted faults are consumed in order, ``times`` answers each; ``after=n`` lets
the first n matching calls through (a flood on the second chunk of a reply, say).

Pushing updates: :meth:`push_text` builds a realistic ``message`` update (private chat,
group, supergroup or forum topic, with ``bot_command``/``mention`` entities detected as
Telegram does, replies to user or bot messages, and the topic-root ``reply_to_message``
Telegram adds to topic messages), :meth:`push_callback` a ``callback_query`` on a bot
message (only on a button it shows, carrying the message as it is after any edit),
:meth:`push_raw` any update dict, malformed ones included (``"date": "yesterday"``,
a ``chat`` that is not an object: served exactly as given); :meth:`redeliver` queues an
update again under the same ``update_id``, as after a restart that never confirmed it.
``push_raw(..., served_update_id=OMIT | value)`` serves an update without its
``update_id``, or with another value (``"ten"``): a schema Telegram never breaks, but a
broken server or proxy might. The queue still orders and confirms it by the id it was given,
as Telegram's own queue would; :attr:`pending_updates` shows that id.

Inspecting: :attr:`sent` (every accepted sendMessage as :class:`SentMessage`), :attr:`edits`,
:attr:`calls` (every request as :class:`Call`: method, params, status, monotonic time),
:meth:`wait_sent`, :meth:`wait_calls`, :meth:`wait_for`, :attr:`commands`, :attr:`webhook`,
:attr:`answered_callbacks`.

Bounded: no task outlives the ``async with``; leaving it wakes every long poll and hang,
closes the listening socket and every connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer, serve
from tests.fakes.telegram_html import utf16_len
from tests.fakes.telegram_methods import (
    METHODS,
    OMIT,
    ApiError,
    BotAPIMethods,
    Call,
    SentMessage,
    Signal,
    answer_error,
    chat_id_of,
    read_params,
)

__all__ = ["DEFAULT_TOKEN", "OMIT", "Call", "FakeBotAPI", "SentMessage"]

DEFAULT_TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijkl"

_DETECT = re.compile(
    r"(?<![\w/@])(/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?|@[A-Za-z0-9_]{4,32})"
)
_STATUS_TEXT = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass
class _Fault:
    method: str
    chat_id: int | None
    status: int | None  # None: a hang that then answers normally
    description: str
    retry_after: int | None = None
    hang: float | None = None  # seconds; inf = until the server closes
    times: int = 1
    after: int = 0  # matching calls let through before the fault starts


class FakeBotAPI(BotAPIMethods, LoopbackServer):
    """The fake server; ``async with FakeBotAPI() as api:`` runs it on an ephemeral port."""

    name = "the fake Bot API"

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_id: int | None = None,
        username: str = "mnemo_test_bot",
        first_name: str = "Mnemo",
        known_chats: Iterable[int] = (),
        shutdown_timeout: float = 1.0,
    ) -> None:
        prefix = token.split(":", 1)[0]
        self.token = token
        self.bot_id = bot_id if bot_id is not None else int(prefix) if prefix.isdigit() else 1000
        self.username = username
        self.first_name = first_name
        self.sent: list[SentMessage] = []
        self.edits: list[SentMessage] = []
        self.calls: list[Call] = []
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}
        self.webhook: dict[str, Any] = {}
        self.answered_callbacks: dict[str, dict[str, Any]] = {}
        self.chats: dict[int, dict[str, Any]] = {}
        self.strict_chats = False
        self._topics: dict[int, set[int]] = {}
        self._messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._pending: list[dict[str, Any]] = []
        self._served: dict[int, Any] = {}  # update_id -> what getUpdates sends instead
        self._update_ids = itertools.count(700_000_001)
        self._callback_ids = itertools.count(1)
        self._open_callbacks: set[str] = set()
        self._allowed: frozenset[str] | None = None
        self._faults: list[_Fault] = []
        self._blocked: set[int] = set()
        self._group_members: set[int] = set()  # seen in groups (not always in private)
        self._poll_generation = 0
        self._updates_signal = Signal()
        self._calls_signal = Signal()
        self._closing = asyncio.Event()
        self._shutdown_timeout = shutdown_timeout
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        for chat_id in known_chats:
            self.add_chat(chat_id)

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("FakeBotAPI is already running")
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        runner, self._port = await serve(app, shutdown_timeout=self._shutdown_timeout)
        self._closing.clear()
        self._runner = runner

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._closing.set()
        self._updates_signal.fire()
        await runner.cleanup()

    @property
    def port(self) -> int:
        if self._port is None or self._runner is None:
            raise RuntimeError("FakeBotAPI is not running")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/bot``: PTB appends the token."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/file/bot"

    # -- scripting failures ------------------------------------------------------------

    def fail(
        self,
        method: str,
        status: int = 500,
        description: str | None = None,
        *,
        times: int = 1,
        chat_id: int | None = None,
        retry_after: int | None = None,
        after: int = 0,
    ) -> None:
        """The next ``times`` calls of ``method`` (to ``chat_id``, if given) answer ``status``,
        once ``after`` matching calls have gone through normally."""
        text = description or _STATUS_TEXT.get(status, f"Error {status}")
        self._faults.append(
            _Fault(method.lower(), chat_id, status, text, retry_after, None, times, after)
        )

    def hang(
        self,
        method: str,
        seconds: float | None = None,
        *,
        times: int = 1,
        chat_id: int | None = None,
        after: int = 0,
    ) -> None:
        """Hold the next ``times`` calls of ``method`` (to ``chat_id``, if given) ``seconds``
        (None: until close, then 503: never carried out), once ``after`` matching calls have
        gone through; then answer them normally (if the client is still there)."""
        hold = float("inf") if seconds is None else seconds
        self._faults.append(_Fault(method.lower(), chat_id, None, "", None, hold, times, after))

    def flood(self, chat_id: int, retry_after: int = 3, *, times: int = 1, after: int = 0) -> None:
        """The next ``times`` sendMessage calls to ``chat_id`` hit flood control (429), once
        ``after`` of them have gone through."""
        self.fail(
            "sendMessage",
            429,
            f"Too Many Requests: retry after {retry_after}",
            times=times,
            chat_id=chat_id,
            retry_after=retry_after,
            after=after,
        )

    def blocked(self, chat_id: int) -> None:
        """The user blocked the bot: every send to ``chat_id`` answers 403 from now on."""
        self._blocked.add(chat_id)

    def unblock(self, chat_id: int) -> None:
        self._blocked.discard(chat_id)

    # -- chats and users ---------------------------------------------------------------

    @staticmethod
    def user(
        user_id: int,
        first_name: str | None = None,
        last_name: str | None = None,
        *,
        username: str | None = None,
        is_bot: bool = False,
        language_code: str | None = "en",
    ) -> dict[str, Any]:
        """A Bot API ``User`` dict."""
        user: dict[str, Any] = {
            "id": user_id,
            "is_bot": is_bot,
            "first_name": first_name or f"User{user_id}",
        }
        if last_name:
            user["last_name"] = last_name
        if username:
            user["username"] = username
        if language_code and not is_bot:
            user["language_code"] = language_code
        return user

    def add_chat(
        self,
        chat_id: int,
        *,
        chat_type: str | None = None,
        title: str | None = None,
        is_forum: bool = False,
        topics: Iterable[int] = (),
    ) -> dict[str, Any]:
        """Register a chat; from then on sends to chats never seen answer ``chat not found``."""
        self.strict_chats = True
        kind = chat_type or ("private" if chat_id > 0 else "supergroup")
        chat: dict[str, Any] = {"id": chat_id, "type": kind}
        if kind == "private":
            chat["first_name"] = f"User{chat_id}"
        else:
            chat["title"] = title or f"Chat {chat_id}"
        if is_forum:
            chat["is_forum"] = True
            self._topics.setdefault(chat_id, set()).update(topics)
        self.chats[chat_id] = chat
        return chat

    def _chat_for(
        self, chat: int | Mapping[str, Any], sender: dict[str, Any], chat_type: str, forum: bool
    ) -> dict[str, Any]:
        if isinstance(chat, Mapping):
            found = dict(chat)
        elif chat in self.chats:
            found = dict(self.chats[chat])
        elif chat_type == "private":
            found = {"id": chat, "type": "private", "first_name": sender["first_name"]}
            for key in ("last_name", "username"):
                if key in sender:
                    found[key] = sender[key]
        else:
            found = {"id": chat, "type": chat_type, "title": f"Chat {chat}"}
        if forum:
            found["is_forum"] = True
        self.chats.setdefault(found["id"], found)
        return found

    def message(self, chat_id: int, message_id: int) -> dict[str, Any]:
        """A message the fake knows (pushed or sent), as a Bot API dict."""
        return copy.deepcopy(self._messages[(chat_id, message_id)])

    # -- pushing updates ---------------------------------------------------------------

    def push_raw(
        self, update: Mapping[str, Any], *, served_update_id: Any = None
    ) -> dict[str, Any]:
        """Queue an update dict as it is (an ``update_id`` is assigned if missing; it orders
        and confirms the update). ``served_update_id``: what getUpdates sends in its place
        (``OMIT``: no ``update_id`` at all); None sends the real one."""
        stored = copy.deepcopy(dict(update))
        if "update_id" not in stored:
            stored["update_id"] = next(self._update_ids)
        if served_update_id is not None:
            self._served[int(stored["update_id"])] = served_update_id
        self._enqueue(stored)
        return copy.deepcopy(stored)

    def redeliver(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """Queue ``update`` again under the same ``update_id`` (never confirmed before a
        restart, so Telegram sends it again)."""
        if "update_id" not in update:
            raise ValueError("redeliver needs an update that has an update_id")
        return self.push_raw(update)

    def _enqueue(self, update: dict[str, Any]) -> None:
        self._pending = [u for u in self._pending if u["update_id"] != update["update_id"]]
        self._pending.append(update)
        self._pending.sort(key=lambda u: int(u["update_id"]))
        self._updates_signal.fire()

    def push_text(
        self,
        chat: int | Mapping[str, Any],
        sender: int | Mapping[str, Any],
        text: str,
        *,
        chat_type: str = "private",
        thread_id: int | None = None,
        reply_to: int | Mapping[str, Any] | SentMessage | None = None,
        entities: list[dict[str, Any]] | None = None,
        caption: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Push a ``message`` update with ``text`` from ``sender`` in ``chat``.

        ``chat``/``sender``: an id or a full Bot API dict. ``chat_type``: ``private``,
        ``group`` or ``supergroup``; ``thread_id`` makes it a forum-topic message (the chat
        becomes a forum). ``reply_to``: a message dict, a :class:`SentMessage`, or the id of
        a message the fake knows in that chat (a bot message, say). ``entities``: None
        detects ``bot_command`` and ``mention`` entities as Telegram does; pass a list to
        set them. ``caption=True`` sends ``text`` as a caption (merge the media with
        ``extra``, e.g. ``extra={"photo": [...]}``).
        """
        user = self.user(sender) if isinstance(sender, int) else dict(sender)
        chat_obj = self._chat_for(chat, user, chat_type, forum=thread_id is not None)
        chat_id = int(chat_obj["id"])
        if chat_obj["type"] != "private":
            self._group_members.add(int(user["id"]))
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat_id),
            "from": user,
            "chat": chat_obj,
            "date": int(time.time()),
        }
        if thread_id is not None:
            self._topics.setdefault(chat_id, set()).add(thread_id)
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        key = "caption" if caption else "text"
        if text:
            message[key] = text
            found = _detect_entities(text) if entities is None else entities
            if found:
                message["caption_entities" if caption else "entities"] = found
        replied = self._replied(chat_id, reply_to)
        if replied is None and thread_id is not None:
            replied = self._topic_root(chat_obj, thread_id)
        if replied is not None:
            message["reply_to_message"] = replied
        message.update(extra or {})
        self._messages[(chat_id, message["message_id"])] = message
        return self.push_raw({"message": message})

    def push_callback(
        self,
        chat: int | Mapping[str, Any],
        sender: int | Mapping[str, Any],
        data: str,
        message_id: int,
    ) -> dict[str, Any]:
        """Push a ``callback_query``: ``sender`` pressed a button with ``data`` under the
        message ``message_id`` of ``chat`` (normally one the bot sent), which the query
        carries as it is now. Only a button the message shows now can be pressed
        (``LookupError`` otherwise), as in Telegram's apps; a message the fake does not know
        is made up, with any data."""
        user = self.user(sender) if isinstance(sender, int) else dict(sender)
        chat_id = int(chat["id"]) if isinstance(chat, Mapping) else chat
        message = self._messages.get((chat_id, message_id))
        rows = ((message or {}).get("reply_markup") or {}).get("inline_keyboard") or []
        if message is not None and data not in [b.get("callback_data") for r in rows for b in r]:
            raise LookupError(f"message {message_id} in {chat_id} shows no button {data!r}")
        if message is None:
            chat_obj = self._chat_for(chat, user, "private" if chat_id > 0 else "supergroup", False)
            message = {
                "message_id": message_id,
                "from": self.bot_user,
                "chat": chat_obj,
                "date": int(time.time()),
                "text": "(message)",
            }
        query_id = f"{self.bot_id}{next(self._callback_ids):08d}"
        self._open_callbacks.add(query_id)
        query = {
            "id": query_id,
            "from": user,
            "message": copy.deepcopy(message),
            "chat_instance": f"-{abs(chat_id)}77",
            "data": data,
        }
        return self.push_raw({"callback_query": query})

    def _replied(
        self, chat_id: int, reply_to: int | Mapping[str, Any] | SentMessage | None
    ) -> dict[str, Any] | None:
        if reply_to is None:
            return None
        if isinstance(reply_to, SentMessage):
            reply_to = reply_to.message_id
        if isinstance(reply_to, int):
            if (chat_id, reply_to) not in self._messages:
                raise KeyError(f"the fake knows no message {reply_to} in chat {chat_id}")
            replied = copy.deepcopy(self._messages[(chat_id, reply_to)])
        else:
            replied = copy.deepcopy(dict(reply_to))
        replied.pop("reply_to_message", None)  # Telegram nests only one level
        return replied

    def _topic_root(self, chat: dict[str, Any], thread_id: int) -> dict[str, Any]:
        """Telegram makes every topic message a reply to the topic's creation message."""
        return {
            "message_id": thread_id,
            "from": self.user(thread_id + 1_000_000, "Topic", "Creator"),
            "chat": chat,
            "date": int(time.time()) - 3600,
            "message_thread_id": thread_id,
            "forum_topic_created": {"name": f"Topic {thread_id}", "icon_color": 7322096},
            "is_topic_message": True,
        }

    # -- waiting -----------------------------------------------------------------------

    async def wait_sent(
        self,
        n: int = 1,
        *,
        chat_id: int | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 -- a deadline, as in asyncio.wait_for
    ) -> list[SentMessage]:
        """The first ``n`` accepted sendMessage calls (to ``chat_id``), waiting for them."""

        def matching() -> list[SentMessage]:
            return [s for s in self.sent if chat_id is None or s.chat_id == chat_id]

        await self._wait_until(lambda: len(matching()) >= n, timeout)
        return matching()[:n]

    async def wait_calls(
        self,
        method: str,
        n: int = 1,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 -- a deadline, as in asyncio.wait_for
    ) -> list[Call]:
        """The first ``n`` answered calls of ``method``, waiting for them."""

        def matching() -> list[Call]:
            wanted = method.lower()
            return [c for c in self.calls if c.method.lower() == wanted and c.status is not None]

        await self._wait_until(lambda: len(matching()) >= n, timeout)
        return matching()[:n]

    async def wait_for(self, done: Callable[[], bool], timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Wait until ``done()`` holds (checked after every request), at most ``timeout``."""
        await self._wait_until(done, timeout)

    async def _wait_until(self, done: Callable[[], bool], seconds: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not done():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(
                    f"gave up after {seconds} s; calls so far: {[c.method for c in self.calls]}"
                )
            await self._calls_signal.wait(remaining)

    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method.lower() == method.lower()]

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """Updates queued and not confirmed yet."""
        return copy.deepcopy(self._pending)

    # -- HTTP --------------------------------------------------------------------------

    async def _not_found(self, request: web.Request) -> web.Response:
        return answer_error(ApiError(404, "Not Found"))

    async def _handle(self, request: web.Request) -> web.Response:
        params = await read_params(request)
        name = request.match_info["method"]
        handler = METHODS.get(name.lower())
        call = Call(method=handler[0] if handler else name, params=params, time=time.monotonic())
        self.calls.append(call)
        try:
            if request.match_info["token"] != self.token:
                raise ApiError(401, "Unauthorized")
            if handler is None:
                raise ApiError(404, "Not Found")
            await self._apply_faults(call)
            result = await handler[1](self, params)
        except ApiError as error:
            call.status, call.description = error.status, error.description
            self._calls_signal.fire()
            return answer_error(error)
        call.status = 200
        self._calls_signal.fire()
        return web.json_response({"ok": True, "result": result})

    async def _apply_faults(self, call: Call) -> None:
        chat_id = chat_id_of(call.params.get("chat_id"))
        for fault in self._faults:
            if fault.method != call.method.lower() or fault.times <= 0:
                continue
            if fault.chat_id is not None and fault.chat_id != chat_id:
                continue
            if fault.after > 0:
                fault.after -= 1
                return
            fault.times -= 1
            self._faults = [f for f in self._faults if f.times > 0]
            if fault.hang is not None:
                timeout = None if fault.hang == float("inf") else fault.hang
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), timeout)
                if self._closing.is_set():
                    raise ApiError(503, "Service Unavailable: shutting down")
                return
            parameters = {"retry_after": fault.retry_after} if fault.retry_after else None
            raise ApiError(fault.status or 500, fault.description, parameters)


# -- helpers -------------------------------------------------------------------------------


def _detect_entities(text: str) -> list[dict[str, Any]]:
    """``bot_command`` and ``mention`` entities where Telegram's clients detect them."""
    entities = []
    for match in _DETECT.finditer(text):
        token = match.group(1)
        kind = "bot_command" if token.startswith("/") else "mention"
        if kind == "mention" and len(token) < 5:
            continue
        entities.append(
            {
                "type": kind,
                "offset": utf16_len(text[: match.start(1)]),
                "length": utf16_len(token),
            }
        )
    return entities
