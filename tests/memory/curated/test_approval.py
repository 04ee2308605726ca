"""Deciding staged writes (memory/curated/approval.py): the typed ``Decision``, the decisions kept
in PENDING.json, and the ids a turn staged. On both backends (real files, PostgreSQL)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory import MemoryLimits, MemoryStore, MemoryTurn
from memory.curated import Refused, Staged, pending
from tests.stores import Storage


@pytest.fixture
def gated(storage: Storage) -> MemoryStore:
    return storage.memory("telegram-1", limits=MemoryLimits(60, 60), write_approval=True)


def direct_store(gated: MemoryStore) -> MemoryStore:
    """The same person's store with writes applied at once (an operator's)."""
    return MemoryStore(gated.documents, limits=gated.limits, person=gated.person)


def pending_file(store: MemoryStore) -> dict[str, Any]:
    document = store.documents.read(pending.PENDING_FILE)
    assert document.raw is not None
    return dict(json.loads(document.raw))


def stage(store: MemoryStore, turn: MemoryTurn | None = None, **args: str) -> str:
    result = store.call({"target": "user", **args}, turn or MemoryTurn())
    assert isinstance(result, Staged), result
    return result.pending_id


def test_a_turn_collects_the_ids_it_staged_in_order(gated: MemoryStore) -> None:
    turn = MemoryTurn()
    first = stage(gated, turn, action="add", content="prefers tea")
    second = stage(gated, turn, action="add", content="lives in Lyon")
    gated.call({"action": "add", "target": "user", "content": ""}, turn)  # refused: none
    assert turn.staged == [first, second]
    assert [p.id for p in gated.pending()] == [first, second]


def test_an_approval_says_what_it_applied_and_the_usage(gated: MemoryStore) -> None:
    pending_id = stage(gated, action="add", content="prefers tea")
    decision = gated.decide(pending_id, approve=True)
    assert decision.verdict == "approved" and not decision.earlier
    assert decision.write is not None and decision.write.operations[0].content == "prefers tea"
    assert decision.usage == "18% — 11/60 chars"
    assert gated.entries("user") == ["prefers tea"]


def test_a_second_decision_reports_the_first_and_changes_nothing(gated: MemoryStore) -> None:
    kept = stage(gated, action="add", content="prefers tea")
    dropped = stage(gated, action="add", content="likes jazz")
    assert gated.decide(kept, approve=True).verdict == "approved"
    assert gated.decide(dropped, approve=False).verdict == "rejected"
    again = gated.decide(kept, approve=False)  # a late "reject" cannot undo an approval
    assert (again.verdict, again.earlier) == ("approved", True)
    again = gated.decide(dropped, approve=True)
    assert (again.verdict, again.earlier) == ("rejected", True)
    assert gated.entries("user") == ["prefers tea"]
    late = gated.approve(dropped)
    assert isinstance(late, Refused) and "it was rejected already" in late.error


def test_an_unknown_id_is_neither_waiting_nor_decided(gated: MemoryStore) -> None:
    decision = gated.decide("abcdef", approve=True)
    assert decision.verdict is None and decision.write is None
    assert gated.approve("abcdef") == Refused("No pending memory write with id 'abcdef'.")


def test_an_approval_that_does_not_fit_stays_waiting(gated: MemoryStore) -> None:
    pending_id = stage(gated, action="add", content="x" * 50)
    direct = direct_store(gated)
    direct.call({"action": "add", "target": "user", "content": "y" * 30}, MemoryTurn())
    decision = gated.decide(pending_id, approve=True)
    assert decision.verdict is None and decision.problem == "full"
    assert decision.usage == "50% — 30/60 chars"
    assert [p.id for p in gated.pending()] == [pending_id]


def test_a_stale_approval_is_discarded_and_kept_as_such(gated: MemoryStore) -> None:
    direct = direct_store(gated)
    direct.call({"action": "add", "target": "user", "content": "lives in Lyon"}, MemoryTurn())
    pending_id = stage(gated, action="replace", old_text="Lyon", content="lives in Paris")
    direct.call({"action": "remove", "target": "user", "old_text": "Lyon"}, MemoryTurn())
    assert gated.decide(pending_id, approve=True).verdict == "discarded"
    again = gated.decide(pending_id, approve=True)
    assert (again.verdict, again.earlier) == ("discarded", True)


def test_decisions_are_kept_on_disk_and_bounded(
    gated: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = 12  # instead of KEEP_DECIDED: each decision is a durable write
    monkeypatch.setattr(pending, "KEEP_DECIDED", keep)
    first = stage(gated, action="add", content="prefers tea")
    gated.decide(first, approve=False)
    data = pending_file(gated)
    assert data["items"] == [] and data["decided"][0]["verdict"] == "rejected"
    for n in range(keep):
        gated.decide(stage(gated, action="add", content=f"fact {n}"), approve=False)
    assert gated.decide(first, approve=True).write is None  # the oldest decision is gone
    data = pending_file(gated)
    assert len(data["decided"]) == keep


def test_a_file_from_before_decisions_were_kept_still_reads(gated: MemoryStore) -> None:
    pending_id = stage(gated, action="add", content="prefers tea")
    data = pending_file(gated)
    del data["decided"]
    version = gated.documents.version(pending.PENDING_FILE)
    gated.documents.write(pending.PENDING_FILE, json.dumps(data).encode(), expected=version)
    assert [p.id for p in gated.pending()] == [pending_id]
    assert gated.decide(pending_id, approve=True).verdict == "approved"
