"""JSONL import into the archive: validation of each line, then batched writes.

A line is ``{"session", "person", "platform", "chat", "role": "user"|"assistant",
"content", "created_at": ISO-8601, "external_id"?}``. ``parse_record`` checks every field
and names the line of the first problem; ``import_batch`` writes a batch of parsed records
in one transaction on the writer thread (``memory.archive.writer``) with one ``executemany``.

Idempotence: a message is skipped when its session already holds its ``external_id``; an
exported record (``session`` is an archive id, ``external_id`` is ``mnemo:<message id>``)
is skipped when that message is still in that session.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memory.archive.cjk import backfill, has_cjk
from memory.archive.records import ImportFormatError, SessionSpec, title_of
from memory.archive.writer import ensure_session
from memory.people import InvalidPersonError, validate_person

__all__ = ["ImportRecord", "import_batch", "parse_record"]

REQUIRED = ("session", "person", "platform", "chat", "role", "content", "created_at")
OWN_SESSION_ID_CHARS = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class ImportRecord:
    session: str
    person: str
    platform: str
    chat: str
    role: Literal["user", "assistant"]
    content: str
    created_at: float
    external_id: str | None

    @property
    def hashed_session_id(self) -> str:
        digest = hashlib.blake2b(f"{self.platform}\0{self.session}".encode(), digest_size=10)
        return "i" + digest.hexdigest()

    @property
    def looks_like_own_session_id(self) -> bool:
        name = self.session
        return len(name) == 21 and name[0] in "si" and set(name[1:]) <= OWN_SESSION_ID_CHARS


def parse_record(text: str, line: int) -> ImportRecord:
    """One JSONL import line, validated field by field."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(line, f"not JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise ImportFormatError(line, "expected a JSON object")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise ImportFormatError(line, f"missing {', '.join(missing)}")
    unknown = sorted(set(raw) - {*REQUIRED, "external_id"})
    if unknown:
        raise ImportFormatError(line, f"unknown key(s) {', '.join(unknown)}")
    for key in REQUIRED:
        if not isinstance(raw[key], str):
            raise ImportFormatError(line, f"{key} must be a string, not {_json_kind(raw[key])}")
    if raw.get("external_id") is not None and not isinstance(raw["external_id"], str):
        raise ImportFormatError(line, "external_id must be a string")
    if raw["role"] not in ("user", "assistant"):
        raise ImportFormatError(line, f"role must be 'user' or 'assistant', not {raw['role']!r}")
    try:
        stamp = datetime.fromisoformat(raw["created_at"])
    except ValueError:
        raise ImportFormatError(
            line, f"created_at is not ISO-8601: {raw['created_at']!r}"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    try:  # e.g. 0001-01-01T00:00+05:00 lies before year 1 in UTC
        stamp.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ImportFormatError(
            line, f"created_at is out of range: {raw['created_at']!r}"
        ) from None
    for key in ("session", "person", "platform", "chat"):
        if not raw[key].strip():
            raise ImportFormatError(line, f"{key} is empty")
    try:
        validate_person(raw["person"])
    except InvalidPersonError as exc:
        raise ImportFormatError(line, str(exc)) from None
    return ImportRecord(
        raw["session"],
        raw["person"],
        raw["platform"],
        raw["chat"],
        raw["role"],
        raw["content"],
        stamp.timestamp(),
        raw.get("external_id"),
    )


def import_batch(
    db: sqlite3.Connection, records: Sequence[ImportRecord]
) -> tuple[int, int, set[str]]:
    """Write ``records`` (inside the caller's transaction); return imported, skipped, sessions."""
    ids: dict[tuple[str, str], str] = {}
    first: dict[str, ImportRecord] = {}
    people: dict[str, set[str]] = {}
    for record in records:
        key = (record.platform, record.session)
        if key not in ids:
            ids[key] = _session_id(db, record)
        sid = ids[key]
        first.setdefault(sid, record)
        people.setdefault(sid, set()).add(record.person)
    for sid, record in first.items():
        ensure_session(
            db,
            SessionSpec(
                id=sid,
                platform=record.platform,
                chat_id=record.chat,
                chat_type="imported",
                people=tuple(sorted(people[sid])),
                started_at=record.created_at,
            ),
        )
    present = _exported_still_present(db, records, ids)
    rows = []
    for record in records:
        sid = ids[(record.platform, record.session)]
        if record.external_id in present.get(sid, ()):
            continue
        speaker = record.person if record.role == "user" else None
        rows.append(
            (sid, record.role, speaker, record.content, record.created_at, record.external_id, sid)
        )
    (before,) = db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
    cursor = db.executemany(
        "INSERT OR IGNORE INTO messages (session_id, role, speaker, content, created_at,"
        " external_id, scope) VALUES (?,?,?,?,?,?, (SELECT scope FROM sessions WHERE id = ?))",
        rows,
    )
    imported = max(cursor.rowcount, 0)
    if imported and any(has_cjk(row[3]) for row in rows):  # new rows: ids above ``before``
        backfill(db, after=before)
    titles = {}
    for record in records:
        sid = ids[(record.platform, record.session)]
        if record.role == "user" and sid not in titles:
            titles[sid] = title_of(record.content)
    db.executemany(
        "UPDATE sessions SET"
        " message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),"
        " started_at = min(started_at, coalesce((SELECT min(created_at) FROM messages m"
        "   WHERE m.session_id = sessions.id), started_at)),"
        " last_active_at = max(last_active_at, coalesce((SELECT max(created_at) FROM messages m"
        "   WHERE m.session_id = sessions.id), last_active_at)),"
        " title = COALESCE(title, ?) WHERE id = ?",
        [(titles.get(sid), sid) for sid in first],
    )
    return imported, len(records) - imported, set(first)


def _session_id(db: sqlite3.Connection, record: ImportRecord) -> str:
    """Our own session ids (an export) are kept; any other name is hashed."""
    if record.looks_like_own_session_id:
        row = db.execute("SELECT platform FROM sessions WHERE id = ?", (record.session,)).fetchone()
        if row is None or row[0] == record.platform:
            return record.session
    return record.hashed_session_id


def _exported_still_present(
    db: sqlite3.Connection, records: Sequence[ImportRecord], ids: dict[tuple[str, str], str]
) -> dict[str, set[str]]:
    """Session id → the ``mnemo:<id>`` external ids whose message is still in that session."""
    wanted: dict[int, tuple[str, str]] = {}
    for record in records:
        ext = record.external_id
        if ext and ext.startswith("mnemo:") and ext[6:].isdigit():
            wanted[int(ext[6:])] = (ids[(record.platform, record.session)], ext)
    present: dict[str, set[str]] = {}
    numbers = list(wanted)
    for start in range(0, len(numbers), 500):
        chunk = numbers[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT id, session_id FROM messages WHERE id IN ({marks})",
            chunk,
        ).fetchall()
        for number, session_id in rows:
            sid, ext = wanted[number]
            if sid == session_id:
                present.setdefault(sid, set()).add(ext)
    return present


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "a list"}
    return kinds.get(type(value), "an object" if isinstance(value, dict) else type(value).__name__)
