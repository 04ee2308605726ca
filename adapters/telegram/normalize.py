"""Telegram ``Update`` -> ``InboundMessage`` (or None): the pure edge of the adapter.

``normalize(update, bot_id=..., bot_username=...)`` reads only the update; it never calls
the network, so it is tested on recorded Bot API payloads turned into ``Update`` objects with
``Update.de_json`` (PTB's offline path).

What becomes a message, and how:

- ``message`` updates only. Edited messages, channel posts, business messages, reactions,
  membership changes ... give None, as do messages from the bot itself and service messages
  (no text, no caption, no attachment: joins, pins, topic creation, locations, polls).
- Chat: ``private`` -> ``dm``; ``group``/``supergroup`` -> ``group``; a forum-topic message
  (``is_topic_message`` with a ``message_thread_id``) -> ``thread`` with that ``thread_id``.
  A supergroup reply thread outside forums also carries ``message_thread_id`` but no
  ``is_topic_message``; it stays ``group``. Channels give None.
- Sender: ``from`` (id, full name, username, is_bot). A message sent *as a chat* (anonymous
  admin, linked channel) is attributed to ``sender_chat`` instead, so it is never mistaken
  for the GroupAnonymousBot service user.
- Text: ``text`` or ``caption``. Attachments: photo (largest size), document, audio, voice,
  video, video note, animation (Telegram also sends it as a ``document``; reported once),
  sticker.
- Commands: a ``bot_command`` entity at offset 0. ``/cmd@OtherBot`` is addressed to another
  bot and gives None; ``/cmd@our_bot args`` becomes ``/cmd args``.
- Mentions: a ``mention`` entity equal to ``@bot_username`` (case-insensitive) or a
  ``text_mention`` of ``bot_id``. A leading mention is stripped with the punctuation after
  it (``@bot, hi`` -> ``hi``).
- Replies: ``reply_to_message_id`` and ``replies_to_bot``. Telegram makes every forum-topic
  message a reply to the topic's creation message; that implicit reply is ignored.
- ``callback_query`` (a button press): ``is_callback``, ``text`` = its data, ``message_id`` =
  the query id (what ``answerCallbackQuery`` needs), ``reply_to_message_id`` = the bot
  message that carried the button, ``replies_to_bot`` = True (a press answers the bot, so it
  counts as addressed to it in groups), ``pressed`` = that message's text and the inline
  buttons it carries now (``Pressed("")`` when Telegram sends it as inaccessible). Queries
  without data (games) or without a message (inline mode) give None. Callback queries carry
  no date: ``received_at`` (default now, UTC) stands in.
- ``timestamp``: the message date, aware UTC; ``update_id`` as a string (dedup key).

What it cannot map it raises on, so the adapter skips and counts the update instead of
letting it pass for nothing (``adapters.skips``): a message without a ``chat`` (PTB accepts
one) or of a chat type Telegram has not documented (``Unusable("chat"|"chat.type")``).
Anything else that breaks on a shape PTB let through raises what it raises; the adapter
treats it the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

from telegram import CallbackQuery, Chat, Message, MessageEntity, Update, User

from adapters.messages import Attachment, Button, ChatType, Identity, InboundMessage, Pressed
from adapters.skips import Unusable

__all__ = ["normalize"]

PLATFORM = "telegram"
_LEADING_PUNCTUATION = " \t\n,:;.!-—"


def normalize(
    update: Update,
    *,
    bot_id: int,
    bot_username: str,
    received_at: datetime | None = None,
) -> InboundMessage | None:
    """The normalised message in ``update``, or None when the gateway should ignore it;
    raises (``Unusable`` or whatever the unexpected shape causes) when it cannot tell."""
    if update.callback_query is not None:
        return _callback(update, update.callback_query, bot_id, received_at)
    message = update.message
    if message is None:
        return None
    chat_type = _chat_type(message.chat)
    sender = _sender(message)
    if chat_type is None or sender is None:
        return None
    if message.from_user is not None and message.from_user.id == bot_id:
        return None

    text = message.text if message.text is not None else message.caption or ""
    entities = message.parse_entities() if message.text is not None else None
    if entities is None:
        entities = message.parse_caption_entities()
    attachments = _attachments(message)
    if not text.strip() and not attachments:
        return None

    is_command = False
    mentions_bot = False
    ours = f"@{bot_username}".lower()
    leading_mention: str | None = None
    for entity, value in entities.items():
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            command, _, target = value.partition("@")
            if target and target.lower() != bot_username.lower():
                return None  # /cmd@OtherBot: addressed to another bot
            is_command = True
            text = command + text[len(value) :]
        elif (entity.type == MessageEntity.MENTION and value.lower() == ours) or (
            entity.type == MessageEntity.TEXT_MENTION
            and entity.user is not None
            and entity.user.id == bot_id
        ):
            mentions_bot = True
            if entity.offset == 0:
                leading_mention = value
    if leading_mention is not None and not is_command:
        text = text[len(leading_mention) :].lstrip(_LEADING_PUNCTUATION)

    thread_id = _thread_id(message) if chat_type == "group" else None
    reply = message.reply_to_message
    if reply is not None and reply.forum_topic_created is not None:
        reply = None  # the implicit reply to a topic's root
    return InboundMessage(
        platform=PLATFORM,
        chat_id=str(message.chat.id),
        chat_type="thread" if thread_id is not None else chat_type,
        sender=sender,
        text=text,
        message_id=str(message.message_id),
        timestamp=_utc(message.date),
        thread_id=thread_id,
        update_id=str(update.update_id),
        reply_to_message_id=str(reply.message_id) if reply is not None else None,
        replies_to_bot=bool(reply and reply.from_user and reply.from_user.id == bot_id),
        mentions_bot=mentions_bot,
        is_command=is_command,
        attachments=attachments,
    )


def _callback(
    update: Update, query: CallbackQuery, bot_id: int, received_at: datetime | None
) -> InboundMessage | None:
    message = query.message
    if message is None or query.data is None or query.from_user.id == bot_id:
        return None
    chat_type = _chat_type(message.chat)
    if chat_type is None:
        return None
    thread_id = (
        _thread_id(message) if isinstance(message, Message) and chat_type == "group" else None
    )
    return InboundMessage(
        platform=PLATFORM,
        chat_id=str(message.chat.id),
        chat_type="thread" if thread_id is not None else chat_type,
        sender=_identity(query.from_user),
        text=query.data,
        message_id=query.id,
        timestamp=_utc(received_at or datetime.now(UTC)),
        thread_id=thread_id,
        update_id=str(update.update_id),
        reply_to_message_id=str(message.message_id),
        replies_to_bot=True,
        is_callback=True,
        pressed=_pressed(message) if isinstance(message, Message) else Pressed(""),
    )


def _pressed(message: Message) -> Pressed:
    """What the person saw when they pressed: the text and the inline buttons left."""
    markup = message.reply_markup
    rows = markup.inline_keyboard if markup is not None else ()
    buttons: tuple[Button, ...] = tuple(
        (button.text, str(button.callback_data))
        for row in rows
        for button in row
        if button.callback_data is not None
    )
    return Pressed(message.text or message.caption or "", buttons)


def _chat_type(chat: Chat | None) -> ChatType | None:
    if chat is None:
        raise Unusable("chat")
    if chat.type == Chat.PRIVATE:
        return "dm"
    if chat.type in (Chat.GROUP, Chat.SUPERGROUP):
        return "group"
    if chat.type == Chat.CHANNEL:
        return None  # known, and not served
    raise Unusable("chat.type")


def _thread_id(message: Message) -> str | None:
    if message.is_topic_message and message.message_thread_id is not None:
        return str(message.message_thread_id)
    return None


def _identity(user: User) -> Identity:
    return Identity(
        platform=PLATFORM,
        user_id=str(user.id),
        display_name=user.full_name,
        username=user.username,
        is_bot=user.is_bot,
    )


def _sender(message: Message) -> Identity | None:
    chat = message.sender_chat
    if chat is not None:
        return Identity(
            platform=PLATFORM,
            user_id=str(chat.id),
            display_name=chat.title or chat.full_name or "",
            username=chat.username,
        )
    if message.from_user is None:
        return None
    return _identity(message.from_user)


def _attachments(message: Message) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    if message.photo:
        largest = message.photo[-1]
        found.append(Attachment("photo", largest.file_id, size=largest.file_size))
    if message.animation is not None:
        a = message.animation
        found.append(Attachment("video", a.file_id, a.file_name, a.mime_type, a.file_size))
    elif message.document is not None:
        d = message.document
        found.append(Attachment("document", d.file_id, d.file_name, d.mime_type, d.file_size))
    if message.audio is not None:
        au = message.audio
        found.append(Attachment("audio", au.file_id, au.file_name, au.mime_type, au.file_size))
    if message.voice is not None:
        v = message.voice
        found.append(Attachment("voice", v.file_id, None, v.mime_type, v.file_size))
    if message.video is not None:
        vi = message.video
        found.append(Attachment("video", vi.file_id, vi.file_name, vi.mime_type, vi.file_size))
    if message.video_note is not None:
        n = message.video_note
        found.append(Attachment("video", n.file_id, None, "video/mp4", n.file_size))
    if message.sticker is not None:
        s = message.sticker
        mime = (
            "application/x-tgsticker"
            if s.is_animated
            else "video/webm"
            if s.is_video
            else "image/webp"
        )
        found.append(Attachment("sticker", s.file_id, s.emoji, mime, s.file_size))
    return tuple(found)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
