"""Storage with no knowledge of models or platforms: curated memory, scanner, archive."""

from memory.entries import DELIMITER, FILE_NAMES, TARGETS, Target, format_usage, parse_entries
from memory.scan import Finding, scan
from memory.store import (
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
    "DriftReport",
    "Finding",
    "InvalidPersonError",
    "MemoryLimits",
    "MemoryScope",
    "MemorySnapshot",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryStores",
    "MemoryTurn",
    "PendingWrite",
    "Target",
    "format_usage",
    "parse_entries",
    "scan",
    "validate_person",
]
