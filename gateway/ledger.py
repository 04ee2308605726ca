"""The gateway's delivery ledger in ``state.db``: what came in, and what must go out.

Two tables (migration m004), written through the archive's one writer:

* ``inbound`` — one row per platform update the gateway accepted, keyed by
  ``InboundMessage.dedup_key``. ``accept`` inserts it as ``queued`` and answers False when
  the key is already there, so an update redelivered after a restart (Telegram resends
  updates whose offset was never confirmed; Discord replays on resume) never runs twice.
  A row is ``done`` once its answer is in the outbox. A row still ``queued`` at start-up
  belongs to a turn a restart interrupted: ``interrupted`` hands those over once, so the
  person can be told.
* ``outbox`` — a reply is persisted *before* it is sent (``enqueue``, in the same
  transaction that marks its inbound rows done), then marked ``sent`` or ``failed``.
  ``chunks_sent`` records progress through a multi-chunk reply, chunk by chunk as the
  platform confirms each (``delivered``), so a retry after flood control or a restart
  sends only what is missing. ``pending`` lists what a restart left unsent. A row of kind
  ``edit`` changes a message already sent (``reply_to`` names it) instead.

Delivery is therefore at-least-once per chunk and, with the chunk counter, duplicate-free
except for the one chunk in flight when the process dies: sent, but its confirmation not
yet recorded. (Discord de-duplicates even that one for a few minutes: the adapter gives each
chunk a nonce derived from the row. Telegram has no such key.) Rows older than
``retention_s`` are pruned at start-up.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from memory.archive import Archive

__all__ = [
    "DeliveryLedger",
    "Inbound",
    "Ledger",
    "OutboxKind",
    "OutboxRow",
    "Outgoing",
    "outbox_row",
]

RETENTION_S = 14 * 86_400

OutboxKind = Literal["reply", "notice", "edit"]
"""An outbox row: a reply to someone's message, a notice nobody asked for (a restart, an
approval, a review's writes), or an edit of a message already sent (``gateway.outbox``)."""


@dataclass(frozen=True, slots=True)
class Inbound:
    key: str
    session_key: str
    platform: str
    chat_id: str
    thread_id: str | None
    message_id: str
    received_at: float


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    platform: str
    chat_id: str
    thread_id: str | None
    reply_to: str | None
    text: str
    markdown: bool
    buttons: tuple[tuple[str, str], ...]
    session_key: str | None
    kind: OutboxKind
    chunks_sent: int
    attempts: int
    created_at: float


_OUTBOX_COLUMNS = (
    "id, platform, chat_id, thread_id, reply_to, text, markdown, buttons, session_key, kind,"
    " chunks_sent, attempts, created_at"
)


def outbox_row(row: Sequence[object]) -> OutboxRow:
    buttons = tuple((str(a), str(b)) for a, b in json.loads(str(row[7])))
    return OutboxRow(
        id=int(row[0]),  # type: ignore[call-overload]
        platform=str(row[1]),
        chat_id=str(row[2]),
        thread_id=None if row[3] is None else str(row[3]),
        reply_to=None if row[4] is None else str(row[4]),
        text=str(row[5]),
        markdown=bool(row[6]),
        buttons=buttons,
        session_key=None if row[8] is None else str(row[8]),
        kind=_kind(row[9]),
        chunks_sent=int(row[10]),  # type: ignore[call-overload]
        attempts=int(row[11]),  # type: ignore[call-overload]
        created_at=float(row[12]),  # type: ignore[arg-type]
    )


def _kind(value: object) -> OutboxKind:
    """A stored kind; only ours are ever written (anything else would be sent as a reply is)."""
    match value:
        case "reply" | "notice" | "edit":
            return value
        case _:
            return "reply"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A reply to persist: where it goes and what it says."""

    platform: str
    chat_id: str
    text: str
    thread_id: str | None = None
    reply_to: str | None = None
    markdown: bool = True
    buttons: tuple[tuple[str, str], ...] = ()
    session_key: str | None = None
    kind: OutboxKind = "reply"


class DeliveryLedger(Protocol):
    """What the gateway asks of a delivery ledger: ``Ledger`` (SQLite, one process) and
    ``gateway.ledger_postgres.PgLedger`` (PostgreSQL, shared by replicas)."""

    shared: bool
    """Whether every replica records updates here: then ``accept`` alone decides, once
    across all of them, who takes an update."""

    async def accept(self, item: Inbound) -> bool: ...
    async def finish(self, keys: Sequence[str]) -> None: ...
    async def interrupted(self) -> list[Inbound]: ...
    async def enqueue(self, outgoing: Outgoing, *, answers: Sequence[str] = ()) -> OutboxRow: ...
    async def get(self, outbox_id: int) -> OutboxRow | None: ...
    async def progress(self, outbox_id: int, chunks_sent: int, error: str | None) -> None: ...
    async def delivered(self, outbox_id: int, chunks_sent: int) -> None: ...
    async def mark_sent(self, outbox_id: int) -> None: ...
    async def mark_failed(self, outbox_id: int, error: str) -> None: ...
    async def pending(self, platform: str | None = None) -> list[OutboxRow]: ...
    async def counts(self) -> dict[str, int]: ...
    async def prune(self, now: float | None = None) -> int: ...


class Ledger:
    shared = False  # one process's home

    def __init__(self, archive: Archive, *, retention_s: float = RETENTION_S) -> None:
        self.archive = archive
        self.retention_s = retention_s

    # -- inbound --------------------------------------------------------------------------

    async def accept(self, item: Inbound) -> bool:
        """Record an update as queued; False if it was seen before (a redelivery)."""

        def run(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "INSERT OR IGNORE INTO inbound(key, session_key, platform, chat_id, thread_id,"
                " message_id, state, received_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?)",
                (
                    item.key,
                    item.session_key,
                    item.platform,
                    item.chat_id,
                    item.thread_id,
                    item.message_id,
                    item.received_at,
                ),
            )
            return cursor.rowcount == 1

        return await self.archive.transact(run)

    async def finish(self, keys: Sequence[str]) -> None:
        """Mark updates done without a reply (e.g. ignored after acceptance)."""
        now = time.time()
        await self.archive.transact(lambda db: _finish(db, keys, now))

    async def interrupted(self) -> list[Inbound]:
        """Updates a previous run accepted but never answered; handed over once."""

        def run(db: sqlite3.Connection) -> list[Inbound]:
            rows = db.execute(
                "SELECT key, session_key, platform, chat_id, thread_id, message_id, received_at"
                " FROM inbound WHERE state = 'queued' ORDER BY received_at"
            ).fetchall()
            db.execute("UPDATE inbound SET state = 'interrupted' WHERE state = 'queued'")
            return [Inbound(*row) for row in rows]

        return await self.archive.transact(run)

    # -- outbox ---------------------------------------------------------------------------

    async def enqueue(self, outgoing: Outgoing, *, answers: Sequence[str] = ()) -> OutboxRow:
        """Persist a reply (and mark the updates it ``answers`` done) in one transaction;
        the row as stored."""
        now = time.time()

        def run(db: sqlite3.Connection) -> OutboxRow:
            cursor = db.execute(
                "INSERT INTO outbox(platform, chat_id, thread_id, reply_to, text, markdown,"
                " buttons, session_key, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    outgoing.platform,
                    outgoing.chat_id,
                    outgoing.thread_id,
                    outgoing.reply_to,
                    outgoing.text,
                    int(outgoing.markdown),
                    json.dumps([list(b) for b in outgoing.buttons]),
                    outgoing.session_key,
                    outgoing.kind,
                    now,
                ),
            )
            _finish(db, answers, now)
            assert cursor.lastrowid is not None
            return OutboxRow(
                id=cursor.lastrowid,
                platform=outgoing.platform,
                chat_id=outgoing.chat_id,
                thread_id=outgoing.thread_id,
                reply_to=outgoing.reply_to,
                text=outgoing.text,
                markdown=outgoing.markdown,
                buttons=outgoing.buttons,
                session_key=outgoing.session_key,
                kind=outgoing.kind,
                chunks_sent=0,
                attempts=0,
                created_at=now,
            )

        return await self.archive.transact(run)

    async def get(self, outbox_id: int) -> OutboxRow | None:
        def run(db: sqlite3.Connection) -> OutboxRow | None:
            row = db.execute(
                f"SELECT {_OUTBOX_COLUMNS} FROM outbox WHERE id = ?",  # noqa: S608
                (outbox_id,),
            ).fetchone()
            return None if row is None else outbox_row(row)

        return await self.archive.transact(run)

    async def progress(self, outbox_id: int, chunks_sent: int, error: str | None) -> None:
        """Chunks delivered so far and the latest error (one more attempt)."""
        await self.archive.transact(
            lambda db: db.execute(
                "UPDATE outbox SET chunks_sent = max(chunks_sent, ?), attempts = attempts + 1,"
                " last_error = ? WHERE id = ?",
                (chunks_sent, error, outbox_id),
            )
        )

    async def delivered(self, outbox_id: int, chunks_sent: int) -> None:
        """The platform confirmed the first ``chunks_sent`` chunks of a reply."""
        await self.archive.transact(
            lambda db: db.execute(
                "UPDATE outbox SET chunks_sent = max(chunks_sent, ?) WHERE id = ?",
                (chunks_sent, outbox_id),
            )
        )

    async def mark_sent(self, outbox_id: int) -> None:
        now = time.time()
        await self.archive.transact(
            lambda db: db.execute(
                "UPDATE outbox SET state = 'sent', sent_at = ? WHERE id = ?", (now, outbox_id)
            )
        )

    async def mark_failed(self, outbox_id: int, error: str) -> None:
        await self.archive.transact(
            lambda db: db.execute(
                "UPDATE outbox SET state = 'failed', last_error = ? WHERE id = ?",
                (error, outbox_id),
            )
        )

    async def pending(self, platform: str | None = None) -> list[OutboxRow]:
        """Unsent replies, oldest first (optionally of one platform)."""
        where = "state = 'pending'" + (" AND platform = ?" if platform else "")
        params: tuple[str, ...] = (platform,) if platform else ()

        def run(db: sqlite3.Connection) -> list[OutboxRow]:
            rows = db.execute(
                f"SELECT {_OUTBOX_COLUMNS} FROM outbox WHERE {where} ORDER BY id",  # noqa: S608
                params,
            ).fetchall()
            return [outbox_row(row) for row in rows]

        return await self.archive.transact(run)

    async def counts(self) -> dict[str, int]:
        def run(db: sqlite3.Connection) -> dict[str, int]:
            rows = db.execute("SELECT state, count(*) FROM outbox GROUP BY state").fetchall()
            return {str(state): int(n) for state, n in rows}

        return await self.archive.transact(run)

    async def prune(self, now: float | None = None) -> int:
        """Forget inbound keys and delivered replies older than the retention window."""
        cutoff = (time.time() if now is None else now) - self.retention_s

        def run(db: sqlite3.Connection) -> int:
            gone = db.execute(
                "DELETE FROM inbound WHERE received_at < ? AND state != 'queued'", (cutoff,)
            ).rowcount
            gone += db.execute(
                "DELETE FROM outbox WHERE created_at < ? AND state != 'pending'", (cutoff,)
            ).rowcount
            return gone

        return await self.archive.transact(run)


def _finish(db: sqlite3.Connection, keys: Sequence[str], now: float) -> None:
    db.executemany(
        "UPDATE inbound SET state = 'done', done_at = ? WHERE key = ? AND state != 'done'",
        [(now, key) for key in keys],
    )
