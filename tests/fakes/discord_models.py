"""The plain data of the fake Discord (see ``discord_server``): what tests configure and see.

Configured: :class:`FakeUser`, :class:`FakeChannel` (text channel, thread or DM) and
:class:`Guild`. Recorded: :class:`RestCall` (every REST request), :class:`Sent` (what the bot
made visible), :class:`Callback` (interaction responses) and :class:`FakeInteraction`.

The payload builders turn them into the JSON Discord sends (``build_member``,
``build_guild`` for GUILD_CREATE, ``build_message`` for MESSAGE_CREATE,
``build_interaction`` for INTERACTION_CREATE of a slash command (type 2) and
``build_press`` for one of a button press (type 3, MESSAGE_COMPONENT)), and
``component_errors`` checks the ``components`` of a message the bot sends as Discord does.
They are pure: the caller allocates the snowflakes and looks up the guild, users and
referenced message, so everything stateful stays in
:class:`~tests.fakes.discord_server.FakeDiscord`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "DISCORD_EPOCH_MS",
    "Callback",
    "FakeChannel",
    "FakeInteraction",
    "FakeUser",
    "Guild",
    "RestCall",
    "Sent",
    "build_guild",
    "build_interaction",
    "build_member",
    "build_message",
    "build_press",
    "buttons_of",
    "component_errors",
    "snowflake_time",
]

DISCORD_EPOCH_MS = 1_420_070_400_000
_CDN = "https://cdn.discordapp.com"


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
class Guild:
    """A guild the bot is in: its managed bot role, members and channel ids in order."""

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
    (a change of a message already there: PATCH of a channel message, the UPDATE_MESSAGE
    callback of a button press, or a press's ``@original`` PATCH), ``followup``
    (interaction webhook) or ``original`` (the edit that fills a deferred interaction
    response). ``components`` are the message's action rows after this send (raw)."""

    kind: Literal["message", "edit", "followup", "original"]
    channel_id: int
    content: str
    message_id: int
    time: float  # time.monotonic() when accepted
    reference: int | None = None  # message_reference.message_id (a reply)
    interaction_id: int | None = None
    ephemeral: bool = False
    allowed_mentions: Mapping[str, Any] | None = None
    components: tuple[Mapping[str, Any], ...] = ()
    files: tuple[tuple[str, bytes], ...] = ()  # attachments uploaded with it: (name, data)

    @property
    def buttons(self) -> list[tuple[str, str]]:
        """The buttons as (label, custom_id), row by row."""
        return buttons_of(self.components)


@dataclass(frozen=True)
class Callback:
    """An interaction callback: ``type`` 4 = message, 5 = deferred ("thinking"); for a
    button press also 6 = deferred update (the button's message changes later, through
    ``@original``) and 7 = UPDATE_MESSAGE (``data`` is the button's message's new content
    and components)."""

    interaction_id: int
    type: int
    flags: int
    time: float
    data: Mapping[str, Any] | None


@dataclass
class FakeInteraction:
    """An interaction pushed to the bot: ``kind`` 2 (slash command ``name``) or 3 (a press
    of the button ``name`` = its custom_id on the message ``message_id``)."""

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
    kind: int = 2
    message_id: int | None = None
    withdrawn: bool = False  # its deferred response was deleted before it was filled


# -- payload builders ----------------------------------------------------------------------


def build_member(user: FakeUser, guild: Guild, bot: FakeUser) -> dict[str, Any]:
    """The guild member object of ``user`` (the bot holds its managed role)."""
    roles = [str(guild.bot_role_id)] if user.id == bot.id else []
    return {
        "roles": roles, "nick": None, "avatar": None, "banner": None,
        "joined_at": _iso(guild.id), "premium_since": None, "deaf": False, "mute": False,
        "pending": False, "flags": 0,
        "communication_disabled_until": None,
    }  # fmt: skip


def build_guild(guild: Guild, channels: Sequence[FakeChannel], bot: FakeUser) -> dict[str, Any]:
    """The GUILD_CREATE payload: ``channels`` are the guild's text channels and threads."""
    return {
        "id": str(guild.id), "name": guild.name, "icon": None, "owner_id": str(bot.id - 1),
        "unavailable": False, "large": False, "member_count": len(guild.members),
        "joined_at": _iso(guild.id), "features": [], "emojis": [], "stickers": [],
        "verification_level": 0, "default_message_notifications": 0,
        "explicit_content_filter": 0, "mfa_level": 0, "nsfw_level": 0, "premium_tier": 0,
        "preferred_locale": "en-US", "system_channel_id": None, "afk_timeout": 300,
        "roles": [
            {"id": str(guild.id), "name": "@everyone", "permissions": "1071698660929",
             "position": 0, "color": 0, "hoist": False, "managed": False,
             "mentionable": False, "flags": 0},
            {"id": str(guild.bot_role_id), "name": bot.username,
             "permissions": "2248473465835073", "position": 1, "color": 0, "hoist": False,
             "managed": True, "mentionable": False, "flags": 0,
             "tags": {"bot_id": str(bot.id)}},
        ],
        "members": [
            build_member(user, guild, bot) | {"user": user.payload()}
            for user in guild.members.values()
        ],
        "channels": [c.payload(bot) for c in channels if c.kind == "text"],
        "threads": [c.payload(bot) for c in channels if c.kind == "thread"],
        "voice_states": [], "presences": [], "stage_instances": [],
        "guild_scheduled_events": [], "soundboard_sounds": [],
    }  # fmt: skip


def build_message(
    message_id: int,
    channel_id: int,
    author: FakeUser,
    content: str,
    *,
    bot: FakeUser,
    guild: Guild | None,
    users: Mapping[int, FakeUser],
    mentions: Iterable[FakeUser | int] = (),
    reply_to: int | None = None,
    referenced: Mapping[str, Any] | None = None,
    attachments: Iterable[tuple[int, Mapping[str, Any]]] = (),
    type: int | None = None,
    flags: int = 0,
) -> dict[str, Any]:
    """A MESSAGE_CREATE payload as Discord sends it. ``<@id>`` in ``content`` and
    ``mentions`` are resolved against ``users``; ``attachments`` pairs each attachment's
    snowflake with its fields; ``referenced`` is the ``reply_to`` message, if known."""
    mentioned: dict[int, FakeUser] = {}
    ids = [m if isinstance(m, int) else m.id for m in mentions]
    ids += [int(x) for x in re.findall(r"<@!?(\d+)>", content)]
    for user_id in ids:
        if user_id in users:
            mentioned[user_id] = users[user_id]
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
                "id": str(attachment_id),
                "filename": a.get("filename", "file.bin"),
                "size": a.get("size", 0),
                "url": f"{_CDN}/attachments/{channel_id}/{a.get('filename', 'file.bin')}",
                "proxy_url": f"{_CDN}/attachments/{channel_id}/proxy",
                "content_type": a.get("content_type"),
            } | dict(a)
            for attachment_id, a in attachments
        ],
        "embeds": [],
        "components": [],
        "pinned": False,
        "type": type if type is not None else (19 if reply_to else 0),
        "flags": flags,
        "nonce": None,
    }  # fmt: skip
    if guild is not None:
        payload["guild_id"] = str(guild.id)
        payload["member"] = build_member(author, guild, bot)
    for user in mentioned.values():
        mention = user.payload()
        if guild is not None:
            mention["member"] = build_member(user, guild, bot)
        payload["mentions"].append(mention)
    if reply_to is not None:
        reference: dict[str, Any] = {
            "type": 0, "message_id": str(reply_to), "channel_id": str(channel_id),
            "fail_if_not_exists": False,
        }  # fmt: skip
        if guild is not None:
            reference["guild_id"] = str(guild.id)
        payload["message_reference"] = reference
        payload["referenced_message"] = (
            {k: v for k, v in referenced.items() if k != "referenced_message"}
            if referenced
            else None
        )
    return payload


def buttons_of(components: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(label, custom_id) of every button in action rows ``components``, row by row."""
    return [
        (str(item.get("label", "")), str(item.get("custom_id", "")))
        for row in components
        for item in row.get("components", [])
        if item.get("type") == 2
    ]


def component_errors(components: Any) -> dict[str, Any] | None:
    """Discord's ``errors`` object for ``components`` it would refuse (400 ``50035``),
    or None: at most 5 action rows (type 1) of 1-5 buttons (type 2); a button has a
    style 1-4 with a ``custom_id`` of 1-100 characters, unique in the message (or style
    5 with a ``url``), and a label of at most 80 characters."""

    def error(path: str, code: str, message: str) -> dict[str, Any]:
        return {path: {"_errors": [{"code": code, "message": message}]}}

    if not isinstance(components, list) or len(components) > 5:
        return error("components", "BASE_TYPE_BAD_LENGTH", "Must be 5 or fewer in length.")
    seen: set[str] = set()
    for r, row in enumerate(components):
        items = row.get("components") if isinstance(row, dict) else None
        if row.get("type") != 1 or not isinstance(items, list) or not 1 <= len(items) <= 5:
            return error(f"components.{r}", "BASE_TYPE_BAD_LENGTH", "Must be 1-5 in length.")
        for i, item in enumerate(items):
            where = f"components.{r}.components.{i}"
            style, custom_id = item.get("style"), item.get("custom_id")
            if item.get("type") != 2 or style not in (1, 2, 3, 4, 5):
                return error(
                    where, "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (2,).'
                )
            if len(str(item.get("label") or "")) > 80:
                return error(
                    f"{where}.label", "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length."
                )
            if style == 5:
                if not item.get("url") or custom_id is not None:
                    return error(
                        where, "BUTTON_COMPONENT_URL_REQUIRED", "A link button needs a url."
                    )
                continue
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
                return error(
                    f"{where}.custom_id",
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 100 in length.",
                )
            if custom_id in seen:
                return error(
                    f"{where}.custom_id",
                    "COMPONENT_CUSTOM_ID_DUPLICATED",
                    "Component custom id cannot be duplicated",
                )
            seen.add(custom_id)
    return None


def _interaction_payload(
    interaction_id: int,
    token: str,
    *,
    kind: int,
    data: dict[str, Any],
    user: FakeUser,
    channel: FakeChannel,
    guild: Guild | None,
    bot: FakeUser,
    application_id: int,
) -> dict[str, Any]:
    """What every INTERACTION_CREATE carries, in ``guild`` (``member``) or a DM (``user``)."""
    payload: dict[str, Any] = {
        "id": str(interaction_id), "application_id": str(application_id), "type": kind,
        "data": data, "channel_id": str(channel.id), "channel": channel.payload(bot),
        "token": token, "version": 1, "locale": "en-US", "app_permissions": "2248473465835073",
        "entitlements": [], "attachment_size_limit": 10 * 1024 * 1024,
        "context": 0 if guild is not None else 1,
        "authorizing_integration_owners": (
            {"0": str(guild.id)} if guild is not None else {"1": str(user.id)}
        ),
    }  # fmt: skip
    if guild is not None:
        payload["guild_id"] = str(guild.id)
        payload["guild_locale"] = "en-US"
        payload["guild"] = {"id": str(guild.id), "locale": "en-US", "features": []}
        payload["member"] = build_member(user, guild, bot) | {
            "user": user.payload(),
            "permissions": "2248473465835073",
        }
    else:
        payload["user"] = user.payload()
    return payload


def build_interaction(
    interaction_id: int,
    token: str,
    user: FakeUser,
    channel: FakeChannel,
    *,
    guild: Guild | None,
    bot: FakeUser,
    application_id: int,
    command_id: str,
    name: str,
    options: Mapping[str, str] | None,
) -> dict[str, Any]:
    """An INTERACTION_CREATE payload (type 2) for slash command ``name`` with string
    ``options``, in ``guild`` (``member``) or a DM (``user``)."""
    data: dict[str, Any] = {"id": command_id, "name": name, "type": 1}
    if options:
        data["options"] = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
    if guild is not None:
        data["guild_id"] = str(guild.id)
    return _interaction_payload(
        interaction_id, token, kind=2, data=data, user=user, channel=channel,
        guild=guild, bot=bot, application_id=application_id,
    )  # fmt: skip


def build_press(
    interaction_id: int,
    token: str,
    user: FakeUser,
    channel: FakeChannel,
    *,
    message: Mapping[str, Any],
    custom_id: str,
    guild: Guild | None,
    bot: FakeUser,
    application_id: int,
) -> dict[str, Any]:
    """An INTERACTION_CREATE payload (type 3, MESSAGE_COMPONENT) for a press of the
    button ``custom_id`` on ``message``, which Discord sends whole, as it is now."""
    data = {"custom_id": custom_id, "component_type": 2}
    payload = _interaction_payload(
        interaction_id, token, kind=3, data=data, user=user, channel=channel,
        guild=guild, bot=bot, application_id=application_id,
    )  # fmt: skip
    payload["message"] = {k: v for k, v in message.items() if k != "referenced_message"}
    return payload
