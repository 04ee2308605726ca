"""Write approval (``memory.write_approval``): stage the model's writes, decide them later.

``WriteApproval`` is the half of ``MemoryStore`` that deals with ``PENDING.json``
(``memory.curated.pending``): ``_stage`` validates a write as if it were applied now and keeps it
instead (its id also goes to the turn's ``MemoryTurn.staged``, so the caller can announce
it); ``decide`` applies or drops one, and keeps the decision. Every step holds the
``PENDING.json`` lock, and an approval also holds the lock of the file it changes.

``decide`` answers with a typed ``Decision``; ``approve`` / ``reject`` give the same as the
JSON-able dict the CLI prints (the memory tool's result shape).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memory.curated.entries import FILE_NAMES, Target
from memory.curated.operations import Applied, MemoryTurn, Operation, Refusal
from memory.curated.pending import (
    PENDING_FILE,
    PendingFile,
    PendingWrite,
    Verdict,
    load_pending,
    new_pending_id,
    save_pending,
)
from memory.files import ensure_private_dir, file_lock

__all__ = ["Decision", "Problem", "WriteApproval"]

Problem = Literal["full", "drift", "other"]
"""Why an approval could not apply yet: the file has no room; it was edited by hand and
must be repaired; something else (``Decision.error`` says what)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What ``decide`` did with one staged write.

    ``verdict`` None means nothing was decided: with ``write`` None, no write with that id
    is waiting here or was decided lately (someone else's id, or a typo); with ``write``
    set, the approval could not apply yet (``problem``) and the write is still waiting.
    ``earlier``: it had been decided before this call, and ``verdict`` is that decision.
    """

    id: str
    verdict: Verdict | None
    write: PendingWrite | None
    earlier: bool = False
    problem: Problem | None = None
    error: str | None = None
    usage: str | None = None  # the changed file's usage after an approval


class WriteApproval:
    """Mixed into ``MemoryStore`` (``memory.curated.store``); uses its locked read-apply-write."""

    directory: Path
    person: str
    _clock: Callable[[], float]

    if TYPE_CHECKING:  # defined by MemoryStore

        def path(self, target: Target) -> Path: ...

        def _apply_locked(
            self, target: Target, ops: Sequence[Operation], batch: bool
        ) -> Applied: ...

        def _write(self, target: Target, entries: Sequence[str]) -> None: ...

        def _success(
            self, turn: MemoryTurn, target: Target, entries: Sequence[str], message: str, *,
            note: bool = True, echoes: Sequence[dict[str, Any]] = (),
        ) -> dict[str, Any]: ...  # fmt: skip

        def _failure(self, turn: MemoryTurn, refusal: Refusal) -> dict[str, Any]: ...

    def _stage(
        self, target: Target, ops: Sequence[Operation], batch: bool, turn: MemoryTurn
    ) -> dict[str, Any]:
        with file_lock(self.path(target)):
            applied = self._apply_locked(target, ops, batch)
        if not applied.changed:
            return self._success(
                turn, target, applied.entries, "Entry already exists; nothing to stage.", note=False
            )
        item = PendingWrite(new_pending_id(), target, tuple(applied.ops), self._clock(), batch)
        pending_path = self._pending_path()
        ensure_private_dir(self.directory)
        with file_lock(pending_path):
            state = load_pending(pending_path)
            taken = {p.id for p in state.items} | {d.write.id for d in state.decided}
            while item.id in taken:
                item = PendingWrite(
                    new_pending_id(), target, item.operations, item.created_at, batch
                )
            state.items.append(item)
            save_pending(pending_path, state)
        turn.failures = 0
        turn.staged.append(item.id)
        return {
            "success": True,
            "done": True,
            "staged": True,
            "pending_id": item.id,
            "target": target,
            "message": (
                f"Staged for the user's approval as {item.id}; memory is unchanged until they "
                "approve it. This call is complete: do not repeat it."
            ),
        }

    def pending(self) -> list[PendingWrite]:
        with file_lock(self._pending_path()):
            return load_pending(self._pending_path()).items

    def decide(self, pending_id: str, *, approve: bool) -> Decision:
        """Approve (apply, if every entry it was pinned to is still there) or reject one
        staged write; an id decided before answers with that decision (``earlier``)."""
        return self._decide(pending_id, approve)[0]

    def approve(self, pending_id: str) -> dict[str, Any]:
        """``decide(approve=True)`` as the memory tool's result dict (for the CLI)."""
        return self._decide(pending_id, True)[1]

    def reject(self, pending_id: str) -> dict[str, Any]:
        return self._decide(pending_id, False)[1]

    def _decide(self, pending_id: str, approve: bool) -> tuple[Decision, dict[str, Any]]:
        pending_path = self._pending_path()
        ensure_private_dir(self.directory)
        with file_lock(pending_path):
            state = load_pending(pending_path)
            item = state.find(pending_id)
            if item is None:
                return _unknown(state, pending_id)
            if not approve:
                state.decide(item, "rejected", self._clock())
                save_pending(pending_path, state)
                message = f"Rejected {pending_id}; memory unchanged."
                return Decision(pending_id, "rejected", item), {"success": True, "message": message}
            turn = MemoryTurn()
            try:
                with file_lock(self.path(item.target)):
                    applied = self._apply_locked(item.target, item.operations, item.batch)
                    if applied.changed:
                        self._write(item.target, applied.entries)
            except Refusal as refusal:
                stale = bool(refusal.extra.get("stale", False))
                if stale:
                    state.decide(item, "discarded", self._clock())
                    save_pending(pending_path, state)
                result = {k: v for k, v in self._failure(turn, refusal).items() if k != "stale"}
                result["discarded"] = stale
                if stale:
                    return Decision(pending_id, "discarded", item, error=refusal.error), result
                problem: Problem = (
                    "full"
                    if "usage" in refusal.extra
                    else "drift"
                    if "drift_backup" in refusal.extra
                    else "other"
                )
                usage = refusal.extra.get("usage")
                decision = Decision(
                    pending_id, None, item, problem=problem, error=refusal.error, usage=usage
                )
                return decision, result
            state.decide(item, "approved", self._clock())
            save_pending(pending_path, state)
        result = self._success(
            turn,
            item.target,
            applied.entries,
            f"Approved {pending_id}: {'; '.join(item.summary())}",
            echoes=applied.echoes,
        )
        return Decision(pending_id, "approved", item, usage=result["usage"]), result

    def _pending_path(self) -> Path:
        return self.directory / PENDING_FILE


def _unknown(state: PendingFile, pending_id: str) -> tuple[Decision, dict[str, Any]]:
    """Nothing waits under ``pending_id``: what was decided about it, if anything."""
    earlier = state.decision(pending_id)
    if earlier is None:
        error = f"No pending memory write with id {pending_id!r}."
        return Decision(pending_id, None, None), {"success": False, "error": error}
    file = FILE_NAMES[earlier.write.target]
    error = f"No pending memory write with id {pending_id!r}: it was {earlier.verdict} already ({file})."  # noqa: E501
    decision = Decision(pending_id, earlier.verdict, earlier.write, earlier=True)
    return decision, {"success": False, "error": error, "decided": earlier.verdict}
