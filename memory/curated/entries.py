"""Pure entry arithmetic for the bounded memory files: parse, join, match, render.

Nothing here touches the disk; ``store.py`` owns I/O, locking and the tool contract.

A memory file is its entries joined by ``DELIMITER`` (``"\\n§\\n"``): no header, no trailing
delimiter, entries may span lines. ``parse`` is the inverse of ``join`` on every list that
``join`` can produce from clean entries, and ``join(parse(raw)) == raw`` is exactly the
"this file was written by us" test that the drift guard uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from memory.curated.errors import MemoryStoreError

__all__ = [
    "DELIMITER",
    "FILE_NAMES",
    "TARGETS",
    "AmbiguousMatch",
    "ContentError",
    "NoMatch",
    "Target",
    "clean_content",
    "find_entry",
    "format_usage",
    "join_entries",
    "parse_entries",
    "preview",
    "render_block",
    "usage_chars",
]

DELIMITER = "\n§\n"
Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
FILE_NAMES: dict[Target, str] = {"memory": "MEMORY.md", "user": "USER.md"}
TITLES: dict[Target, str] = {
    "memory": "MEMORY (your notes)",
    "user": "USER PROFILE (who the user is)",
}
RULE = "═" * 46


def parse_entries(raw: str) -> list[str]:
    """Split on the full delimiter, strip, drop empties, keep the first of exact repeats."""
    seen: set[str] = set()
    entries: list[str] = []
    for part in raw.split(DELIMITER):
        entry = _trimmed(part)
        if entry and entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


def _trimmed(part: str) -> str:
    """A part without edge white space and without ``§`` lines at its edges: a hand-edited
    file may have a ``§`` line next to the delimiter (``"a\n§ \n§\nb"``), and an entry that
    kept it would join into a new delimiter and parse differently the next time."""
    entry = part.strip()
    while entry:
        lines = entry.split("\n")
        if lines[0].strip() == "§":
            lines = lines[1:]
        elif lines[-1].strip() == "§":
            lines = lines[:-1]
        else:
            break
        entry = "\n".join(lines).strip()
    return entry


def join_entries(entries: Iterable[str]) -> str:
    return DELIMITER.join(entries)


def usage_chars(entries: Sequence[str]) -> int:
    """Characters (not tokens) the entries occupy on disk."""
    return len(join_entries(entries))


def format_usage(chars: int, limit: int) -> str:
    """``"67% — 1,474/2,200 chars"``; the percentage is floored so 100% means full."""
    percent = (chars * 100) // limit if limit > 0 else 0
    return f"{percent}% — {chars:,}/{limit:,} chars"


class ContentError(MemoryStoreError, ValueError):
    """Content that can never be stored as one entry (empty, or holds a delimiter line)."""


def clean_content(content: str) -> str:
    """Normalise newlines and strip; refuse text that would not survive a round trip."""
    text = content.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise ContentError("content is empty")
    if any(line.strip() == "§" for line in text.split("\n")):
        raise ContentError(
            "content contains a line holding only '§', which is the entry separator; "
            "write it as one entry without that line"
        )
    bad = [c for c in text if (ord(c) < 32 and c not in "\n\t") or ord(c) == 127]
    if bad:
        raise ContentError(f"content contains control character U+{ord(bad[0]):04X}")
    return text


def preview(entry: str, width: int = 80) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class NoMatch(MemoryStoreError, LookupError):
    def __init__(self, old_text: str) -> None:
        super().__init__(f"no entry matches {preview(old_text, 60)!r}")
        self.old_text = old_text


class AmbiguousMatch(MemoryStoreError, LookupError):
    def __init__(self, old_text: str, matches: list[str]) -> None:
        super().__init__(
            f"{len(matches)} different entries contain {preview(old_text, 60)!r}; "
            "use a longer, unique part of the one you mean"
        )
        self.old_text = old_text
        self.matches = matches


def find_entry(entries: Sequence[str], old_text: str) -> int:
    """Index of the entry ``old_text`` designates.

    An entry equal to ``old_text`` wins; otherwise the entries containing it. Several
    identical matches designate the first; several distinct ones are ambiguous.
    """
    needle = old_text.strip()
    if not needle:
        raise NoMatch(old_text)
    for index, entry in enumerate(entries):
        if entry == needle:
            return index
    hits = [index for index, entry in enumerate(entries) if needle in entry]
    if not hits:
        raise NoMatch(old_text)
    distinct = list(dict.fromkeys(entries[i] for i in hits))
    if len(distinct) > 1:
        raise AmbiguousMatch(old_text, [preview(e) for e in distinct])
    return hits[0]


def render_block(target: Target, entries: Sequence[str], limit: int, *, chars: int) -> str:
    """The snapshot block for one file: rule, title with usage, rule, entries.

    ``chars`` is the live usage (which may differ from ``entries`` when entries were
    replaced by BLOCKED placeholders). A file grown far past its limit by hand is cut
    head + tail at twice the limit so it can never flood the context window.
    """
    if not entries:
        return ""
    body = join_entries(entries)
    cap = max(2 * limit, 1000)
    over = " — OVER LIMIT" if chars > limit else ""
    if len(body) > cap:
        head, tail = (cap * 7) // 10, cap // 5
        omitted = len(body) - head - tail
        body = (
            body[:head]
            + f"\n[… {omitted:,} chars cut: this file is over its limit; consolidate it …]\n"
            + body[-tail:]
        )
    title = f"{TITLES[target]} [{format_usage(chars, limit)}{over}]"
    return f"{RULE}\n{title}\n{RULE}\n{body}"
