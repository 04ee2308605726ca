"""The REST API of the fake Discord (``/api/v10``; see ``discord_server``).

``DiscordRest`` is a mixin over the state ``FakeDiscord`` owns: ``_rest`` records every
request as a :class:`~tests.fakes.discord_models.RestCall`; ``_answer`` checks the bot token
(the interaction webhooks need none), applies injected failures (:class:`Injected`, from
``fail_next``/``hang_next``) and routes the path through the table ``_rest_routes`` builds to
one handler per endpoint. A handler answers with Discord's JSON shape and error codes (the
helpers ``_json``/``_error``: ``Content-Type: application/json`` exactly and ``Via: 1.1
google``, without which discord.py takes a 429 for a Cloudflare ban); a handler that raises
answers 500 and is kept in ``handler_errors``, which ``FakeDiscord.__aexit__`` re-raises.

Message components: whatever the bot sends (channel POST or PATCH, interaction callback,
followup, ``@original``) may carry ``components``, checked as Discord does
(``component_errors``: 400 ``50035``) and kept on the message, where a press
(``FakeDiscord.press``) finds them; a PATCH without ``components`` keeps the message's
own, ``components: []`` removes them. A press (interaction type 3) may be answered with
callback 4 or 5 like a command, or with 6 (deferred update: ``@original`` is then the
pressed message itself, edited in place by a later PATCH) or 7 (UPDATE_MESSAGE: the
callback's data edits the pressed message at once); 6 and 7 answer a command with 400.

Nonces: a channel POST with ``nonce`` and ``enforce_nonce: true`` (discord.py sends both
with every message) whose nonce the bot used within ``nonce_window`` seconds is answered
200 with the message that nonce made, and nothing new is posted (recorded in
``nonce_hits``), as Discord documents it.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web
from aiohttp.web_request import FileField

from tests.fakes.discord_gateway import DiscordGateway
from tests.fakes.discord_models import (
    Callback,
    FakeInteraction,
    FakeUser,
    RestCall,
    Sent,
    component_errors,
)

__all__ = ["EPHEMERAL", "DiscordRest", "Injected"]

EPHEMERAL = 64
_JSON = {"Content-Type": "application/json"}
_MAX_CONTENT = 2000

_Handler = Callable[[web.Request, re.Match[str], Any], Awaitable[web.Response]]


@dataclass
class Injected:
    """A scripted REST failure (``fail_next``/``hang_next``), answered ``times`` more times."""

    status: int | None  # None: hang until the fake closes
    method: str | None
    path: str | None  # a regex searched in the path
    body: Any
    times: int
    after: int = 0  # matching requests let through first
    handled: bool = False  # a hang after the request was carried out: only the answer is lost


def _files(body: Any) -> tuple[tuple[str, bytes], ...]:
    return tuple(body.get("__files__") or ()) if isinstance(body, dict) else ()


async def _read_body(request: web.Request) -> Any:
    """A JSON body, or a multipart one as discord.py sends files: the JSON part
    ``payload_json`` plus ``files[n]`` parts, kept as ``body["__files__"]`` = [(name, data)]."""
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        try:
            body = json.loads(str(form.get("payload_json", "{}")))
        except ValueError:
            return None
        if isinstance(body, dict):
            body["__files__"] = [
                (part.filename, part.file.read())
                for part in form.values()
                if isinstance(part, FileField)
            ]
        return body
    raw = await request.read()
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _json(status: int, body: Any, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        headers={**_JSON, "Via": "1.1 google", **(headers or {})},
    )


def _error(status: int, code: int, message: str, errors: Any = None) -> web.Response:
    body: dict[str, Any] = {"message": message, "code": code}
    if errors is not None:
        body["errors"] = errors
    return _json(status, body)


def _ratelimit_headers(bucket: str, remaining: int, reset_after: float) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
        "X-RateLimit-Reset-After": f"{reset_after:.3f}",
        "X-RateLimit-Bucket": bucket,
    }


class DiscordRest(DiscordGateway):
    """The REST half of ``FakeDiscord``, over the state it initialises. It sits on the
    gateway half because a message the bot posts is echoed there as MESSAGE_CREATE."""

    interaction_deadline: float
    interaction_ttl: float
    nonce_window: float
    nonces: dict[str, tuple[int, float]]
    nonce_hits: list[str]
    echo_own_messages: bool
    users: dict[int, FakeUser]
    messages: dict[int, dict[str, Any]]
    interactions: dict[int, FakeInteraction]
    sent: list[Sent]
    calls: list[RestCall]
    callbacks: list[Callback]
    typing: list[tuple[int, float]]
    commands: list[dict[str, Any]]
    guild_commands: dict[int, list[dict[str, Any]]]
    _floods: dict[int, deque[float | None]]
    _injected: list[Injected]
    _routes: list[tuple[str, re.Pattern[str], _Handler]]
    _closing: asyncio.Event

    if TYPE_CHECKING:  # defined by FakeDiscord

        def _snowflake(self) -> int: ...

        def add_dm(self, user: FakeUser, *, id: int | None = None) -> int: ...

        def message_payload(
            self, channel_id: int, author: FakeUser, content: str, *,
            mentions: Iterable[FakeUser | int] = (), reply_to: int | None = None,
            attachments: Iterable[Mapping[str, Any]] = (), type: int | None = None,
            flags: int = 0, guild_id: int | None = None,
        ) -> dict[str, Any]: ...  # fmt: skip

    def _rest_routes(self) -> list[tuple[str, re.Pattern[str], _Handler]]:
        """The route table ``_answer`` matches paths (under ``/api/v10``) against."""
        return [
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
            (
                "DELETE",
                re.compile(r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)/messages/@original"),
                self._delete_original,
            ),
        ]  # fmt: skip

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        path = "/" + request.match_info["tail"]
        body = await _read_body(request)
        response = await self._answer(request, path, body)
        self.calls.append(
            RestCall(request.method, path, dict(request.query), body, response.status, arrived)
        )
        await self._notify()
        return response

    async def _answer(self, request: web.Request, path: str, body: Any) -> web.Response:
        webhook = path.startswith(("/interactions/", "/webhooks/"))
        if not webhook and request.headers.get("Authorization") != f"Bot {self.token}":
            return _error(401, 0, "401: Unauthorized")
        for injected in self._injected:
            if (
                injected.times > 0
                and (injected.method in (None, request.method))
                and (injected.path is None or re.search(injected.path, path))
            ):
                if injected.after > 0:
                    injected.after -= 1
                    continue
                injected.times -= 1
                if injected.status is None:
                    if injected.handled:
                        await self._route(request, path, body)
                    await self._closing.wait()
                    return _error(503, 0, "fake closing")
                answer = injected.body or {"message": f"{injected.status}: injected", "code": 0}
                return _json(injected.status, answer)
        return await self._route(request, path, body)

    async def _route(self, request: web.Request, path: str, body: Any) -> web.Response:
        for method, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if match and method == request.method:
                try:
                    result: web.Response = await handler(request, match, body)
                except Exception as exc:
                    self.handler_errors.append(exc)
                    return _error(500, 0, f"fake handler failed: {exc!r}")
                return result
        return _error(404, 0, "404: Not Found")

    async def _get_me(self, request: web.Request, match: re.Match[str], body: Any) -> web.Response:
        return _json(200, self.bot.payload() | {"verified": True, "mfa_enabled": False})

    async def _get_application(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        owner = FakeUser(self.application_id - 1, "owner")
        return _json(200, {
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
        return _json(200, {
            "url": self.gateway_url, "shards": self.recommended_shards,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14400000,
                                    "max_concurrency": 1},
        })  # fmt: skip

    async def _post_dm(self, request: web.Request, match: re.Match[str], body: Any) -> web.Response:
        user = self.users.get(int(body.get("recipient_id", 0))) if isinstance(body, dict) else None
        if user is None:
            return _error(400, 50035, "Invalid Form Body")
        channel = next(
            (c for c in self.channels.values() if c.kind == "dm" and c.recipient == user), None
        )
        channel = channel or self.channels[self.add_dm(user)]
        return _json(200, channel.payload(self.bot) | {"last_message_id": None})

    def _check_content(self, body: Any) -> web.Response | None:
        content = body.get("content") if isinstance(body, dict) else None
        if content is not None and len(content) > _MAX_CONTENT:
            return _error(400, 50035, "Invalid Form Body", {"content": {"_errors": [
                {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}
            ]}})  # fmt: skip
        components = body.get("components") if isinstance(body, dict) else None
        if components is not None:
            errors = component_errors(components)
            if errors is not None:
                return _error(400, 50035, "Invalid Form Body", errors)
        extras = isinstance(body, dict) and (
            body.get("embeds") or body.get("__files__") or components
        )
        if not content and not extras:
            return _error(400, 50006, "Cannot send an empty message")
        return None

    def _channel_error(self, channel_id: int) -> web.Response | None:
        channel = self.channels.get(channel_id)
        if channel is None:
            return _error(404, 10003, "Unknown Channel")
        if channel.forbidden_code == 50007:
            return _error(403, 50007, "Cannot send messages to this user")
        if channel.forbidden_code is not None:
            return _error(403, channel.forbidden_code, "Missing Permissions")
        return None

    def _bot_message(
        self, channel_id: int, body: dict[str, Any], *, flags: int = 0
    ) -> dict[str, Any]:
        reference = body.get("message_reference") or {}
        reply_to = int(reference["message_id"]) if reference.get("message_id") else None
        files = [{"filename": name, "size": len(data)} for name, data in _files(body)]
        message = self.message_payload(
            channel_id, self.bot, body.get("content") or "", reply_to=reply_to, flags=flags,
            attachments=files,
        )  # fmt: skip
        message["components"] = list(body.get("components") or [])
        return message

    @staticmethod
    def _change(message: dict[str, Any], body: dict[str, Any]) -> None:
        """Apply an edit's ``content`` and ``components`` (absent: kept) to ``message``."""
        message["content"] = body.get("content", message["content"])
        if "components" in body:
            message["components"] = list(body["components"] or [])
        message["edited_timestamp"] = datetime.now(UTC).isoformat()

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
            return _json(
                429,
                {"message": "You are being rate limited.", "retry_after": retry_after,
                 "global": False},
                _ratelimit_headers(bucket, 0, retry_after)
                | {"Retry-After": str(max(1, round(retry_after))), "X-RateLimit-Scope": "user"},
            )  # fmt: skip
        error = self._channel_error(channel_id) or self._check_content(body)
        if error is not None:
            return error
        reference = body.get("message_reference") or {}
        if reference.get("message_id") and int(reference["message_id"]) not in self.messages:
            if reference.get("fail_if_not_exists", True):
                return _error(400, 50035, "Invalid Form Body", {"message_reference": {
                    "_errors": [{"code": "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                                 "message": "Unknown message"}]}})  # fmt: skip
            body = {k: v for k, v in body.items() if k != "message_reference"}
        nonce = str(body["nonce"]) if body.get("enforce_nonce") and body.get("nonce") else None
        known = self.nonces.get(nonce) if nonce is not None else None
        if nonce is not None and known is not None:
            message_id, made = known
            if time.monotonic() - made <= self.nonce_window:  # Discord: "that message will
                self.nonce_hits.append(nonce)  # be returned and no new message created"
                return _json(200, self.messages[message_id], _ratelimit_headers(bucket, 4, 1.0))
        payload = self._bot_message(channel_id, body)
        if nonce is not None:
            payload["nonce"] = nonce
            self.nonces[nonce] = (int(payload["id"]), time.monotonic())
        reply = payload.get("message_reference", {}).get("message_id")
        await self._record(Sent(
            "message", channel_id, payload["content"], int(payload["id"]), time.monotonic(),
            reference=int(reply) if reply else None, allowed_mentions=body.get("allowed_mentions"),
            components=tuple(payload["components"]), files=_files(body),
        ))  # fmt: skip
        if self.echo_own_messages:
            await self.dispatch("MESSAGE_CREATE", payload)
        return _json(200, payload, _ratelimit_headers(bucket, 4, 1.0))

    async def _patch_message(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        channel_id, message_id = int(match["channel"]), int(match["message"])
        error = self._channel_error(channel_id) or self._check_content(body)
        if error is not None:
            return error
        payload = self.messages.get(message_id)
        if payload is None or payload["channel_id"] != str(channel_id):
            return _error(404, 10008, "Unknown Message")
        if payload["author"]["id"] != str(self.bot.id) or payload.get("flags", 0) & EPHEMERAL:
            # someone else's message; an ephemeral one only its interaction's token may edit
            return _error(404, 10008, "Unknown Message")
        self._change(payload, body)
        await self._record(Sent(
            "edit", channel_id, payload["content"], message_id, time.monotonic(),
            components=tuple(payload["components"]),
        ))  # fmt: skip
        return _json(200, payload)

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
            return _error(403, 50001, "Missing Access")
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
        return _json(200, stored)

    async def _get_commands(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        guild = int(match["guild"]) if match["guild"] else None
        return _json(200, self.commands if guild is None else self.guild_commands.get(guild, []))

    def _webhook_interaction(
        self, match: re.Match[str], body: Any, *, content: bool = True
    ) -> FakeInteraction | web.Response:
        """The interaction a webhook request (followup, message edit) is for, or the error
        answer: unknown or expired token, then bad content."""
        interaction = next(
            (i for i in self.interactions.values() if i.token == match["token"]), None
        )
        if interaction is None or int(match["app"]) != self.application_id:
            return _error(404, 10015, "Unknown Webhook")
        if time.monotonic() - interaction.created > self.interaction_ttl:
            return _error(401, 50027, "Invalid Webhook Token")
        if interaction.callback is None:
            return _error(404, 10015, "Unknown Webhook")
        error = self._check_content(body) if content else None
        return interaction if error is None else error

    async def _post_callback(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self.interactions.get(int(match["id"]))
        if interaction is None or interaction.token != match["token"]:
            return _error(404, 10062, "Unknown interaction")
        if interaction.callback is not None:
            return _error(400, 40060, "Interaction has already been acknowledged.")
        if time.monotonic() - interaction.created > self.interaction_deadline:
            return _error(404, 10062, "Unknown interaction")
        kind, data = int(body["type"]), body.get("data")
        flags = int((data or {}).get("flags", 0))
        allowed = (4, 5, 6, 7) if interaction.kind == 3 else (4, 5)
        if kind not in allowed:
            invalid = {
                "code": "INTERACTION_CALLBACK_TYPE_INVALID",
                "message": "This callback type is not valid for this interaction.",
            }
            return _error(400, 50035, "Invalid Form Body", {"type": {"_errors": [invalid]}})
        if kind in (4, 7):
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
                components=tuple(message["components"]),
            ))  # fmt: skip
        elif kind in (6, 7):  # the pressed message is the response
            assert interaction.message_id is not None
            interaction.original_id = interaction.message_id
            if kind == 7:  # ... and is edited
                message = self.messages[interaction.message_id]
                self._change(message, data or {})
                resource["message"] = message
                await self._record(Sent(
                    "edit", interaction.channel_id, message["content"], int(message["id"]),
                    time.monotonic(), interaction_id=interaction.id,
                    ephemeral=bool(message.get("flags", 0) & EPHEMERAL),
                    components=tuple(message["components"]),
                ))  # fmt: skip
        await self._notify()
        if "with_response" not in request.query:
            return web.Response(status=204, headers={"Via": "1.1 google"})
        return _json(200, {
            "interaction": {
                "id": str(interaction.id), "type": interaction.kind,
                "response_message_id": str(interaction.original_id or interaction.id),
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            },
            "resource": resource,
        })  # fmt: skip

    async def _post_followup(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self._webhook_interaction(match, body)
        if isinstance(interaction, web.Response):
            return interaction
        flags = int(body.get("flags", 0))
        message = self._bot_message(interaction.channel_id, body, flags=flags)
        message["webhook_id"] = str(self.application_id)
        await self._record(Sent(
            "followup", interaction.channel_id, message["content"], int(message["id"]),
            time.monotonic(), interaction_id=interaction.id, ephemeral=bool(flags & EPHEMERAL),
            allowed_mentions=body.get("allowed_mentions"), components=tuple(message["components"]),
            files=_files(body),
        ))  # fmt: skip
        if request.query.get("wait") in ("true", "1", "True"):
            return _json(200, message)
        return web.Response(status=204, headers={"Via": "1.1 google"})

    async def _delete_original(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        """Deletes the interaction's response; a deferred one not yet filled is withdrawn
        (its "thinking…" disappears)."""
        interaction = self._webhook_interaction(match, body, content=False)
        if isinstance(interaction, web.Response):
            return interaction
        if interaction.original_id is None:
            interaction.withdrawn = True
        else:
            self.messages.pop(interaction.original_id, None)
        return web.Response(status=204, headers={"Via": "1.1 google"})

    async def _patch_webhook_message(
        self, request: web.Request, match: re.Match[str], body: Any
    ) -> web.Response:
        interaction = self._webhook_interaction(match, body)
        if isinstance(interaction, web.Response):
            return interaction
        assert interaction.callback is not None
        ephemeral = bool(interaction.callback.flags & EPHEMERAL)
        pressed = interaction.callback.type in (6, 7)  # @original: the pressed message
        if match["message"] == "@original":
            if interaction.original_id is None:  # fills the deferred ("thinking") response
                message = self._bot_message(interaction.channel_id, body)
                interaction.original_id = int(message["id"])
            message = self.messages[interaction.original_id]
            kind: Literal["original", "edit"] = "edit" if pressed else "original"
        else:
            found = self.messages.get(int(match["message"]))
            if found is None:
                return _error(404, 10008, "Unknown Message")
            message, kind = found, "edit"
        self._change(message, body)
        if pressed and kind == "edit" and match["message"] == "@original":
            ephemeral = bool(message.get("flags", 0) & EPHEMERAL)  # it stays what it was
        else:
            message["webhook_id"] = str(self.application_id)
            message["flags"] = EPHEMERAL if ephemeral else 0
        await self._record(Sent(
            kind, interaction.channel_id, message["content"], int(message["id"]),
            time.monotonic(), interaction_id=interaction.id, ephemeral=ephemeral,
            allowed_mentions=body.get("allowed_mentions"), components=tuple(message["components"]),
        ))  # fmt: skip
        return _json(200, message)
