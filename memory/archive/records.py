"""The archive's vocabulary: typed rows, errors, scope tokens and shared SQL fragments.

Errors::

    ArchiveError
    └── ImportFormatError     a JSONL line that is not a message
    MigrationError            (memory.archive.migrations) the schema cannot be brought up to date;
                              sqlite3.Error for a file that is not a database
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "MESSAGE_COLUMNS",
    "ROLES",
    "SESSION_COLUMNS",
    "ArchiveError",
    "ImportFormatError",
    "ImportReport",
    "Message",
    "NewMessage",
    "Role",
    "Session",
    "SessionSpec",
    "message_from_row",
    "new_session_id",
    "scope_token",
    "session_from_row",
    "title_of",
    "visible_clause",
    "without_header",
]

Role = Literal["user", "assistant", "tool", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")


class ArchiveError(Exception):
    """Base of the archive's exceptions."""


class ImportFormatError(ArchiveError, ValueError):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def scope_token(person: str) -> str:
    """One FTS token per person: letters and digits only, so no tokenizer splits it."""
    return "p" + hashlib.blake2b(person.encode("utf-8"), digest_size=10).hexdigest()


def new_session_id() -> str:
    return "s" + uuid.uuid4().hex[:20]


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What the gateway knows when a session starts."""

    id: str
    platform: str
    chat_id: str
    chat_type: str
    people: tuple[str, ...]
    thread_id: str | None = None
    session_key: str | None = None
    parent_id: str | None = None
    title: str | None = None
    started_at: float | None = None
    system_prompt: str | None = None  # frozen for the session; kept so a restart resumes it


@dataclass(frozen=True, slots=True)
class NewMessage:
    role: Role
    content: str
    speaker: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    created_at: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    external_id: str | None = None


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    session_id: str
    role: Role
    speaker: str | None
    content: str
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    tool_name: str | None
    created_at: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    external_id: str | None


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    parent_id: str | None
    root_id: str
    session_key: str | None
    platform: str
    chat_id: str
    chat_type: str
    thread_id: str | None
    title: str | None
    started_at: float
    last_active_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    people: tuple[str, ...] = ()


@dataclass(slots=True)
class ImportReport:
    read: int = 0
    imported: int = 0
    skipped_duplicates: int = 0
    sessions: set[str] = field(default_factory=set)


MESSAGE_COLUMNS = (
    "id, session_id, role, speaker, content, tool_calls, tool_call_id, tool_name, created_at,"
    " prompt_tokens, completion_tokens, cached_tokens, external_id"
)
SESSION_COLUMNS = (
    "id, parent_id, root_id, session_key, platform, chat_id, chat_type, thread_id, title,"
    " started_at, last_active_at, ended_at, end_reason, message_count"
)


def message_from_row(row: Sequence[Any]) -> Message:
    calls = json.loads(row[5]) if row[5] else None
    return Message(row[0], row[1], row[2], row[3], row[4], calls, *row[6:13])


def session_from_row(row: Sequence[Any], people: Sequence[str] = ()) -> Session:
    return Session(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
        row[10],
        row[11],
        row[12],
        row[13],
        tuple(people),
    )


def visible_clause(column: str = "session_id") -> str:
    """SQL that keeps ``column`` to sessions the person bound to ``:viewer`` took part in."""
    return f"{column} IN (SELECT session_id FROM session_people WHERE person = :viewer)"


TITLE_CHARS = 80


def without_header(text: str) -> str:
    """A user message without the ``[time · speaker]`` line the agent adds for the model."""
    first, newline, rest = text.partition("\n")
    if newline and first.startswith("[") and first.endswith("]") and rest.strip():
        return rest
    return text


def title_of(text: str | None) -> str | None:
    """A session title: the first user message without its header line, flattened and
    cut."""
    if not text:
        return None
    flat = " ".join(without_header(text).split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"
