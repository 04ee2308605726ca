"""A line typed at the console -> ``InboundMessage`` (pure).

The console is one person's private chat: every line is a DM from ``sender`` in the chat
``chat_id`` (the session's name, so the gateway's session key is
``console:dm:<chat id>``). A line starting with ``/`` is a command, as a typed
``/command`` is on the other platforms; a blank line is nothing.
"""

from __future__ import annotations

from datetime import datetime

from adapters.messages import Identity, InboundMessage

__all__ = ["normalize"]


def normalize(
    line: str, *, sender: Identity, chat_id: str, message_id: str, now: datetime
) -> InboundMessage | None:
    text = line.strip()
    if not text:
        return None
    return InboundMessage(
        platform=sender.platform,
        chat_id=chat_id,
        chat_type="dm",
        sender=sender,
        text=text,
        message_id=message_id,
        timestamp=now,
        is_command=text.startswith("/"),
    )
