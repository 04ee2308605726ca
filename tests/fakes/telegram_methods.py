"""The Bot API methods of the fake server, and its wire format (see ``telegram_server``).

``BotAPIMethods`` is a mixin holding one coroutine per method (``getMe``, ``getUpdates``,
``sendMessage`` ...) over the state ``FakeBotAPI`` owns; ``METHODS`` maps lower-cased names
(Telegram's method names are case-insensitive) to them. A method returns the ``result`` of
the answer or raises :class:`ApiError`, which becomes ``{"ok": false, "error_code",
"description"[, "parameters"]}`` with the same HTTP status, as Telegram answers.

``read_params`` reads a request as Telegram does: query string plus a form, multipart or JSON
body; values arrive as strings (PTB JSON-encodes everything but strings) and are coerced by
field name (ints, floats, bools, and JSON for ``reply_markup``, ``commands`` ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

from tests.fakes.telegram_html import HtmlError, parse_html, trim, utf16_len

__all__ = [
    "METHODS",
    "OMIT",
    "ApiError",
    "BotAPIMethods",
    "Call",
    "SentMessage",
    "Signal",
    "answer_error",
    "chat_id_of",
    "read_params",
]

MAX_TEXT = 4096


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()
"""``served_update_id=OMIT``: the update is served without an ``update_id`` at all."""
_DEFAULT_EXCLUDED = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
_JSON_FIELDS = frozenset(
    {
        "reply_markup",
        "reply_parameters",
        "entities",
        "commands",
        "scope",
        "allowed_updates",
        "link_preview_options",
    }
)
_INT_FIELDS = frozenset(
    {
        "message_id",
        "message_thread_id",
        "reply_to_message_id",
        "offset",
        "limit",
        "cache_time",
        "max_connections",
    }
)
_BOOL_FIELDS = frozenset(
    {
        "disable_notification",
        "protect_content",
        "allow_sending_without_reply",
        "drop_pending_updates",
        "show_alert",
        "disable_web_page_preview",
    }
)
_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


@dataclass(frozen=True)
class SentMessage:
    """One accepted sendMessage. ``text`` is what the user sees (entities parsed, trimmed);
    ``source`` is the ``text`` parameter as sent (the HTML source with ``parse_mode=HTML``)."""

    message_id: int
    chat_id: int
    text: str
    source: str
    parse_mode: str | None
    entities: tuple[dict[str, Any], ...]
    thread_id: int | None
    reply_to_message_id: int | None
    reply_markup: dict[str, Any] | None
    params: dict[str, Any]
    time: float
    document: tuple[str, bytes] | None = None
    """``sendDocument``: (file name, content); ``text`` is then the caption."""

    @property
    def html(self) -> str | None:
        return self.source if self.parse_mode == "HTML" else None

    @property
    def buttons(self) -> list[tuple[str, str]]:
        """The inline keyboard as (label, callback_data), row by row."""
        rows = (self.reply_markup or {}).get("inline_keyboard", [])
        return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]


@dataclass
class Call:
    """One request: canonical ``method`` name, coerced ``params``, answered ``status``."""

    method: str
    params: dict[str, Any]
    time: float
    status: int | None = None
    description: str | None = None


class ApiError(Exception):
    def __init__(self, status: int, description: str, parameters: dict[str, Any] | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters


class Signal:
    """Wake every waiter: waiters hold the current event, ``fire`` swaps in a new one."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)


def bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")


class BotAPIMethods:
    """The Bot API methods, over the state ``FakeBotAPI`` initialises."""

    token: str
    bot_id: int
    first_name: str
    username: str
    sent: list[SentMessage]
    edits: list[SentMessage]
    commands: dict[tuple[str, str], list[dict[str, str]]]
    webhook: dict[str, Any]
    answered_callbacks: dict[str, dict[str, Any]]
    chats: dict[int, dict[str, Any]]
    strict_chats: bool
    _topics: dict[int, set[int]]
    _messages: dict[tuple[int, int], dict[str, Any]]
    _message_ids: dict[int, itertools.count[int]]
    _pending: list[dict[str, Any]]
    _served: dict[int, Any]
    _open_callbacks: set[str]
    _allowed: frozenset[str] | None
    _blocked: set[int]
    _group_members: set[int]
    _poll_generation: int
    _updates_signal: Signal
    _closing: asyncio.Event

    @property
    def bot_user(self) -> dict[str, Any]:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    def _next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    async def _get_me(self, p: dict[str, Any]) -> Any:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _get_updates(self, p: dict[str, Any]) -> Any:
        if self.webhook.get("url"):
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = p.get("offset")
        limit = min(100, max(1, p.get("limit") or 100))
        timeout = max(0.0, float(p.get("timeout") or 0))
        if "allowed_updates" in p:
            allowed = p["allowed_updates"] or []
            self._allowed = frozenset(allowed) if allowed else None
        if isinstance(offset, int):
            if offset < 0:
                self._pending = self._pending[offset:]
            else:
                self._pending = [u for u in self._pending if int(u["update_id"]) >= offset]
        self._poll_generation += 1
        generation = self._poll_generation
        self._updates_signal.fire()  # wake an older poll so it sees it was superseded
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            batch = [u for u in self._pending if self._wanted(u)][:limit]
            remaining = deadline - loop.time()
            if batch or remaining <= 0 or self._closing.is_set():
                return [self._as_served(update) for update in copy.deepcopy(batch)]
            await self._updates_signal.wait(remaining)
            if generation != self._poll_generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only "
                    "one bot instance is running",
                )

    def _as_served(self, update: dict[str, Any]) -> dict[str, Any]:
        """The update as getUpdates sends it: with its ``served_update_id``, if it has one."""
        served = self._served.get(int(update["update_id"]), update["update_id"])
        if served is OMIT:
            del update["update_id"]
        else:
            update["update_id"] = served
        return update

    def _wanted(self, update: dict[str, Any]) -> bool:
        kind = next((k for k in update if k != "update_id"), "")
        if self._allowed is None:
            return kind not in _DEFAULT_EXCLUDED
        return kind in self._allowed

    def _check_chat(self, p: dict[str, Any]) -> int:
        chat_id = chat_id_of(p.get("chat_id"))
        if chat_id is None:
            raise bad("chat_id is empty" if not p.get("chat_id") else "chat not found")
        if self.strict_chats and chat_id not in self.chats:
            raise bad("chat not found")
        if chat_id in self._blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        if chat_id > 0 and chat_id not in self.chats and chat_id in self._group_members:
            raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
        thread_id = p.get("message_thread_id")
        topics = self._topics.get(chat_id)
        chat = self.chats.get(chat_id, {})
        known = topics is None or thread_id in topics
        if thread_id is not None and chat.get("is_forum") and not known:
            raise bad("message thread not found")
        return chat_id

    def _parse_text(self, p: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        source = p.get("text")
        if not isinstance(source, str) or not source:
            raise bad("message text is empty")
        mode = p.get("parse_mode")
        if mode in (None, ""):
            visible, entities = source, list(p.get("entities") or [])
        elif str(mode).lower() == "html":
            try:
                visible, entities = parse_html(source)
            except HtmlError as error:
                raise bad(f"can't parse entities: {error}") from None
        else:
            raise bad("unsupported parse_mode")
        visible, entities = trim(visible, entities)
        if not visible:
            raise bad("message text is empty")
        if utf16_len(visible) > MAX_TEXT:
            raise bad("message is too long")
        return visible, entities

    async def _send_message(self, p: dict[str, Any]) -> Any:
        chat_id = self._check_chat(p)
        visible, entities = self._parse_text(p)
        return self._store_sent(
            p, chat_id, {"text": visible}, visible=visible, source=p["text"], entities=entities
        )

    async def _send_document(self, p: dict[str, Any]) -> Any:
        """An uploaded file (multipart ``document``) with an optional plain caption."""
        chat_id = self._check_chat(p)
        upload = p.get("document")
        if not isinstance(upload, FileField):
            raise bad("there is no document in the request")
        data = upload.file.read()
        if not data:
            raise bad("file must be non-empty")
        caption = str(p.get("caption") or "")
        if utf16_len(caption) > 1024:
            raise bad("message caption is too long")
        name = upload.filename or "document"
        fields: dict[str, Any] = {
            "document": {
                "file_id": f"doc{len(self.sent)}",
                "file_unique_id": f"u{len(self.sent)}",
                "file_name": name,
                "mime_type": upload.content_type,
                "file_size": len(data),
            }
        }
        if caption:
            fields["caption"] = caption
        return self._store_sent(
            p, chat_id, fields, visible=caption, source=caption, document=(name, data)
        )

    def _store_sent(
        self,
        p: dict[str, Any],
        chat_id: int,
        fields: dict[str, Any],
        *,
        visible: str,
        source: str,
        entities: Sequence[dict[str, Any]] = (),
        document: tuple[str, bytes] | None = None,
    ) -> Any:
        markup = _check_markup(p.get("reply_markup"))
        reply = p.get("reply_parameters") or {}
        reply_id = reply.get("message_id", p.get("reply_to_message_id"))
        allow = reply.get("allow_sending_without_reply", p.get("allow_sending_without_reply"))
        replied = self._messages.get((chat_id, reply_id)) if reply_id is not None else None
        if reply_id is not None and replied is None and not allow:
            raise bad("message to be replied not found")
        chat = self.chats.get(chat_id) or {
            "id": chat_id,
            "type": "private" if chat_id > 0 else "supergroup",
        }
        message_id = self._next_message_id(chat_id)
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": self.bot_user,
            "chat": chat,
            "date": int(time.time()),
            **fields,
        }
        thread_id = p.get("message_thread_id")
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if entities:
            message["entities"] = list(entities)
        if replied is not None:
            message["reply_to_message"] = {
                k: v for k, v in replied.items() if k != "reply_to_message"
            }
        if markup is not None:
            message["reply_markup"] = markup
        self._messages[(chat_id, message_id)] = message
        self.sent.append(
            SentMessage(
                message_id=message_id,
                chat_id=chat_id,
                text=visible,
                source=source,
                parse_mode=p.get("parse_mode"),
                entities=tuple(entities),
                thread_id=thread_id,
                reply_to_message_id=reply_id if replied is not None else None,
                reply_markup=markup,
                params=p,
                time=time.monotonic(),
                document=document,
            )
        )
        return copy.deepcopy(message)

    async def _edit_message_text(self, p: dict[str, Any]) -> Any:
        if p.get("inline_message_id"):
            raise bad("the fake does not support inline messages")
        chat_id = self._check_chat(p)
        message = self._messages.get((chat_id, p.get("message_id") or 0))
        if message is None:
            raise bad("message to edit not found")
        if message["from"].get("id") != self.bot_id:
            raise bad("message can't be edited")
        visible, entities = self._parse_text(p)
        markup = _check_markup(p.get("reply_markup"))
        if (
            visible == message.get("text")
            and entities == message.get("entities", [])
            and markup == message.get("reply_markup")
        ):
            raise bad(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        message.update(text=visible, edit_date=int(time.time()))
        message.pop("entities", None)
        message.pop("reply_markup", None)
        if entities:
            message["entities"] = entities
        if markup is not None:
            message["reply_markup"] = markup
        self.edits.append(
            SentMessage(
                message_id=message["message_id"],
                chat_id=chat_id,
                text=visible,
                source=p["text"],
                parse_mode=p.get("parse_mode"),
                entities=tuple(entities),
                thread_id=message.get("message_thread_id"),
                reply_to_message_id=None,
                reply_markup=markup,
                params=p,
                time=time.monotonic(),
            )
        )
        return copy.deepcopy(message)

    async def _send_chat_action(self, p: dict[str, Any]) -> Any:
        self._check_chat(p)
        if p.get("action") not in _ACTIONS:
            raise bad("wrong parameter action in request")
        return True

    def _commands_key(self, p: dict[str, Any]) -> tuple[str, str]:
        scope = p.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(p.get("language_code") or "")

    async def _set_my_commands(self, p: dict[str, Any]) -> Any:
        commands = p.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise bad("commands must be a list of at most 100 BotCommand")
        for command in commands:
            if not _COMMAND.match(str(command.get("command", ""))):
                raise bad("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise bad("BOT_COMMAND_DESCRIPTION_INVALID")
        scope = p.get("scope") or {}
        chat = chat_id_of(scope.get("chat_id")) if scope.get("type") == "chat" else None
        if chat is not None and chat not in self.chats and chat in self._group_members:
            raise bad("chat not found")  # a person who has not started the bot
        key = self._commands_key(p)
        if commands:
            self.commands[key] = [
                {"command": c["command"], "description": c["description"]} for c in commands
            ]
        else:
            self.commands.pop(key, None)
        return True

    async def _get_my_commands(self, p: dict[str, Any]) -> Any:
        return copy.deepcopy(self.commands.get(self._commands_key(p), []))

    async def _delete_my_commands(self, p: dict[str, Any]) -> Any:
        self.commands.pop(self._commands_key(p), None)
        return True

    async def _answer_callback_query(self, p: dict[str, Any]) -> Any:
        query_id = str(p.get("callback_query_id") or "")
        if query_id not in self._open_callbacks:
            raise bad("query is too old and response timeout expired or query ID is invalid")
        self._open_callbacks.discard(query_id)
        self.answered_callbacks[query_id] = p
        return True

    async def _set_webhook(self, p: dict[str, Any]) -> Any:
        url = str(p.get("url") or "")
        if not url:
            return await self._delete_webhook(p)
        if not url.lower().startswith("https://"):
            raise bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = p.get("secret_token")
        if secret is not None and not _SECRET.match(str(secret)):
            raise bad("secret token contains unallowed characters")
        if p.get("drop_pending_updates"):
            self._pending.clear()
        self.webhook = {
            "url": url,
            "secret_token": secret,
            "max_connections": p.get("max_connections", 40),
            "allowed_updates": p.get("allowed_updates"),
        }
        self._poll_generation += 1  # a waiting getUpdates is ended by the webhook
        self._updates_signal.fire()
        return True

    async def _delete_webhook(self, p: dict[str, Any]) -> Any:
        if p.get("drop_pending_updates"):
            self._pending.clear()
        self.webhook = {}
        return True

    async def _get_webhook_info(self, p: dict[str, Any]) -> Any:
        info: dict[str, Any] = {
            "url": self.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }
        if self.webhook.get("url"):
            info["max_connections"] = self.webhook["max_connections"]
            if self.webhook.get("allowed_updates"):
                info["allowed_updates"] = self.webhook["allowed_updates"]
        return info


METHODS: dict[str, tuple[str, Any]] = {
    name.lower(): (name, function)
    for name, function in {
        "getMe": BotAPIMethods._get_me,
        "getUpdates": BotAPIMethods._get_updates,
        "sendMessage": BotAPIMethods._send_message,
        "editMessageText": BotAPIMethods._edit_message_text,
        "sendChatAction": BotAPIMethods._send_chat_action,
        "sendDocument": BotAPIMethods._send_document,
        "setMyCommands": BotAPIMethods._set_my_commands,
        "getMyCommands": BotAPIMethods._get_my_commands,
        "deleteMyCommands": BotAPIMethods._delete_my_commands,
        "answerCallbackQuery": BotAPIMethods._answer_callback_query,
        "setWebhook": BotAPIMethods._set_webhook,
        "deleteWebhook": BotAPIMethods._delete_webhook,
        "getWebhookInfo": BotAPIMethods._get_webhook_info,
    }.items()
}


# -- helpers -------------------------------------------------------------------------------


def answer_error(error: ApiError) -> web.Response:
    body: dict[str, Any] = {
        "ok": False,
        "error_code": error.status,
        "description": error.description,
    }
    if error.parameters:
        body["parameters"] = error.parameters
    return web.json_response(body, status=error.status)


async def read_params(request: web.Request) -> dict[str, Any]:
    """Query string + body (form, multipart or JSON), coerced by field as Telegram does."""
    raw: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            with contextlib.suppress(ValueError):
                body = await request.json()
                if isinstance(body, dict):
                    raw.update(body)
        else:
            form = await request.post()
            raw.update(form)  # strings, and uploaded files as aiohttp FileFields
    return {key: _coerce(key, value) for key, value in raw.items()}


def _coerce(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    with contextlib.suppress(ValueError):
        if key in _JSON_FIELDS:
            return json.loads(value)
        if key in _INT_FIELDS:
            return int(value)
        if key == "timeout":
            return float(value)
        if key in _BOOL_FIELDS:
            return value.lower() in ("true", "1")
        if key == "chat_id" and re.fullmatch(r"-?\d+", value):
            return int(value)
    return value


def chat_id_of(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    return None


def _check_markup(markup: Any) -> dict[str, Any] | None:
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad("can't parse reply keyboard markup JSON object")
    rows = markup.get("inline_keyboard")
    if rows is None:
        return markup  # reply keyboards and the like are accepted as they are
    for row in rows:
        for button in row:
            if not button.get("text"):
                raise bad("text buttons are unallowed in the inline keyboard")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode()) <= 64:
                raise bad("BUTTON_DATA_INVALID")
    return markup
