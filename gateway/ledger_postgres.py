"""The delivery ledger on PostgreSQL, shared by every replica (``storage.backend: postgres``).

The same contract as ``gateway.ledger.Ledger`` (dedup on accept, the outbox's states,
chunk progress, pruning), with one thing the single-process ledger never needed: **whose**
work a row is. With several replicas, a row still ``queued`` (or a reply still ``pending``)
may belong to a turn another replica is running right now; it is only *interrupted* when
that replica is gone. So:

- each replica has an id (new at every start: a restarted process is a new replica, and what
  its previous life left is an orphan like any other) and a heartbeat row in ``replicas``,
  stamped with the database's clock (replicas' clocks may disagree; the server's is one);
- ``accept`` and ``enqueue`` record the replica as the row's ``owner``;
- ``interrupted`` hands over the queued updates of replicas whose heartbeat is older than
  ``dead_after_s`` (never this replica's own: those are its running turns); ``pending`` the
  unsent replies of this replica and of gone ones (the flush at start and stop), ``orphans``
  only those of gone ones (the periodic sweep: this replica's own are in flight). Taking
  over is one ``UPDATE … RETURNING`` under row locks, so each orphan goes to exactly one
  replica, which then tells the person once or delivers the reply. A replica calls them at
  start-up and then periodically (``gateway.service``), so the chats of a replica that died
  continue on the others. A replica takes over only the rows of the platforms it runs
  (``platforms``: ``mnemo run``'s adapters): another platform's reply would sit under its
  name, unsent, for as long as it lives.

A replica that stalls past ``dead_after_s`` without dying (a long GC pause, a frozen VM) can
find its rows taken: its own later ``mark_sent`` still lands, so at worst a reply is sent
twice, which is what the at-least-once outbox allows anyway.

Times are seconds since the epoch (``double precision``), as in SQLite, so rows read the same.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Protocol

from gateway.ledger import RETENTION_S, Inbound, OutboxRow, Outgoing, outbox_row

if TYPE_CHECKING:
    import asyncpg

__all__ = ["DEAD_AFTER_S", "MIGRATED", "MIGRATIONS", "PgLedger", "adopt_pending", "missing_pending"]

#: A replica whose heartbeat is older than this is gone; its open rows are orphans.
DEAD_AFTER_S = 30.0

_NOW = "extract(epoch from clock_timestamp())"

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "g001_delivery_ledger",
        (
            """CREATE TABLE replicas (
                id text PRIMARY KEY,
                started_at double precision NOT NULL,
                seen_at double precision NOT NULL
            )""",
            """CREATE TABLE inbound (
                key text PRIMARY KEY,
                session_key text NOT NULL,
                platform text NOT NULL,
                chat_id text NOT NULL,
                thread_id text,
                message_id text NOT NULL,
                state text NOT NULL CHECK (state IN ('queued', 'done', 'interrupted')),
                owner text NOT NULL,
                received_at double precision NOT NULL,
                done_at double precision
            )""",
            "CREATE INDEX inbound_open ON inbound(owner, received_at) WHERE state = 'queued'",
            "CREATE INDEX inbound_age ON inbound(received_at)",
            """CREATE TABLE outbox (
                id bigserial PRIMARY KEY,
                platform text NOT NULL,
                chat_id text NOT NULL,
                thread_id text,
                reply_to text,
                text text NOT NULL,
                markdown boolean NOT NULL,
                buttons text NOT NULL DEFAULT '[]',
                session_key text,
                kind text NOT NULL DEFAULT 'reply',
                state text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sent', 'failed')),
                owner text NOT NULL,
                chunks_sent integer NOT NULL DEFAULT 0,
                attempts integer NOT NULL DEFAULT 0,
                last_error text,
                created_at double precision NOT NULL,
                sent_at double precision
            )""",
            "CREATE INDEX outbox_pending ON outbox(platform, id) WHERE state = 'pending'",
            "CREATE INDEX outbox_age ON outbox(created_at)",
        ),
    ),
)

_LOCK = 0x6D6E656D6F_01  # pg_advisory_xact_lock key: "mnemo" + 1, the ledger's migrations

_OUTBOX_COLUMNS = (
    "id, platform, chat_id, thread_id, reply_to, text, markdown, buttons, session_key, kind,"
    " chunks_sent, attempts, created_at"
)
#: Rows of a replica that is gone (heartbeat older than $2 seconds, or no row at all).
_GONE = "owner NOT IN (SELECT id FROM replicas WHERE seen_at >= " + _NOW + " - $2)"


async def migrate(pool: asyncpg.Pool) -> list[str]:
    """Create or upgrade the ledger's tables (under an advisory lock: replicas starting at
    once wait for each other); the names of the migrations applied."""
    applied: list[str] = []
    async with pool.acquire() as db, db.transaction():
        await db.execute("SELECT pg_advisory_xact_lock($1)", _LOCK)
        await db.execute(
            "CREATE TABLE IF NOT EXISTS gateway_migrations (name text PRIMARY KEY,"
            " applied_at double precision NOT NULL)"
        )
        done = {row["name"] for row in await db.fetch("SELECT name FROM gateway_migrations")}
        for name, statements in MIGRATIONS:
            if name in done:
                continue
            for statement in statements:
                await db.execute(statement)
            await db.execute(
                "INSERT INTO gateway_migrations(name, applied_at) VALUES ($1, $2)",
                name,
                time.time(),
            )
            applied.append(name)
    return applied


class PgLedger:
    """``gateway.ledger.Ledger``'s contract on a shared PostgreSQL, for one replica."""

    shared = True  # every replica's accept is one INSERT ... ON CONFLICT on the same table

    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        replica: str | None = None,
        retention_s: float = RETENTION_S,
        dead_after_s: float = DEAD_AFTER_S,
        platforms: Collection[str] | None = None,
    ) -> None:
        self.pool = pool
        self.replica = replica or uuid.uuid4().hex
        self.retention_s = retention_s
        self.dead_after_s = dead_after_s
        #: The platforms whose rows this replica takes over (None: every platform's).
        self.platforms = None if platforms is None else sorted(platforms)

    async def open(self) -> PgLedger:
        """Migrate, then announce this replica (its first heartbeat)."""
        await migrate(self.pool)
        await self.heartbeat()
        return self

    async def heartbeat(self) -> None:
        """This replica is alive (call every ``dead_after_s / 3`` or so)."""
        await self.pool.execute(
            f"INSERT INTO replicas(id, started_at, seen_at) VALUES ($1, {_NOW}, {_NOW})"
            f" ON CONFLICT (id) DO UPDATE SET seen_at = {_NOW}",
            self.replica,
        )

    async def leave(self) -> None:
        """A clean stop: this replica's open rows are orphans at once (nothing is left
        running after a drain), so another replica need not wait out ``dead_after_s``."""
        await self.pool.execute("DELETE FROM replicas WHERE id = $1", self.replica)

    async def live_replicas(self) -> list[str]:
        rows = await self.pool.fetch(
            f"SELECT id FROM replicas WHERE seen_at >= {_NOW} - $1 ORDER BY started_at",
            self.dead_after_s,
        )
        return [str(row["id"]) for row in rows]

    # -- inbound --------------------------------------------------------------------------

    async def accept(self, item: Inbound) -> bool:
        """Record an update as queued; False if any replica saw it before."""
        status = await self.pool.execute(
            "INSERT INTO inbound(key, session_key, platform, chat_id, thread_id, message_id,"
            " state, owner, received_at) VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8)"
            " ON CONFLICT (key) DO NOTHING",
            item.key,
            item.session_key,
            item.platform,
            item.chat_id,
            item.thread_id,
            item.message_id,
            self.replica,
            item.received_at,
        )
        return bool(status == "INSERT 0 1")

    async def finish(self, keys: Sequence[str]) -> None:
        """Mark updates done without a reply (e.g. ignored after acceptance)."""
        await _finish(self.pool, keys, time.time())

    async def interrupted(self) -> list[Inbound]:
        """Updates accepted but never answered by a replica that is gone (at start-up, a
        previous life of this one); each handed over once, to one replica. This replica's
        own queued updates are its running turns, never interrupted."""
        rows = await self.pool.fetch(
            "UPDATE inbound SET state = 'interrupted' WHERE state = 'queued' AND owner != $1 AND "
            + _GONE
            + " AND ($3::text[] IS NULL OR platform = ANY($3::text[]))"
            " RETURNING key, session_key, platform, chat_id, thread_id, message_id,"
            " received_at",
            self.replica,
            self.dead_after_s,
            self.platforms,
        )
        found = [Inbound(*row) for row in rows]
        return sorted(found, key=lambda item: item.received_at)

    # -- outbox ---------------------------------------------------------------------------

    async def enqueue(self, outgoing: Outgoing, *, answers: Sequence[str] = ()) -> OutboxRow:
        """Persist a reply (and mark the updates it ``answers`` done) in one transaction."""
        now = time.time()
        async with self.pool.acquire() as db, db.transaction():
            row = await db.fetchrow(
                "INSERT INTO outbox(platform, chat_id, thread_id, reply_to, text, markdown,"
                " buttons, session_key, kind, owner, created_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
                f" RETURNING {_OUTBOX_COLUMNS}",
                outgoing.platform,
                outgoing.chat_id,
                outgoing.thread_id,
                outgoing.reply_to,
                outgoing.text,
                outgoing.markdown,
                json.dumps([list(b) for b in outgoing.buttons]),
                outgoing.session_key,
                outgoing.kind,
                self.replica,
                now,
            )
            await _finish(db, answers, now)
        assert row is not None
        return outbox_row(tuple(row))

    async def get(self, outbox_id: int) -> OutboxRow | None:
        row = await self.pool.fetchrow(
            f"SELECT {_OUTBOX_COLUMNS} FROM outbox WHERE id = $1", outbox_id
        )
        return None if row is None else outbox_row(tuple(row))

    async def progress(self, outbox_id: int, chunks_sent: int, error: str | None) -> None:
        """Chunks delivered so far and the latest error (one more attempt)."""
        await self.pool.execute(
            "UPDATE outbox SET chunks_sent = greatest(chunks_sent, $1), attempts = attempts + 1,"
            " last_error = $2 WHERE id = $3",
            chunks_sent,
            error,
            outbox_id,
        )

    async def delivered(self, outbox_id: int, chunks_sent: int) -> None:
        """The platform confirmed the first ``chunks_sent`` chunks of a reply."""
        await self.pool.execute(
            "UPDATE outbox SET chunks_sent = greatest(chunks_sent, $1) WHERE id = $2",
            chunks_sent,
            outbox_id,
        )

    async def mark_sent(self, outbox_id: int) -> None:
        await self.pool.execute(
            "UPDATE outbox SET state = 'sent', sent_at = $1 WHERE id = $2", time.time(), outbox_id
        )

    async def mark_failed(self, outbox_id: int, error: str) -> None:
        await self.pool.execute(
            "UPDATE outbox SET state = 'failed', last_error = $1 WHERE id = $2", error, outbox_id
        )

    async def pending(self, platform: str | None = None) -> list[OutboxRow]:
        """Unsent replies of this replica, and of replicas that are gone (taken over: this
        replica owns them from now on), oldest first (optionally of one platform). For the
        flush at start and at stop, when this replica sends nothing else."""
        return await self._take(f"(owner = $1 OR {_GONE})", platform)

    async def orphans(self, platform: str | None = None) -> list[OutboxRow]:
        """Only the unsent replies of replicas that are gone, taken over: what a running
        replica's periodic sweep delivers (its own pending replies are in flight)."""
        return await self._take(f"owner != $1 AND {_GONE}", platform)

    async def _take(self, whose: str, platform: str | None) -> list[OutboxRow]:
        rows = await self.pool.fetch(
            f"UPDATE outbox SET owner = $1 WHERE state = 'pending' AND {whose}"
            " AND ($3::text IS NULL OR platform = $3)"
            f" AND ($4::text[] IS NULL OR platform = ANY($4::text[])) RETURNING {_OUTBOX_COLUMNS}",
            self.replica,
            self.dead_after_s,
            platform,
            self.platforms,
        )
        return sorted((outbox_row(tuple(row)) for row in rows), key=lambda row: row.id)

    async def counts(self) -> dict[str, int]:
        rows = await self.pool.fetch("SELECT state, count(*) AS n FROM outbox GROUP BY state")
        return {str(row["state"]): int(row["n"]) for row in rows}

    async def prune(self, now: float | None = None) -> int:
        """Forget inbound keys and delivered replies older than the retention window, and
        replicas long gone."""
        cutoff = (time.time() if now is None else now) - self.retention_s
        async with self.pool.acquire() as db, db.transaction():
            gone = _count(
                await db.execute(
                    "DELETE FROM inbound WHERE received_at < $1 AND state != 'queued'", cutoff
                )
            )
            gone += _count(
                await db.execute(
                    "DELETE FROM outbox WHERE created_at < $1 AND state != 'pending'", cutoff
                )
            )
            await db.execute(
                "DELETE FROM replicas WHERE seen_at < $1 AND id NOT IN"
                " (SELECT owner FROM inbound WHERE state = 'queued'"
                " UNION SELECT owner FROM outbox WHERE state = 'pending')",
                cutoff,
            )
        return gone


# -- a home moved in (``mnemo storage migrate``) ----------------------------------------

#: The owner of the unsent replies a move brought in: no replica has that id, so the first
#: replica's start-up flush (``pending``) takes them over and sends them, once.
MIGRATED = "migrated-from-sqlite"

_SAME_ROW = (
    "platform = $1 AND chat_id = $2 AND thread_id IS NOT DISTINCT FROM $3"
    " AND reply_to IS NOT DISTINCT FROM $4 AND text = $5 AND kind = $6 AND created_at = $7"
)


async def missing_pending(pool: asyncpg.Pool, rows: Sequence[OutboxRow]) -> list[OutboxRow]:
    """The unsent replies of another ledger (SQLite's) that this one does not hold yet: a
    row is the same reply when its destination, text, kind and creation time are (the ids
    of two ledgers mean nothing to each other)."""
    if not rows:
        return []
    async with pool.acquire() as db:
        if await db.fetchval("SELECT to_regclass('outbox') IS NULL"):
            return list(rows)
        missing = []
        for row in rows:
            found = await db.fetchval(f"SELECT 1 FROM outbox WHERE {_SAME_ROW}", *_key(row))
            if found is None:
                missing.append(row)
    return missing


async def adopt_pending(pool: asyncpg.Pool, rows: Sequence[OutboxRow]) -> int:
    """Bring in the unsent replies of another ledger that this one lacks, with their chunk
    progress, owned by ``MIGRATED``; how many were new."""
    await migrate(pool)
    new = await missing_pending(pool, rows)
    async with pool.acquire() as db, db.transaction():
        for row in new:
            await db.execute(
                "INSERT INTO outbox(platform, chat_id, thread_id, reply_to, text, markdown,"
                " buttons, session_key, kind, owner, chunks_sent, attempts, created_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
                row.platform,
                row.chat_id,
                row.thread_id,
                row.reply_to,
                row.text,
                row.markdown,
                json.dumps([list(b) for b in row.buttons]),
                row.session_key,
                row.kind,
                MIGRATED,
                row.chunks_sent,
                row.attempts,
                row.created_at,
            )
    return len(new)


def _key(row: OutboxRow) -> tuple[object, ...]:
    return (row.platform, row.chat_id, row.thread_id, row.reply_to, row.text, row.kind,
            row.created_at)  # fmt: skip


class _Executes(Protocol):
    async def execute(self, query: str, *args: object) -> str: ...


async def _finish(db: _Executes, keys: Sequence[str], now: float) -> None:
    if keys:
        await db.execute(
            "UPDATE inbound SET state = 'done', done_at = $1"
            " WHERE key = ANY($2::text[]) AND state != 'done'",
            now,
            list(keys),
        )


def _count(status: str) -> int:
    """Rows a command touched, from asyncpg's status string ("DELETE 3")."""
    return int(status.rsplit(" ", 1)[-1])
