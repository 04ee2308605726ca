"""Pure rendering of an ``OutboundMessage`` into Discord-sized chunks.

Discord counts message length in characters (2,000) and speaks Markdown natively, so model
replies go out as they are, split by ``adapters.chunking.split_message`` (fences closed and
reopened across chunks). Plain text (``markdown=False``, command output) is not escaped
either: what matters there is that ``@everyone``, ``@here`` and ``<@id>``/``<@&id>`` in it
cannot ping anyone, and that is enforced when sending (``AllowedMentions.none()``), not by
mangling the text.

Buttons are rendered as text lines at the end (``Approve 3 → /memory approve 3``): their data
is a command the person can type (or pick from the slash menu), which keeps the adapter free
of component state. The lines join the text before splitting, so they count toward the limit.
"""

from __future__ import annotations

from adapters.chunking import split_message
from adapters.messages import OutboundMessage

__all__ = ["LIMIT", "render"]

LIMIT = 2000


def _button_lines(message: OutboundMessage) -> str:
    lines = []
    for label, data in message.buttons:
        lines.append(f"{label} → {data}" if label.strip() and label != data else f"→ {data}")
    return "\n".join(lines)


def render(message: OutboundMessage) -> list[str]:
    """The chunks to send, in order, each at most 2,000 characters."""
    text = message.text.strip("\n")
    buttons = _button_lines(message)
    if buttons:
        text = f"{text}\n\n{buttons}" if text.strip() else buttons
    return split_message(text, LIMIT)
