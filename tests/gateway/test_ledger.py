"""The delivery ledger: dedup, interrupted turns, the outbox's states — on SQLite (one
process) and on PostgreSQL (shared by replicas), the same behaviour; then what only
replicas need: whose work a row is, and who takes it over when a replica is gone."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest

from gateway.ledger import RETENTION_S, DeliveryLedger, Inbound, Ledger, Outgoing
from gateway.ledger_postgres import PgLedger, migrate
from memory.archive.database import Archive
from tests.services import postgres_schema

#: A ledger for this test's store; ``restart(old)`` is the next process on the same store.
Make = Callable[..., Awaitable[DeliveryLedger]]


class Backend:
    def __init__(self, make: Make, restart: Callable[[DeliveryLedger], Awaitable[DeliveryLedger]]):
        self.make = make
        self.restart = restart


@pytest.fixture
async def pool(postgres_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(postgres_dsn, min_size=1, max_size=4) as opened:
        yield opened


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "sqlite":
        async with await Archive.open(tmp_path / "state.db") as archive:

            async def make_sqlite(retention_s: float = RETENTION_S) -> DeliveryLedger:
                return Ledger(archive, retention_s=retention_s)

            async def restart_sqlite(_old: DeliveryLedger) -> DeliveryLedger:
                return Ledger(archive)

            yield Backend(make_sqlite, restart_sqlite)
        return
    async with postgres_schema() as dsn, asyncpg.create_pool(dsn, min_size=1, max_size=4) as pool:

        async def make_postgres(retention_s: float = RETENTION_S) -> DeliveryLedger:
            return await PgLedger(pool, retention_s=retention_s).open()

        async def restart_postgres(old: DeliveryLedger) -> DeliveryLedger:
            assert isinstance(old, PgLedger)
            await old.leave()  # as a drained stop does; a killed one is covered below
            return await PgLedger(pool).open()

        yield Backend(make_postgres, restart_postgres)


def inbound(key: str, at: float | None = None) -> Inbound:
    return Inbound(key, "telegram:dm:1", "telegram", "1", None, key, at or time.time())


async def test_accept_refuses_a_key_seen_before(backend: Backend) -> None:
    ledger = await backend.make()
    assert await ledger.accept(inbound("telegram:1:5"))
    assert not await ledger.accept(inbound("telegram:1:5"))
    assert await ledger.accept(inbound("telegram:1:6"))


async def test_the_next_start_gets_unanswered_updates_once(backend: Backend) -> None:
    ledger = await backend.make()
    for key in ("a", "b", "c"):
        await ledger.accept(inbound(key))
    await ledger.enqueue(Outgoing("telegram", "1", "reply to a"), answers=("a",))
    await ledger.finish(["b"])
    after = await backend.restart(ledger)
    assert [i.key for i in await after.interrupted()] == ["c"]
    assert await after.interrupted() == []
    assert not await after.accept(inbound("c"))  # still deduplicated afterwards


async def test_outbox_rows_move_from_pending_to_sent_or_failed(backend: Backend) -> None:
    ledger = await backend.make()
    stored = await ledger.enqueue(Outgoing("telegram", "1", "one", buttons=(("Yes", "/y"),)))
    assert stored == await ledger.get(stored.id)  # what enqueue returns is what is stored
    one = stored.id
    two = (await ledger.enqueue(Outgoing("discord", "2", "two", markdown=False))).id
    three = (await ledger.enqueue(Outgoing("telegram", "3", "three"))).id
    await ledger.progress(one, 2, "429")
    row = await ledger.get(one)
    assert row is not None
    assert (row.chunks_sent, row.attempts, row.buttons) == (2, 1, (("Yes", "/y"),))
    await ledger.progress(one, 1, "older news")  # progress never goes backwards
    row = await ledger.get(one)
    assert row is not None and row.chunks_sent == 2
    await ledger.mark_sent(two)
    await ledger.mark_failed(three, "Forbidden")
    assert [r.id for r in await ledger.pending()] == [one]
    assert await ledger.pending("discord") == []
    assert await ledger.counts() == {"pending": 1, "sent": 1, "failed": 1}


async def test_prune_forgets_old_rows_but_never_pending_work(backend: Backend) -> None:
    ledger = await backend.make(retention_s=10)
    old = time.time() - 100
    await ledger.accept(inbound("old-done", old))
    await ledger.accept(inbound("old-queued", old))
    await ledger.finish(["old-done"])
    sent = await ledger.enqueue(Outgoing("telegram", "1", "x"))
    await ledger.mark_sent(sent.id)
    await ledger.enqueue(Outgoing("telegram", "1", "still pending"))
    assert await ledger.prune(now=time.time() + 100) == 2
    assert await ledger.accept(inbound("old-done"))  # forgotten
    assert not await ledger.accept(inbound("old-queued"))  # kept: its turn never finished
    assert len(await ledger.pending()) == 1


# -- replicas (PostgreSQL only) -----------------------------------------------------------


async def test_an_update_delivered_to_two_replicas_is_accepted_once(pool: asyncpg.Pool) -> None:
    one, two = await PgLedger(pool).open(), await PgLedger(pool).open()
    results = await asyncio.gather(
        *(r.accept(inbound(f"u{i // 2}")) for i, r in enumerate([one, two] * 20))
    )
    assert sum(results) == 20  # 20 distinct updates, each sent to both, each accepted once


async def test_a_live_replicas_running_turns_are_not_interrupted(pool: asyncpg.Pool) -> None:
    busy, other = await PgLedger(pool).open(), await PgLedger(pool).open()
    await busy.accept(inbound("running"))
    reply = await busy.enqueue(Outgoing("telegram", "1", "being sent"))
    assert await other.interrupted() == []
    assert await other.orphans() == []
    assert await busy.interrupted() == []  # its own queued update is its running turn
    assert [r.id for r in await busy.pending()] == [reply.id]


async def test_a_killed_replicas_work_goes_to_exactly_one_survivor(pool: asyncpg.Pool) -> None:
    """A SIGKILLed replica never says goodbye: its heartbeat just stops. Once it is older
    than dead_after_s, its queued updates and unsent replies are orphans, and the sweeps of
    the replicas still alive, running at once, hand each one to exactly one of them."""
    dead = await PgLedger(pool, dead_after_s=0.3).open()
    for key in ("x", "y", "z"):
        await dead.accept(inbound(key))
    replies = [await dead.enqueue(Outgoing("telegram", "1", f"r{i}")) for i in range(4)]
    survivors = [await PgLedger(pool, dead_after_s=0.3).open() for _ in range(3)]
    assert not any([await s.interrupted() for s in survivors])  # still alive: nothing yet
    await asyncio.sleep(0.4)
    for survivor in survivors:
        await survivor.heartbeat()
    taken = await asyncio.gather(*(s.interrupted() for s in survivors))
    assert sorted(i.key for got in taken for i in got) == ["x", "y", "z"]
    sent = await asyncio.gather(*(s.orphans() for s in survivors))
    assert sorted(r.id for got in sent for r in got) == [r.id for r in replies]
    assert not any([await s.interrupted() for s in survivors])  # handed over once
    assert not any([await s.orphans() for s in survivors])
    # whoever took a reply owns it now: it is that survivor's pending work, nobody else's
    owner = next(s for s, got in zip(survivors, sent, strict=True) if got)
    assert {r.id for r in await owner.pending()} >= {r.id for r in sent[survivors.index(owner)]}


async def test_a_clean_stop_frees_its_work_at_once(pool: asyncpg.Pool) -> None:
    leaving, staying = await PgLedger(pool).open(), await PgLedger(pool).open()
    await leaving.enqueue(Outgoing("telegram", "1", "left behind"))
    await leaving.leave()
    assert [r.text for r in await staying.orphans()] == ["left behind"]
    assert staying.replica in await staying.live_replicas()
    assert leaving.replica not in await staying.live_replicas()


async def test_replicas_starting_at_once_migrate_once(fresh_postgres_dsn: str) -> None:
    async with asyncpg.create_pool(fresh_postgres_dsn, min_size=1, max_size=4) as pool:
        applied = await asyncio.gather(*(migrate(pool) for _ in range(4)))
    assert sorted(len(names) for names in applied) == [0, 0, 0, 1]
