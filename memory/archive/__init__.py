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
from memory.archive.records import without_header
from memory.archive.search import Searcher, SearchTool, message_json, session_json, when

__all__ = [
    "Archive",
    "ArchiveError",
    "ImportFormatError",
    "ImportReport",
    "Message",
    "MigrationError",
    "NewMessage",
    "SearchTool",
    "Searcher",
    "Session",
    "SessionSpec",
    "message_json",
    "new_session_id",
    "session_json",
    "when",
    "without_header",
]
