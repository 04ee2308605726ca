"""Storage with no knowledge of models or platforms: ``curated`` (each person's bounded
MEMORY.md and USER.md), ``archive`` (every message, searchable), ``skills`` (procedures on
disk), ``scan`` (the scanner for text that reaches a prompt), and the parts they share:
``files`` (locks, atomic writes, private folders) and ``people`` (person ids). Nothing here
imports ``agent_core`` or ``gateway``; the subsystems do not import one another except the
scanner.
"""

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
