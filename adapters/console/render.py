"""``OutboundMessage`` -> text for a terminal (pure).

What the gateway sends carries text nobody here wrote (model replies, memory entries,
titles): ``visible`` shows every character that could drive or hide things on a terminal
(escape sequences, carriage returns, bidi overrides, zero-width and tag characters) as
``<U+XXXX>``. It is this package's own copy of ``gateway.terminal.visible`` — adapters
import nothing of the gateway's — and escapes by Unicode category, a superset of it.

Markdown stays as written (it reads well as plain text). A button is shown with the
command it stands for, which the person can type: ``✓ Approve → /memory approve 3``. A
terminal has no message size, so a reply is one chunk whatever its length.
"""

from __future__ import annotations

import unicodedata

from adapters.messages import OutboundMessage

__all__ = ["render", "visible"]

_KEPT = frozenset("\n\t")
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_TAGS = range(0xE0000, 0xE0080)  # "ASCII smuggling": invisible, partly unassigned
# Shown as nothing though not format characters: the combining grapheme joiner, the fillers.
_BLANK = frozenset("\u034f\u115f\u1160\u3164\uffa0")


def visible(text: str) -> str:
    """Control, format (bidi, zero-width, soft hyphen) and tag characters, surrogates,
    line/paragraph separators and blank fillers as ``<U+XXXX>``; newlines and tabs kept.
    Idempotent."""
    return "".join(
        f"<U+{ord(c):04X}>"
        if c not in _KEPT and (unicodedata.category(c) in _HIDDEN or ord(c) in _TAGS or c in _BLANK)
        else c
        for c in text
    )


def render(message: OutboundMessage) -> str | None:
    """The reply as printed, or None when nothing of it is left to print (a retry of a
    reply already shown)."""
    if message.skip_chunks:
        return None
    lines = [visible(message.text.rstrip())]
    lines += [f"  {visible(label)} → {visible(data)}" for label, data in message.buttons]
    return "\n".join(lines)
