"""Pure rendering of an ``OutboundMessage`` into Discord-sized chunks.

Discord counts message length in characters (2,000) and speaks Markdown natively, so model
replies go out as they are, split by ``adapters.chunking.split_message`` (fences closed and
reopened across chunks). Plain text (``markdown=False``, command output) is not escaped
either: what matters there is that ``@everyone``, ``@here`` and ``<@id>``/``<@&id>`` in it
cannot ping anyone, and that is enforced when sending (``AllowedMentions.none()``), not by
mangling the text.

Buttons go out as real components (``adapters.discord.components``), on the last chunk.
Their data is a command, so a button whose command the text does not show already also
gets a line at the end (``Approve 3 → /memory approve 3``): the person can always type it
(or pick it from the slash menu), and a button Discord could not carry is not lost. The
lines join the text before splitting, so they count toward the limit.

``nonce(key, index)`` names chunk ``index`` of the reply ``key`` (the outbox row) the same
way on every attempt. discord.py sends every message with a nonce and ``enforce_nonce``, and
for a few minutes Discord answers a second message of the bot's with the same nonce with the
first one instead of posting it again: a chunk re-sent after a restart is not duplicated.
"""

from __future__ import annotations

import hashlib
import re

from adapters.chunking import split_message
from adapters.messages import OutboundMessage

__all__ = ["LIMIT", "nonce", "render"]

LIMIT = 2000


def _button_lines(message: OutboundMessage) -> str:
    lines = []
    for label, data in message.buttons:
        if re.search(re.escape(data) + r"(?!\S)", message.text):
            continue  # the text already says what to type
        lines.append(f"{label} → {data}" if label.strip() and label != data else f"→ {data}")
    return "\n".join(lines)


def render(message: OutboundMessage) -> list[str]:
    """The chunks to send, in order, each at most 2,000 characters."""
    text = message.text.strip("\n")
    buttons = _button_lines(message)
    if buttons:
        text = f"{text}\n\n{buttons}" if text.strip() else buttons
    return split_message(text, LIMIT)


def nonce(key: str, index: int) -> str:
    """The nonce of chunk ``index`` of the reply ``key``: 24 hex digits (Discord takes 25)."""
    return hashlib.blake2b(f"{key}#{index}".encode(), digest_size=12).hexdigest()
