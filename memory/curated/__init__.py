"""Curated memory: the bounded MEMORY.md and USER.md of a person or a chat (entries, the memory
tool's operations, the store, staged writes and their approval).
"""

from __future__ import annotations

from memory.curated.approval import Decision
from memory.curated.entries import (
    DELIMITER,
    FILE_NAMES,
    TARGETS,
    Target,
    format_usage,
    parse_entries,
    preview,
    usage_chars,
)
from memory.curated.operations import Operation
from memory.curated.store import (
    MAX_FAILURES_PER_TURN,
    BlockedEntry,
    DriftReport,
    InvalidPersonError,
    MemoryLimits,
    MemoryScope,
    MemorySnapshot,
    MemoryStore,
    MemoryStoreError,
    MemoryStores,
    MemoryTurn,
    PendingWrite,
    validate_person,
)

__all__ = [
    "DELIMITER",
    "FILE_NAMES",
    "MAX_FAILURES_PER_TURN",
    "TARGETS",
    "BlockedEntry",
    "Decision",
    "DriftReport",
    "InvalidPersonError",
    "MemoryLimits",
    "MemoryScope",
    "MemorySnapshot",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryStores",
    "MemoryTurn",
    "Operation",
    "PendingWrite",
    "Target",
    "format_usage",
    "parse_entries",
    "preview",
    "usage_chars",
    "validate_person",
]
