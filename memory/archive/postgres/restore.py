"""A session copied whole into the PostgreSQL archive, every id kept (``mnemo storage
migrate --to postgres``).

The JSONL export (``export_records``) is the archive's interchange format, and it leaves out
what only the gateway needs: tool calls and results, token counts, the frozen system prompt,
the session's key, type, thread, lineage and end. A move must keep all of it — a session
resumed on a replica continues with the prompt it started with, the per-person budgets
count the same tokens — so ``restore_session`` writes a session from the typed reads
(``Session``, its people, ``system_prompt``, ``Message``) as it was: the same session id,
the same message ids (``messages.id`` is an identity ``BY DEFAULT``: explicit ids are
allowed; the sequence is then moved past them, so new rows never collide), roles, speakers,
timestamps and counters.

Idempotent, and never silent about a difference: a message id the target already holds for
the same message (same session, role, time and text) is skipped; one it holds for another
message raises ``RestoreConflict``, as does a session id whose platform or chat differ (the
two archives have diverged: nothing is overwritten). Each session is one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.archive.postgres.writes import Connection, clean, index_grams, message_params
from memory.archive.records import ArchiveError, Message, Session

__all__ = ["Present", "RestoreConflict", "present", "restore_session"]

INSERT_MESSAGES = (
    "INSERT INTO messages (id, session_id, role, speaker, content, tool_calls, tool_call_id,"
    " tool_name, created_at, prompt_tokens, completion_tokens, cached_tokens, external_id)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[],"
    " $6::text[], $7::text[], $8::text[], $9::float8[], $10::int[], $11::int[], $12::int[],"
    " $13::text[]) ON CONFLICT DO NOTHING RETURNING id, search_text"
)


class RestoreConflict(ArchiveError):
    """The target archive holds something else under an id the source uses."""


@dataclass(frozen=True, slots=True)
class Present:
    """How much of a source archive a target already holds (``present``)."""

    sessions: int
    messages: int
    people: int
    conflicts: int  # message ids the target holds in another session


async def restore_session(
    db: Connection, session: Session, system_prompt: str | None, messages: Sequence[Message]
) -> int:
    """Copy ``session`` (with ``session.people``) and ``messages`` (the whole session, in id
    order) inside the caller's transaction; the number of messages written now."""
    await _session(db, session, system_prompt)
    if session.people:
        await db.execute(
            "INSERT INTO session_people (session_id, person) SELECT $1, unnest($2::text[])"
            " ON CONFLICT DO NOTHING",
            session.id,
            [clean(person) for person in session.people],
        )
    if not messages:
        return 0
    rows = [_params(message) for message in messages]
    columns = [list(column) for column in zip(*rows, strict=True)]
    inserted = await db.fetch(INSERT_MESSAGES, *columns)
    await index_grams(db, inserted)
    new = {int(row[0]) for row in inserted}
    skipped = [m for m in messages if m.id not in new]
    if skipped:
        await _same_messages(db, skipped)
    await db.execute(
        "UPDATE sessions SET message_count ="
        " (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id) WHERE id = $1",
        session.id,
    )
    await db.execute(
        "SELECT setval(s, greatest((SELECT max(id) FROM messages),"
        " coalesce(pg_sequence_last_value(s::regclass), 1)))"
        " FROM pg_get_serial_sequence('messages', 'id') AS s"
    )
    return len(new)


async def _session(db: Connection, session: Session, system_prompt: str | None) -> None:
    row = await db.fetchrow(
        "INSERT INTO sessions (id, parent_id, root_id, session_key, platform, chat_id,"
        " chat_type, thread_id, title, started_at, last_active_at, ended_at, end_reason,"
        " system_prompt) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)"
        " ON CONFLICT (id) DO UPDATE SET"
        " last_active_at = greatest(sessions.last_active_at, excluded.last_active_at),"
        " title = coalesce(sessions.title, excluded.title),"
        " ended_at = coalesce(sessions.ended_at, excluded.ended_at),"
        " end_reason = coalesce(sessions.end_reason, excluded.end_reason),"
        " system_prompt = coalesce(sessions.system_prompt, excluded.system_prompt)"
        " RETURNING platform, chat_id",
        session.id,
        session.parent_id,
        session.root_id,
        clean(session.session_key),
        clean(session.platform),
        clean(session.chat_id),
        clean(session.chat_type),
        clean(session.thread_id),
        clean(session.title),
        session.started_at,
        session.last_active_at,
        session.ended_at,
        clean(session.end_reason),
        clean(system_prompt),
    )
    assert row is not None
    if (row[0], row[1]) != (clean(session.platform), clean(session.chat_id)):
        raise RestoreConflict(
            f"session {session.id} is another chat in the target ({row[0]}:{row[1]})"
        )


async def _same_messages(db: Connection, messages: Sequence[Message]) -> None:
    rows = await db.fetch(
        "SELECT id, session_id, role, content, created_at FROM messages"
        " WHERE id = ANY($1::bigint[])",
        [m.id for m in messages],
    )
    held = {int(row[0]): tuple(row[1:]) for row in rows}
    for message in messages:
        mine = (message.session_id, message.role, clean(message.content), message.created_at)
        theirs = held.get(message.id)
        if theirs is None:  # skipped on messages_external: that id came in under another
            raise RestoreConflict(
                f"message {message.id} of session {message.session_id}: the target holds its"
                f" external id {message.external_id} under another message"
            )
        if theirs != mine:
            raise RestoreConflict(
                f"message {message.id}: the target holds another message under that id"
                f" (in session {theirs[0]})"
            )


def _params(message: Message) -> tuple[object, ...]:
    return (message.id, *message_params(message.session_id, message, message.created_at))


async def present(
    db: Connection,
    session_ids: Sequence[str],
    messages: Sequence[tuple[int, str]],
    people: Sequence[str],
) -> Present:
    """How many of these sessions, (message id, session id) pairs and people the target
    holds (an archive whose tables do not exist yet holds none)."""
    if await db.fetchval("SELECT to_regclass('messages') IS NULL"):
        return Present(0, 0, 0, 0)
    sessions = await db.fetchval(
        "SELECT count(*) FROM sessions WHERE id = ANY($1::text[])", list(session_ids)
    )
    row = await db.fetchrow(
        "SELECT count(*) FILTER (WHERE m.session_id = s.sid),"
        " count(*) FILTER (WHERE m.session_id <> s.sid)"
        " FROM unnest($1::bigint[], $2::text[]) AS s(id, sid) JOIN messages m ON m.id = s.id",
        [m[0] for m in messages],
        [m[1] for m in messages],
    )
    assert row is not None
    found_people = await db.fetchval(
        "SELECT count(DISTINCT person) FROM session_people WHERE person = ANY($1::text[])",
        [clean(p) for p in people],
    )
    return Present(int(sessions), int(row[0]), int(found_people), int(row[1]))
