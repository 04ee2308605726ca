"""Storage with no knowledge of models or platforms: curated memory, scanner, archive."""

from memory.curated import (
    DELIMITER,
    FILE_NAMES,
    MAX_FAILURES_PER_TURN,
    TARGETS,
    BlockedEntry,
    DriftReport,
    MemoryLimits,
    MemoryScope,
    MemorySnapshot,
    MemoryStore,
    MemoryStoreError,
    MemoryStores,
    MemoryTurn,
    PendingWrite,
    Target,
    format_usage,
    parse_entries,
)
from memory.people import InvalidPersonError, validate_person
from memory.scan import Finding, scan

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
