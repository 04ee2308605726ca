"""Split a long reply into platform-sized chunks without breaking code fences.

``split_message(text, limit, measure=...)`` returns chunks whose measured length is at most
``limit``. It prefers to cut at a blank line, then a line end, then a space, and only then
mid-word. A cut inside a fenced code block closes the fence at the end of the chunk and
reopens it (same info string, e.g. ```` ```python ````) at the start of the next one, so
every chunk renders on its own.

``measure`` counts what the platform counts: ``utf16_len`` for Telegram (4,096 UTF-16 code
units), ``len`` for Discord (2,000 characters). Python strings never hold half a surrogate
pair, so no cut can split an emoji's UTF-16 encoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["REPLY_FILE", "file_caption", "fold", "split_message", "utf16_len"]

REPLY_FILE = "reply.md"

_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})(.*)$")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts message length."""
    return len(text.encode("utf-16-le")) // 2


def _marker(fence_line: str) -> str:
    match = _FENCE.match(fence_line)
    assert match is not None
    return match.group(2)


def _open_fence_after(text: str, start: str | None) -> str | None:
    """The fence line still open at the end of ``text`` (``start``: open at its start).

    A fence closes on a line of the same character, at least as long, with no info string
    (CommonMark)."""
    current = start
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if not match:
            continue
        if current is None:
            current = line.strip()
            continue
        opened = _marker(current)
        marker = match.group(2)
        if marker[0] == opened[0] and len(marker) >= len(opened) and not match.group(3).strip():
            current = None
    return current


def split_message(text: str, limit: int, *, measure: Callable[[str], int] = len) -> list[str]:
    """Chunks of at most ``limit`` (by ``measure``); empty text gives no chunk."""
    if limit < 40:
        raise ValueError("limit too small to hold a code fence and some text")
    text = text.strip("\n")
    chunks: list[str] = []
    fence: str | None = None  # fence line open at the start of the remaining text
    rest = text
    while rest:
        prefix = ""
        if fence:  # reopen with the info string, unless it would crowd out the content
            prefix = f"{fence if measure(fence) <= limit // 4 else _marker(fence)}\n"
        room = limit - measure(prefix)
        if measure(rest) <= room and _open_fence_after(rest, fence) is None:
            chunks.append(prefix + rest)
            break
        # reserve space for a closing fence line in case the cut lands inside a block
        reserve = measure("\n" + "`" * 12)
        cut = _cut(rest, room - reserve, measure)
        piece, rest = rest[:cut].rstrip("\n"), rest[cut:].lstrip("\n")
        still_open = _open_fence_after(piece, fence)
        chunk = prefix + piece
        if still_open is not None:
            chunk += "\n" + _marker(still_open)
        chunks.append(chunk)
        fence = still_open
    return [c for c in chunks if c.strip()]


def _cut(text: str, room: int, measure: Callable[[str], int]) -> int:
    """The best place to end a chunk holding at most ``room`` of ``text``."""
    # the longest prefix that fits, found by bisection on the measure
    low, high = 1, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if measure(text[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    fits = text[:low]
    floor = len(fits) // 2  # do not make chunks tiny to find a nice boundary
    for separator in ("\n\n", "\n", " "):
        at = fits.rfind(separator)
        if at >= floor:
            return at + len(separator)
    return low


def fold(count: int, most: int) -> tuple[int, bool]:
    """How to send ``count`` chunks in at most ``most`` messages (0: no limit): the number
    of chunks sent as messages, and whether the whole text follows as a file
    (``REPLY_FILE``) in the last message. A reply too long to read in a chat is still all
    there, in one piece a person can open, save or search."""
    if most <= 0 or count <= most:
        return count, False
    return max(most - 1, 0), True


def file_caption(text: str) -> str:
    """What the message carrying the whole reply as a file says."""
    return f"The whole answer ({len(text):,} characters) is in this file."
