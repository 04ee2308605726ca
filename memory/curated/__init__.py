"""Curated memory: the bounded ``MEMORY.md`` and ``USER.md`` of a person or a chat, replayed
into every session's system prompt. ``entries`` is the file format, ``operations`` parses
and applies the ``memory`` tool's arguments, ``store`` holds a store's files and rules
(limits, locking, the drift guard, snapshots), ``scope`` maps people to stores, ``pending``
and ``approval`` stage writes and decide them. Every operation answers with a typed outcome
(``outcomes``: ``Saved``, ``Staged``, ``Done``, ``Refused``); exceptions derive from
``MemoryStoreError`` (``errors``).
"""

from __future__ import annotations

from memory.curated.approval import Decision
from memory.curated.entries import (
    DELIMITER,
    FILE_NAMES,
    TARGETS,
    AmbiguousMatch,
    ContentError,
    NoMatch,
    Target,
    format_usage,
    parse_entries,
    preview,
    usage_chars,
)
from memory.curated.errors import MemoryStoreError
from memory.curated.operations import Operation
from memory.curated.outcomes import Change, Done, Outcome, Refused, Saved, Staged, WriteOutcome
from memory.curated.scope import MemoryScope, MemoryStores
from memory.curated.store import (
    MAX_FAILURES_PER_TURN,
    BlockedEntry,
    DriftReport,
    MemoryLimits,
    MemorySnapshot,
    MemoryStore,
    MemoryTurn,
    PendingWrite,
)
from memory.people import InvalidPersonError, validate_person

__all__ = [
    "DELIMITER",
    "FILE_NAMES",
    "MAX_FAILURES_PER_TURN",
    "TARGETS",
    "AmbiguousMatch",
    "BlockedEntry",
    "Change",
    "ContentError",
    "Decision",
    "Done",
    "DriftReport",
    "InvalidPersonError",
    "MemoryLimits",
    "MemoryScope",
    "MemorySnapshot",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryStores",
    "MemoryTurn",
    "NoMatch",
    "Operation",
    "Outcome",
    "PendingWrite",
    "Refused",
    "Saved",
    "Staged",
    "Target",
    "WriteOutcome",
    "format_usage",
    "parse_entries",
    "preview",
    "usage_chars",
    "validate_person",
]
