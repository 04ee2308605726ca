"""Pairing shared by replicas on PostgreSQL (gateway/pairing/store.py over
memory/documents/postgres.py): what an admin decides on one replica is what every other
replica's choke point answers at once, and a block outlives every replica. Real PostgreSQL;
each replica has a pool of its own."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from adapters import Identity, InboundMessage
from gateway.auth import Access, Auth
from gateway.pairing import PairingStore
from memory.documents.postgres import PgStores

Opener = Callable[[], PgStores]


def replica(open_stores: Opener) -> PairingStore:
    return PairingStore(open_stores().documents("pairing"))


def dm(user: str) -> InboundMessage:
    return InboundMessage(
        platform="telegram", chat_id=user, chat_type="dm",
        sender=Identity("telegram", user, "Ada"), text="hi", message_id="1",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def test_approve_deny_and_block_are_seen_by_the_other_replica_at_once(
    pg_stores_factory: Opener,
) -> None:
    left, right = replica(pg_stores_factory), replica(pg_stores_factory)
    gate = Auth(Access(), right)  # right's choke point; decisions are made on left
    asked = right.request("telegram:7", "Ada", "7")
    assert asked is not None and not right.approved("telegram:7")
    assert gate.check(dm("7")).action != "allow"
    assert left.approve(asked.code) == "telegram:7"
    assert right.approved("telegram:7") and gate.check(dm("7")).action == "allow"
    assert right.take_welcomes({"telegram"}) == [("telegram:7", "7")]
    assert left.take_welcomes({"telegram"}) == []  # told once, by whichever replica took it

    other = left.request("telegram:8", "Bo", "8")
    assert other is not None
    again = right.request("telegram:8", "Bo", "8")  # right sees the code left issued
    assert again is not None and again.code == other.code and not again.new
    assert right.deny(other.code) == "telegram:8"
    assert left.listing().pending == () and left.approve(other.code) is None

    assert left.block("telegram:7")
    assert right.blocked("telegram:7") and not right.approved("telegram:7")
    verdict = gate.check(dm("7"))
    assert verdict.action == "ignore" and verdict.reason == "blocked"
    assert not right.block("telegram:7")  # blocked already, whichever replica asks


def test_a_blocked_person_stays_blocked_after_every_replica_restarts(
    pg_stores_factory: Opener,
) -> None:
    stores = pg_stores_factory()
    first = PairingStore(stores.documents("pairing"))
    offer = first.request("telegram:9", "Eve", "9")
    assert offer is not None and first.approve(offer.code) == "telegram:9"
    assert first.block("telegram:9")
    stores.pool.close()  # the replica is gone
    reopened = replica(pg_stores_factory)
    assert reopened.blocked("telegram:9") and not reopened.approved("telegram:9")
    assert reopened.listing().blocked == ("telegram:9",)
    gate = Auth(Access(allowed_users={"telegram": frozenset({"*"})}), reopened)
    assert gate.check(dm("9")).action == "ignore"


def test_strangers_on_two_replicas_at_once_all_get_their_codes(pg_stores_factory: Opener) -> None:
    left, right = replica(pg_stores_factory), replica(pg_stores_factory)

    def ask(store: PairingStore, n: int) -> str | None:
        offer = store.request(f"telegram:{n}", f"person {n}", str(n))
        return None if offer is None else offer.code

    with ThreadPoolExecutor(max_workers=6) as pool:
        jobs = [pool.submit(ask, (left, right)[n % 2], n) for n in range(30)]
        codes = [job.result(timeout=60) for job in jobs]
    listed = {p.who: p.code for p in left.listing().pending}
    assert listed == {f"telegram:{n}": code for n, code in enumerate(codes)}


async def test_the_choke_point_never_holds_the_event_loop_on_the_database(
    pg_stores_factory: Opener,
) -> None:
    """Every message asks the shared pairing state (its version, a stranger's code): on
    PostgreSQL that is a round trip, which must delay that message alone, not every chat.
    The table is locked for a while by another session; the loop keeps running meanwhile."""
    stores = pg_stores_factory()
    gate = Auth(Access(), PairingStore(stores.documents("pairing")))
    assert not gate.pairing.local
    locked, release = threading.Event(), threading.Event()

    def hold_the_table() -> None:
        with stores.pool.connection() as conn:
            conn.execute("LOCK TABLE store_documents IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(10)  # the transaction (and the lock) ends as the block ends

    holder = threading.Thread(target=hold_the_table)
    holder.start()
    try:
        assert await asyncio.to_thread(locked.wait, 10)
        threading.Timer(0.5, release.set).start()  # from elsewhere: a held loop cannot
        decided = asyncio.create_task(gate.decide(dm("7")))
        ticks = 0
        while not decided.done():
            await asyncio.sleep(0.01)
            ticks += 1
        verdict = await decided
    finally:
        release.set()
        holder.join(10)
    assert verdict.action == "pair" and verdict.offer is not None  # decided once unlocked
    assert ticks >= 10  # the loop ran while the question waited (0 when it was held)


async def test_messages_are_decided_in_the_order_they_arrived(pg_stores_factory: Opener) -> None:
    """Discord hands each event to a task of its own: two messages of one chat that wait
    on the database together must still be decided (and so queued) in arrival order."""
    stores = pg_stores_factory()
    gate = Auth(Access(allowed_users={"telegram": frozenset({"*"})}), PairingStore(
        stores.documents("pairing")))  # fmt: skip
    locked, release = threading.Event(), threading.Event()

    def hold_the_table() -> None:
        with stores.pool.connection() as conn:
            conn.execute("LOCK TABLE store_documents IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_table)
    holder.start()
    decided: list[int] = []
    try:
        assert await asyncio.to_thread(locked.wait, 10)

        async def receive(n: int) -> None:
            await gate.decide(dm(str(n)))
            decided.append(n)

        tasks = [asyncio.create_task(receive(n)) for n in range(20)]
        await asyncio.sleep(0.2)  # every one of them waiting on the locked table
        release.set()
        await asyncio.gather(*tasks)
    finally:
        release.set()
        holder.join(10)
    assert decided == list(range(20))
