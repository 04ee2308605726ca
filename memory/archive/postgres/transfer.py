"""JSONL import into the PostgreSQL archive, as ``memory.archive.transfer`` does into SQLite:
every line validated first (``parse_record``, shared), then batches written in one
transaction each. Idempotent the same way: a message is skipped when its session already
holds its ``external_id`` (``ON CONFLICT DO NOTHING`` on ``messages_external``), an exported
record (``mnemo:<id>``) when that message is still in that session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import asyncpg

from memory.archive.postgres.writes import Connection, clean, ensure_session, index_grams
from memory.archive.records import ImportReport, SessionSpec, title_of
from memory.archive.transfer import ImportRecord, parse_record

__all__ = ["import_batch", "import_records"]

INSERT_ROWS = (
    "INSERT INTO messages (session_id, role, speaker, content, created_at, external_id)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[],"
    " $6::text[]) ON CONFLICT (session_id, external_id) WHERE external_id IS NOT NULL"
    " DO NOTHING RETURNING id, search_text"
)
UPDATE_SESSION = (
    "UPDATE sessions SET"
    " message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id),"
    " started_at = least(started_at, coalesce((SELECT min(created_at) FROM messages m"
    "   WHERE m.session_id = sessions.id), started_at)),"
    " last_active_at = greatest(last_active_at, coalesce((SELECT max(created_at)"
    "   FROM messages m WHERE m.session_id = sessions.id), last_active_at)),"
    " title = coalesce(title, $1) WHERE id = $2"
)


async def import_records(
    pool: asyncpg.Pool,
    lines: Iterable[str],
    *,
    batch: int,
    progress: Callable[[int, int], None] | None,
) -> ImportReport:
    records = [parse_record(text, number) for number, text in enumerate(lines, 1) if text.strip()]
    report = ImportReport(read=len(records))
    for start in range(0, len(records), batch):
        async with pool.acquire() as db, db.transaction():
            imported, skipped, sessions = await import_batch(db, records[start : start + batch])
        report.imported += imported
        report.skipped_duplicates += skipped
        report.sessions |= sessions
        if progress is not None:
            progress(min(start + batch, len(records)), len(records))
    return report


async def import_batch(
    db: Connection, records: Sequence[ImportRecord]
) -> tuple[int, int, set[str]]:
    """Write ``records`` (inside the caller's transaction); return imported, skipped, sessions."""
    ids: dict[tuple[str, str], str] = {}
    first: dict[str, ImportRecord] = {}
    people: dict[str, set[str]] = {}
    for record in records:
        key = (record.platform, record.session)
        if key not in ids:
            ids[key] = await _session_id(db, record)
        sid = ids[key]
        first.setdefault(sid, record)
        people.setdefault(sid, set()).add(record.person)
    for sid, record in first.items():
        spec = SessionSpec(
            id=sid,
            platform=record.platform,
            chat_id=record.chat,
            chat_type="imported",
            people=tuple(sorted(people[sid])),
            started_at=record.created_at,
        )
        await ensure_session(db, spec)
    present = await _exported_still_present(db, records, ids)
    rows = [
        (ids[(r.platform, r.session)], r.role, r.person if r.role == "user" else None,
         clean(r.content), r.created_at, clean(r.external_id))
        for r in records
        if r.external_id not in present.get(ids[(r.platform, r.session)], ())
    ]  # fmt: skip
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * 6
    inserted = await db.fetch(INSERT_ROWS, *columns)
    await index_grams(db, inserted)
    titles: dict[str, str | None] = {}
    for record in records:
        sid = ids[(record.platform, record.session)]
        if record.role == "user" and sid not in titles:
            titles[sid] = clean(title_of(record.content))
    await db.executemany(UPDATE_SESSION, [(titles.get(sid), sid) for sid in first])
    return len(inserted), len(records) - len(inserted), set(first)


async def _session_id(db: Connection, record: ImportRecord) -> str:
    """Our own session ids (an export) are kept; any other name is hashed."""
    if record.looks_like_own_session_id:
        platform = await db.fetchval("SELECT platform FROM sessions WHERE id = $1", record.session)
        if platform is None or platform == record.platform:
            return record.session
    return record.hashed_session_id


async def _exported_still_present(
    db: Connection, records: Sequence[ImportRecord], ids: dict[tuple[str, str], str]
) -> dict[str, set[str]]:
    """Session id → the ``mnemo:<id>`` external ids whose message is still in that session."""
    wanted: dict[int, tuple[str, str]] = {}
    for record in records:
        ext = record.external_id
        if ext and ext.startswith("mnemo:") and ext[6:].isdigit() and len(ext) < 25:
            wanted[int(ext[6:])] = (ids[(record.platform, record.session)], ext)
    present: dict[str, set[str]] = {}
    if wanted:
        rows = await db.fetch(
            "SELECT id, session_id FROM messages WHERE id = ANY($1::bigint[])",
            [n for n in wanted if n < 2**63],
        )
        for number, session_id in rows:
            sid, ext = wanted[number]
            if sid == session_id:
                present.setdefault(sid, set()).add(ext)
    return present
