"""Pure translation of discord.py objects into ``InboundMessage`` (or None to ignore).

Input choice: a real ``discord.Message`` (and ``discord.Interaction`` for slash commands), not
the raw gateway payload. The raw MESSAGE_CREATE says neither whether its channel is a thread
(nor its parent) nor whether it is a DM: only discord.py's cache, filled from GUILD_CREATE /
THREAD_CREATE, knows. Taking the model keeps that knowledge in one place, and tests stay honest
by building real ``Message`` objects from recorded payloads with a real ``ConnectionState``
(exactly what discord.py does on MESSAGE_CREATE), and end to end through the fake gateway.

Mapping:

- DM -> ``chat_type="dm"``, ``chat_id`` = the DM channel id.
- Guild text channel -> ``"group"``, ``chat_id`` = the channel id.
- Thread -> ``"thread"``, ``chat_id`` = the parent channel id, ``thread_id`` = the thread id
  (the adapter sends to ``thread_id`` when it is set). A thread discord.py has not cached
  arrives as a ``PartialMessageable`` and is treated as a plain channel.
- ``mentions_bot``: the bot user is among the mentions, or its managed role is mentioned.
  ``replies_to_bot``: the message replies to one of the bot's (``reference.resolved``, which
  discord.py builds from the payload's ``referenced_message``, else its message cache).
  A leading ``<@bot>`` / ``<@!bot>`` / bot-role mention is stripped from the text.
- ``is_command``: the text starts with ``/`` and, outside DMs, names a registered command
  (``command_names``; any name when None), so ``/help`` typed as text still works while a
  stray ``/shrug`` in a busy channel does not summon the bot.
- Ignored (None): the bot's own messages, system messages (any type but default and reply),
  and messages with neither text nor attachments.
- A button press (``normalize_press``: a MESSAGE_COMPONENT interaction on one of the bot's
  messages) -> ``is_callback``, ``text`` = the button's ``custom_id``, ``message_id`` = the
  interaction id (answers to it go through the interaction), ``reply_to_message_id`` = the
  pressed message, ``pressed`` = its content and the buttons it carries,
  ``private_reply`` in a guild (the answers are ephemeral).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Literal

import discord

from adapters.messages import Attachment, Button, ChatType, Identity, InboundMessage, Pressed

__all__ = ["buttons_of", "identity", "normalize", "normalize_interaction", "normalize_press"]

PLATFORM = "discord"
_ACCEPTED_TYPES = (discord.MessageType.default, discord.MessageType.reply)
_KINDS: dict[str, Literal["photo", "audio", "video"]] = {
    "image": "photo",
    "audio": "audio",
    "video": "video",
}


def identity(user: discord.User | discord.Member) -> Identity:
    """``Identity("discord", "<id>", display name, username, is_bot)``."""
    return Identity(PLATFORM, str(user.id), user.display_name, username=user.name, is_bot=user.bot)


def _where(
    channel: object, guild_id: int | None, channel_id: int
) -> tuple[str, ChatType, str | None]:
    """``(chat_id, chat_type, thread_id)`` for a channel."""
    if guild_id is None:
        return str(channel_id), "dm", None
    if isinstance(channel, discord.Thread):
        return str(channel.parent_id), "thread", str(channel.id)
    return str(channel_id), "group", None


def _attachment(item: discord.Attachment) -> Attachment:
    """``file_id`` is the CDN url: what a later download needs (Discord signs and expires it)."""
    mime = (item.content_type or "").split(";", 1)[0].strip() or None
    kind: Literal["voice", "photo", "audio", "video"] | None = (
        "voice" if item.is_voice_message() else _KINDS.get((mime or "").split("/", 1)[0])
    )
    return Attachment(
        kind or "document", item.url, name=item.filename, mime_type=mime, size=item.size
    )


def _bot_role_ids(message: discord.Message, bot_id: int) -> set[int]:
    return {
        role.id
        for role in message.role_mentions
        if role.tags is not None and role.tags.bot_id == bot_id
    }


def _is_command(text: str, chat_type: ChatType, names: Collection[str] | None) -> bool:
    if not text.startswith("/"):
        return False
    if chat_type == "dm" or names is None:
        return True
    word = text[1:].split(maxsplit=1)[0] if text[1:].strip() else ""
    return word.split("@", 1)[0].lower() in names


def normalize(
    message: discord.Message,
    *,
    bot_id: int,
    command_names: Collection[str] | None = None,
) -> InboundMessage | None:
    """The normalised message, or None for what the gateway never sees."""
    if message.author.id == bot_id or message.type not in _ACCEPTED_TYPES:
        return None
    roles = _bot_role_ids(message, bot_id)
    mentions_bot = any(user.id == bot_id for user in message.mentions) or bool(roles)
    alternatives = [rf"<@!?{bot_id}>", *(rf"<@&{role}>" for role in sorted(roles))]
    text = re.sub(rf"^\s*(?:{'|'.join(alternatives)})[\s,:]*", "", message.content).strip()
    attachments = tuple(_attachment(a) for a in message.attachments) + tuple(
        Attachment("sticker", str(s.id), name=s.name) for s in message.stickers
    )
    if not text and not attachments:
        return None

    reply_to: str | None = None
    replies_to_bot = False
    reference = message.reference
    if reference is not None and reference.message_id is not None:
        reply_to = str(reference.message_id)
        resolved = reference.resolved or reference.cached_message
        replies_to_bot = isinstance(resolved, discord.Message) and resolved.author.id == bot_id

    guild_id = message.guild.id if message.guild is not None else None
    chat_id, chat_type, thread_id = _where(message.channel, guild_id, message.channel.id)
    return InboundMessage(
        platform=PLATFORM,
        chat_id=chat_id,
        chat_type=chat_type,
        sender=identity(message.author),
        text=text,
        message_id=str(message.id),
        timestamp=message.created_at,
        thread_id=thread_id,
        reply_to_message_id=reply_to,
        replies_to_bot=replies_to_bot,
        mentions_bot=mentions_bot,
        is_command=_is_command(text, chat_type, command_names),
        attachments=attachments,
    )


def normalize_interaction(
    interaction: discord.Interaction, *, name: str, args: str | None
) -> InboundMessage | None:
    """A slash command as ``InboundMessage(is_command=True, text="/name args")``.

    ``message_id`` is the interaction id: a reply naming it as ``reply_to_message_id`` is
    answered through the interaction (see the client), ephemerally in a guild, hence
    ``private_reply``."""
    if interaction.channel_id is None:
        return None
    chat_id, chat_type, thread_id = _where(
        interaction.channel, interaction.guild_id, interaction.channel_id
    )
    return InboundMessage(
        platform=PLATFORM,
        chat_id=chat_id,
        chat_type=chat_type,
        sender=identity(interaction.user),
        text=f"/{name} {(args or '').strip()}".strip(),
        message_id=str(interaction.id),
        timestamp=interaction.created_at,
        thread_id=thread_id,
        is_command=True,
        private_reply=interaction.guild_id is not None,
    )


def buttons_of(message: discord.Message) -> tuple[Button, ...]:
    """The buttons a message carries, as ``(label, custom_id)``, row by row."""
    return tuple(
        (child.label or "", child.custom_id)
        for row in message.components
        if isinstance(row, discord.ActionRow)
        for child in row.children
        if isinstance(child, discord.Button) and child.custom_id is not None
    )


def normalize_press(interaction: discord.Interaction, *, bot_id: int) -> InboundMessage | None:
    """A press of a button on one of the bot's messages as ``InboundMessage(is_callback=
    True, text=<custom_id>)``; None for any other interaction or component."""
    data: Any = interaction.data or {}
    message = interaction.message
    custom_id = data.get("custom_id")
    if (
        interaction.type is not discord.InteractionType.component
        or data.get("component_type") != discord.ComponentType.button.value
        or not isinstance(custom_id, str)
        or message is None
        or message.author.id != bot_id
        or interaction.channel_id is None
    ):
        return None
    chat_id, chat_type, thread_id = _where(
        interaction.channel, interaction.guild_id, interaction.channel_id
    )
    return InboundMessage(
        platform=PLATFORM,
        chat_id=chat_id,
        chat_type=chat_type,
        sender=identity(interaction.user),
        text=custom_id,
        message_id=str(interaction.id),
        timestamp=interaction.created_at,
        thread_id=thread_id,
        reply_to_message_id=str(message.id),
        replies_to_bot=True,
        is_callback=True,
        private_reply=interaction.guild_id is not None,
        pressed=Pressed(message.content, buttons_of(message)),
    )
