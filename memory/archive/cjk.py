"""The CJK gram index (``messages_cjk``, migration m007): what it holds and how it is written.

Chinese and Japanese are written without spaces and most Chinese words are one or two
characters, Korean words carry particles (서울에서): the word index sees a whole run as one
token, and the trigram index cannot serve a term shorter than 3 characters. So every message
with CJK text also gets a row in ``messages_cjk`` (FTS5, ``ascii`` tokenizer, ``detail=none``)
holding its *grams*: each CJK character on its own, and each pair of neighbouring letters or
digits of which at least one is CJK (東京 gives 東, 京, 東京; 2024年5月 gives 年, 月, 4年, 年5,
5月), plus the message's scope tokens, as in the word index. A 1- or 2-character CJK term
(``indexed``) is then one token lookup, intersected with the viewer's scope token inside the
index. Messages without CJK have no row and cost one regular-expression scan in Python.

Why grams are made here and not in SQL: a trigger cannot loop over a string (no CTEs in
triggers), and a Python function called from a trigger would make every write to
``messages`` fail on a connection that has not registered it (the ``sqlite3`` shell, a
repair by hand). So the writer adds the rows it inserted (``index_messages``), the
migration and ``Archive.repair`` fill the index in batches (``backfill``), and triggers do
what needs no grams: a deleted message loses its row, a change of scope rewrites it (FTS5
re-reads the stored grams), and a change of content drops it (the writer never changes
content; ``Archive.check`` reports such a row as missing and ``repair`` restores it). The
grams are stored (a regular FTS5 table) exactly so that deletes and scope changes need no
Python.

The ``ascii`` tokenizer keeps every non-ASCII character as part of a token and folds ASCII
case only, as ``LIKE`` does; a term is still re-checked with ``LIKE`` on the message.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Iterable, Sequence
from itertools import pairwise

__all__ = [
    "CJK_CLASS",
    "CJK_GLOB",
    "backfill",
    "grams",
    "has_cjk",
    "index_messages",
    "indexed",
    "indexed_count",
]

# Han (URO, extension A, compatibility, extensions B-H), 々〆〇, kana (with the halfwidth
# forms and the small katakana extension), Hangul syllables and jamo (with the halfwidth
# forms). One character class for the query router, the grams and the SQL GLOB.
_RANGES = (
    ("\u1100", "\u11ff"),  # Hangul Jamo
    ("\u3005", "\u3007"),  # 々 〆 〇
    ("\u3040", "\u30ff"),  # Hiragana, Katakana
    ("\u3130", "\u318f"),  # Hangul compatibility jamo
    ("\u31f0", "\u31ff"),  # Katakana phonetic extensions
    ("\u3400", "\u4dbf"),  # CJK extension A
    ("\u4e00", "\u9fff"),  # CJK unified ideographs
    ("\uac00", "\ud7af"),  # Hangul syllables
    ("\uf900", "\ufaff"),  # CJK compatibility ideographs
    ("\uff66", "\uffdc"),  # halfwidth Katakana and Hangul
    ("\U00020000", "\U000323af"),  # CJK extensions B to H
)
CJK_CLASS = "[" + "".join(f"{a}-{b}" for a, b in _RANGES) + "]"
CJK_GLOB = f"'*{CJK_CLASS}*'"  # SQL: search_text GLOB this (code-point ranges, as in re)
_CJK = re.compile(CJK_CLASS)
_RUN = re.compile(CJK_CLASS + "+")
BATCH = 2_000  # messages per backfill query
log = logging.getLogger(__name__)


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def grams(text: str | None) -> str | None:
    """The grams of ``text``, space-separated, each once; None when it has none."""
    if not text:
        return None
    found: dict[str, None] = {}
    for run in _RUN.finditer(text):
        start, end = run.span()
        chars = run.group()
        for ch in chars:
            if ch.isalnum():
                found[ch] = None
        left = text[start - 1] if start > 0 and text[start - 1].isalnum() else ""
        right = text[end] if end < len(text) and text[end].isalnum() else ""
        window = left + chars + right
        for a, b in pairwise(window):
            if a.isalnum() and b.isalnum():
                found[a + b] = None
    return " ".join(found) or None


def indexed(term: str) -> bool:
    """Whether ``messages_cjk`` answers ``term`` exactly: a CJK character, or two letters or
    digits of which one is CJK."""
    return (
        0 < len(term) <= 2 and all(c.isalnum() for c in term) and any(_CJK.match(c) for c in term)
    )


INSERT = "INSERT INTO messages_cjk(rowid, grams, scope) VALUES (?, ?, ?)"


def _insert(db: sqlite3.Connection, rows: Iterable[tuple[int, str | None, str]]) -> int:
    found = [(rowid, g, scope) for rowid, text, scope in rows if (g := grams(text)) is not None]
    db.executemany(INSERT, found)
    return len(found)


def index_messages(db: sqlite3.Connection, ids: Sequence[int]) -> int:
    """Add the gram rows of the messages ``ids`` (just inserted, in this transaction)."""
    added = 0
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT id, search_text, scope FROM messages WHERE id IN ({marks})"
            f" AND search_text GLOB {CJK_GLOB}",
            chunk,
        ).fetchall()
        added += _insert(db, rows)
    return added


def _candidates(db: sqlite3.Connection, after: int) -> list[tuple[int, str, str]]:
    return db.execute(
        "SELECT id, search_text, scope FROM messages WHERE id > ?"
        f" AND search_text GLOB {CJK_GLOB} ORDER BY id LIMIT ?",
        (after, BATCH),
    ).fetchall()


def backfill(db: sqlite3.Connection, *, after: int = 0) -> int:
    """Index every CJK message with an id above ``after``, ``BATCH`` messages at a time (the
    memory it takes does not grow with the archive); returns the rows added."""
    (last,) = db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    added = 0
    logged = 0
    while rows := _candidates(db, after):
        added += _insert(db, rows)
        after = rows[-1][0]
        if added - logged >= 50_000:
            logged = added
            log.info("archive: CJK index: %d messages indexed (up to id %d of %d)",
                     added, after, last)  # fmt: skip
    if logged:
        log.info("archive: CJK index: %d messages indexed", added)
    return added


def indexed_count(db: sqlite3.Connection) -> int:
    """How many messages should have a row in ``messages_cjk`` (for ``Archive.check``)."""
    count = 0
    after = 0
    while rows := _candidates(db, after):
        count += sum(1 for _, text, _ in rows if grams(text) is not None)
        after = rows[-1][0]
    return count
