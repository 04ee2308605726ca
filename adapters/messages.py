"""The normalised vocabulary every platform adapter speaks (frozen dataclasses).

An adapter's pure ``normalize`` turns a platform update into an ``InboundMessage`` (or
None for updates the gateway ignores); its ``render`` turns an ``OutboundMessage`` into
platform-sized, escaped chunks. The core never sees a platform object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

__all__ = ["Attachment", "Button", "ChatType", "Identity", "InboundMessage", "OutboundMessage"]

ChatType = Literal["dm", "group", "thread"]
_SAFE = re.compile(r"[^a-z0-9._-]")


@dataclass(frozen=True, slots=True)
class Identity:
    platform: str
    user_id: str
    display_name: str = ""
    username: str | None = None
    is_bot: bool = False

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
    kind: Literal["photo", "document", "audio", "voice", "video", "sticker", "other"]
    file_id: str
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None


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
    """A button press (Telegram callback query, Discord component); ``text`` is its data."""
    attachments: tuple[Attachment, ...] = field(default_factory=tuple)

    @property
    def dedup_key(self) -> str:
        """What makes a redelivered update recognisable."""
        return f"{self.platform}:{self.chat_id}:{self.update_id or self.message_id}"

    @property
    def addressed_to_bot(self) -> bool:
        """In a group the bot answers only when mentioned, replied to, or commanded."""
        return self.chat_type == "dm" or self.mentions_bot or self.replies_to_bot or self.is_command


Button = tuple[str, str]  # (label, data): pressing it comes back as an is_callback message


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """A reply. ``markdown``: render the text as Markdown (model replies) or send it as
    plain text (command output). ``skip_chunks``: the first N chunks were already delivered
    (a retry after flood control sends only the rest)."""

    platform: str
    chat_id: str
    text: str
    thread_id: str | None = None
    reply_to_message_id: str | None = None
    markdown: bool = True
    buttons: tuple[Button, ...] = ()
    skip_chunks: int = 0
