"""What the PostgreSQL archive's writes share (``PgArchive`` and the JSONL import): the
message row, participants, CJK grams, and text made storable (no NUL in ``text``)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

import asyncpg

from memory.archive.cjk import grams, has_cjk
from memory.archive.records import ArchiveError, Message, NewMessage, SessionSpec

__all__ = [
    "INSERT_EXCHANGE",
    "SET_GRAMS",
    "Connection",
    "clean",
    "ensure_session",
    "gram_list",
    "index_grams",
    "join",
    "message_params",
]

Connection = asyncpg.Connection | asyncpg.pool.PoolConnectionProxy
# One exchange in one statement: its rows from arrays (ids are drawn in array order, so
# ``ORDER BY id`` is the exchange's order), and its session's counters in the same trip.
INSERT_EXCHANGE = (
    "WITH new AS (INSERT INTO messages (session_id, role, speaker, content, tool_calls,"
    " tool_call_id, tool_name, created_at, prompt_tokens, completion_tokens, cached_tokens,"
    " external_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],"
    " $5::text[], $6::text[], $7::text[], $8::float8[], $9::int[], $10::int[], $11::int[],"
    " $12::text[]) RETURNING id, session_id, search_text),"
    " touched AS (UPDATE sessions SET last_active_at = greatest(last_active_at, $13),"
    " message_count = message_count + cardinality($2::text[]), title = coalesce(title, $14)"
    " WHERE id = ($1::text[])[1])"
    " SELECT id, search_text FROM new ORDER BY id"
)


def clean(text: str | None) -> str | None:
    """PostgreSQL's ``text`` holds no NUL character (SQLite's does): it is stored as U+FFFD."""
    return text.replace("\x00", "\ufffd") if text is not None and "\x00" in text else text


def gram_list(text: str | None) -> list[str] | None:
    """The CJK grams of ``text`` (``memory.archive.cjk.grams``) as the ``grams`` array."""
    found = grams(text)
    return None if found is None else found.split(" ")


SET_GRAMS = "UPDATE messages SET grams = $2 WHERE id = $1"


async def index_grams(db: Connection, inserted: Sequence[asyncpg.Record]) -> None:
    """Store the CJK grams of the messages just inserted (``(id, search_text)`` rows, as
    the inserts return them); rows without CJK keep ``grams`` NULL."""
    found = [(row[0], gram_list(row[1])) for row in inserted if has_cjk(row[1])]
    if found:
        await db.executemany(SET_GRAMS, found)


async def join(db: Connection, session_id: str, people: Sequence[str]) -> None:
    """Add participants (the session must exist; raises ``ArchiveError`` otherwise). The
    session row stays locked to the end of the transaction: exchanges written into one
    session at once (two replicas) follow one another, so its message ids keep its order."""
    found = await db.fetchval("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", session_id)
    if found is None:
        raise ArchiveError(f"session {session_id!r} does not exist")
    if people:
        await db.execute(
            "INSERT INTO session_people (session_id, person) SELECT $1, unnest($2::text[])"
            " ON CONFLICT DO NOTHING",
            session_id,
            [clean(person) for person in people],
        )


def message_params(
    session_id: str, message: NewMessage | Message, now: float
) -> tuple[object, ...]:
    """A message's columns after ``id`` (a restored ``Message`` keeps its time; a new one
    without a time gets ``now``)."""
    calls = json.dumps(list(message.tool_calls), ensure_ascii=False) if message.tool_calls else None
    return (
        session_id,
        message.role,
        clean(message.speaker),
        clean(message.content),
        calls,
        clean(message.tool_call_id),
        clean(message.tool_name),
        message.created_at if message.created_at is not None else now,
        message.prompt_tokens,
        message.completion_tokens,
        message.cached_tokens,
        clean(message.external_id),
    )


async def ensure_session(db: Connection, spec: SessionSpec) -> None:
    """Create the session row if it is new (``ON CONFLICT DO NOTHING``), record its people."""
    started = spec.started_at if spec.started_at is not None else time.time()
    root = spec.id
    if spec.parent_id is not None:
        found = await db.fetchval("SELECT root_id FROM sessions WHERE id = $1", spec.parent_id)
        if found is None:
            raise ArchiveError(f"parent session {spec.parent_id!r} does not exist")
        root = found
    await db.execute(
        "INSERT INTO sessions (id, parent_id, root_id, session_key, platform, chat_id,"
        " chat_type, thread_id, title, started_at, last_active_at, system_prompt)"
        " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$10,$11) ON CONFLICT (id) DO NOTHING",
        spec.id,
        spec.parent_id,
        root,
        spec.session_key,
        spec.platform,
        spec.chat_id,
        spec.chat_type,
        spec.thread_id,
        clean(spec.title),
        started,
        clean(spec.system_prompt),
    )
    await join(db, spec.id, spec.people)
