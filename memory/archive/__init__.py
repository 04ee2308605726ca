"""The archive: every message in SQLite with FTS5 (schema and migrations, the write connection,
import, and search for the session_search tool).
"""

from __future__ import annotations

from memory.archive.database import (
    Archive,
    ArchiveError,
    ImportFormatError,
    ImportReport,
    Message,
    NewMessage,
    Session,
    SessionSpec,
    new_session_id,
)
from memory.archive.migrations import MigrationError
from memory.archive.query import ParsedQuery, parse_query
from memory.archive.records import without_header
from memory.archive.search import (
    LIKE_SCAN_ROWS,
    READ_ALL_UP_TO,
    READ_HEAD,
    READ_TAIL,
    Context,
    Discovery,
    Hit,
    Listed,
    MessageNotInSession,
    Reading,
    Scroll,
    Searcher,
    SessionNotFound,
    SessionResult,
    Sort,
    when,
)

__all__ = [
    "LIKE_SCAN_ROWS",
    "READ_ALL_UP_TO",
    "READ_HEAD",
    "READ_TAIL",
    "Archive",
    "ArchiveError",
    "Context",
    "Discovery",
    "Hit",
    "ImportFormatError",
    "ImportReport",
    "Listed",
    "Message",
    "MessageNotInSession",
    "MigrationError",
    "NewMessage",
    "ParsedQuery",
    "Reading",
    "Scroll",
    "Searcher",
    "Session",
    "SessionNotFound",
    "SessionResult",
    "SessionSpec",
    "Sort",
    "new_session_id",
    "parse_query",
    "when",
    "without_header",
]
