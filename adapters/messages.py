"""The normalised vocabulary every platform adapter speaks (frozen dataclasses).

An adapter's pure ``normalize`` turns a platform update into an ``InboundMessage`` (or
None for updates the gateway ignores); its ``render`` turns an ``OutboundMessage`` into
platform-sized, escaped chunks. The core never sees a platform object.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

__all__ = [
    "LABEL_MAX",
    "Attachment",
    "Button",
    "ChatType",
    "Identity",
    "InboundMessage",
    "OutboundMessage",
    "Pressed",
    "label",
]

ChatType = Literal["dm", "group", "thread"]
_SAFE = re.compile(r"[^a-z0-9._-]")

LABEL_MAX = 64
#: Brackets that could close or open a ``[time · speaker]`` header, and their stand-ins.
_BRACKETS = str.maketrans(
    dict.fromkeys("[［【〔〖〘〚⟦⦋⦍⦏", "(") | dict.fromkeys("]］】〕〗〙〛⟧⦌⦎⦐", ")")
)
#: Line and paragraph breaks that are not control characters: they still end a line.
_BREAKS = frozenset("\u2028\u2029\x85")


def label(text: str, limit: int = LABEL_MAX) -> str:
    """A one-line, plain label from untrusted text (a display name, a title, a file name).

    The one sanitiser for labels, applied wherever one reaches a prompt header, a log line,
    a terminal or a chat message: control characters (C0, C1), format characters (bidi
    overrides and isolates, zero-width characters, tag characters) and surrogates are
    removed; line breaks and every other run of whitespace become one space; brackets that
    could forge a ``[time · speaker]`` header become parentheses; the result is cut to
    ``limit`` characters (the last one ``…`` when it was cut). Idempotent.
    """
    kept = []
    for char in text:
        if char in _BREAKS or char.isspace():
            kept.append(" ")
        elif unicodedata.category(char) not in ("Cc", "Cf", "Cs"):
            kept.append(char)
    clean = " ".join("".join(kept).split()).translate(_BRACKETS)
    if len(clean) > limit:
        clean = clean[: limit - 1].rstrip() + "…"
    return clean


@dataclass(frozen=True, slots=True)
class Identity:
    """Who sent a message. ``display_name`` and ``username`` are the platform's, made
    safe with ``label`` on construction: nothing downstream can see a raw one."""

    platform: str
    user_id: str
    display_name: str = ""
    username: str | None = None
    is_bot: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "display_name", label(self.display_name))
        if self.username is not None:
            object.__setattr__(self, "username", label(self.username))

    @property
    def person(self) -> str:
        """The filesystem-safe person id memory and archive use, e.g. ``telegram-12345``."""
        return f"{self.platform}-{_SAFE.sub('_', self.user_id.lower())}"

    @property
    def qualified(self) -> str:
        """``telegram:12345``: how config names people (allowlists, admins)."""
        return f"{self.platform}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file sent with a message; ``name`` and ``mime_type`` are made safe with ``label``."""

    kind: Literal["photo", "document", "audio", "voice", "video", "sticker", "other"]
    file_id: str
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        for name in ("name", "mime_type"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, label(value))


Button = tuple[str, str]
"""``(label, data)``: pressing it comes back as an ``is_callback`` message whose text is
``data``. Renderers put buttons two to a row (a choice and its opposite side by side) and
leave out a button whose data the platform cannot carry (Telegram: 64 bytes, Discord: 100
characters), so a message with buttons also says in its text what to type instead."""


@dataclass(frozen=True, slots=True)
class Pressed:
    """The bot message a button was pressed on, as the platform showed it at the press:
    its text and the buttons it still carried. ``text`` is "" when the platform no longer
    shows the message to the bot."""

    text: str
    buttons: tuple[Button, ...] = ()


@dataclass(frozen=True, slots=True)
class InboundMessage:
    platform: str
    chat_id: str
    chat_type: ChatType
    sender: Identity
    text: str
    message_id: str
    timestamp: datetime
    thread_id: str | None = None
    update_id: str | None = None
    reply_to_message_id: str | None = None
    replies_to_bot: bool = False
    mentions_bot: bool = False
    is_command: bool = False
    is_callback: bool = False
    """A button press (Telegram callback query, Discord component); ``text`` is its data,
    ``reply_to_message_id`` the message that carried the button, ``pressed`` that message."""
    private_reply: bool = False
    """A reply to this message is shown to its sender only, even in a group (a Discord
    slash command in a guild: its deferred answer is ephemeral)."""
    attachments: tuple[Attachment, ...] = field(default_factory=tuple)
    pressed: Pressed | None = None

    @property
    def dedup_key(self) -> str:
        """What makes a redelivered update recognisable."""
        return f"{self.platform}:{self.chat_id}:{self.update_id or self.message_id}"

    @property
    def addressed_to_bot(self) -> bool:
        """In a group the bot answers only when mentioned, replied to, or commanded."""
        return self.chat_type == "dm" or self.mentions_bot or self.replies_to_bot or self.is_command


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A reply. ``markdown``: render the text as Markdown (model replies) or send it as
    plain text (command output). ``skip_chunks``: the first N chunks were already delivered
    (a retry after flood control sends only the rest). ``max_chunks``: at most this many
    messages (0: no limit); a longer reply is sent as its first ``max_chunks - 1`` chunks,
    then the whole text as a Markdown file (``adapters.chunking.fold``), which counts as one
    chunk for ``skip_chunks``. ``key``: names this reply for a platform that de-duplicates
    sends (the gateway gives its outbox row); the Discord adapter derives each chunk's nonce
    from it, so a chunk sent again after a restart is not posted twice. Empty: no key."""

    platform: str
    chat_id: str
    text: str
    thread_id: str | None = None
    reply_to_message_id: str | None = None
    markdown: bool = True
    buttons: tuple[Button, ...] = ()
    skip_chunks: int = 0
    max_chunks: int = 0
    key: str = ""
