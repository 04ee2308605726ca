"""The archive: every message of every session in SQLite with FTS5, the history the
``session_search`` tool reads. ``records`` holds the typed rows and shared SQL, ``migrations``
the schema, ``writer`` the one write connection (group commit), ``connections`` the private
file, the reader connections and read deadlines, ``cjk`` the CJK gram index, ``transfer``
JSONL import, ``database`` (``Archive``) opening, reading and writing, ``query`` query
sanitising and routing, ``indexes`` the scoped reads of the indexes, ``fusion`` the seam for
a ranking by meaning that ``discover`` fuses with the words' (``SemanticRanker``), and
``search`` the ranked, person-scoped search and the typed reads behind the tool, ``store`` the seam
(``ArchiveStore``, ``SearchIndexes``, ``SessionSearch``) that the PostgreSQL archive
(``memory.archive.postgres``, imported only where it is used: asyncpg is an extra) serves
too. Exceptions
derive from ``ArchiveError`` (``sqlite3.Error`` for a file that is not a database).
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
    read_deadline,
)
from memory.archive.fusion import FUSION, Fusion, SemanticRanker, fuse, fused
from memory.archive.migrations import MigrationError
from memory.archive.query import ParsedQuery, parse_query
from memory.archive.records import visible_clause, without_header
from memory.archive.results import (
    Discovery,
    Hit,
    Listed,
    Match,
    MessageNotInSession,
    Reading,
    Scroll,
    SessionNotFound,
    SessionResult,
    excerpt,
    when,
)
from memory.archive.search import (
    HITS_PER_SESSION,
    LIKE_SCAN_ROWS,
    READ_ALL_UP_TO,
    READ_HEAD,
    READ_TAIL,
    Searcher,
    Sort,
)
from memory.archive.store import ArchiveStore, Scope, SearchIndexes, SessionSearch

__all__ = [
    "FUSION",
    "HITS_PER_SESSION",
    "LIKE_SCAN_ROWS",
    "READ_ALL_UP_TO",
    "READ_HEAD",
    "READ_TAIL",
    "Archive",
    "ArchiveError",
    "ArchiveStore",
    "Discovery",
    "Fusion",
    "Hit",
    "ImportFormatError",
    "ImportReport",
    "Listed",
    "Match",
    "Message",
    "MessageNotInSession",
    "MigrationError",
    "NewMessage",
    "ParsedQuery",
    "Reading",
    "Scope",
    "Scroll",
    "SearchIndexes",
    "Searcher",
    "SemanticRanker",
    "Session",
    "SessionNotFound",
    "SessionResult",
    "SessionSearch",
    "SessionSpec",
    "Sort",
    "excerpt",
    "fuse",
    "fused",
    "new_session_id",
    "parse_query",
    "read_deadline",
    "visible_clause",
    "when",
    "without_header",
]
