"""The delivery ledger: dedup, interrupted turns, the outbox's states (real SQLite)."""

from __future__ import annotations

import time

from gateway.ledger import Inbound, Ledger, Outgoing
from memory.archive.database import Archive


def inbound(key: str, at: float | None = None) -> Inbound:
    return Inbound(key, "telegram:dm:1", "telegram", "1", None, key, at or time.time())


async def test_accept_refuses_a_key_seen_before(archive: Archive) -> None:
    ledger = Ledger(archive)
    assert await ledger.accept(inbound("telegram:1:5"))
    assert not await ledger.accept(inbound("telegram:1:5"))
    assert await ledger.accept(inbound("telegram:1:6"))


async def test_interrupted_lists_unanswered_updates_once(archive: Archive) -> None:
    ledger = Ledger(archive)
    for key in ("a", "b", "c"):
        await ledger.accept(inbound(key))
    await ledger.enqueue(Outgoing("telegram", "1", "reply to a"), answers=("a",))
    await ledger.finish(["b"])
    assert [i.key for i in await ledger.interrupted()] == ["c"]
    assert await ledger.interrupted() == []
    assert not await ledger.accept(inbound("c"))  # still deduplicated afterwards


async def test_outbox_rows_move_from_pending_to_sent_or_failed(archive: Archive) -> None:
    ledger = Ledger(archive)
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


async def test_prune_forgets_old_rows_but_never_pending_work(archive: Archive) -> None:
    ledger = Ledger(archive, retention_s=10)
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
