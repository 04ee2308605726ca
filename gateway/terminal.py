"""Text for an operator's terminal: what a chat wrote must not drive or hide things there."""

from __future__ import annotations

import unicodedata

from memory.scan import INVISIBLE_CHARS

__all__ = ["visible"]


def visible(text: str) -> str:
    """Control, invisible and bidi characters as ``<U+XXXX>`` (newlines and tabs kept)."""
    return "".join(
        f"<U+{ord(c):04X}>"
        if c in INVISIBLE_CHARS or (c not in "\n\t" and unicodedata.category(c) == "Cc")
        else c
        for c in text
    )
