"""Write approval (``memory.write_approval``): stage the model's writes, decide them later.

``WriteApproval`` is the half of ``MemoryStore`` that deals with ``PENDING.json``
(``memory.curated.pending``): ``_stage`` validates a write as if it were applied now and keeps it
instead (its id also goes to the turn's ``MemoryTurn.staged``, so the caller can announce
it); ``decide`` applies or drops one, and keeps the decision. Every step holds the
``PENDING.json`` section, and an approval also holds the section of the file it changes
(on PostgreSQL both are one transaction: the approval and its record commit together).

``decide`` answers with a typed ``Decision``; ``approve`` / ``reject`` answer with the typed
outcome the CLI prints (``memory.curated.outcomes``: ``Saved``, ``Done`` or ``Refused``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memory.curated.entries import FILE_NAMES, Target
from memory.curated.operations import Applied, MemoryTurn, Operation, Refusal
from memory.curated.outcomes import Change, Done, Refused, Saved, Staged
from memory.curated.pending import (
    PENDING_FILE,
    PendingFile,
    PendingWrite,
    Verdict,
    load_pending,
    new_pending_id,
    save_pending,
)
from memory.documents import Documents, Version

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

    documents: Documents
    person: str
    _clock: Callable[[], float]

    if TYPE_CHECKING:  # defined by MemoryStore

        def _apply_locked(
            self, target: Target, ops: Sequence[Operation], batch: bool
        ) -> Applied: ...

        def _write(self, target: Target, entries: Sequence[str], expected: Version) -> None: ...

        def _saved(
            self, turn: MemoryTurn, target: Target, entries: Sequence[str], message: str, *,
            wrote: bool = True, changes: Sequence[Change] = (),
        ) -> Saved: ...  # fmt: skip

        def _failure(self, turn: MemoryTurn, refusal: Refusal) -> Refused: ...

    def _stage(
        self, target: Target, ops: Sequence[Operation], batch: bool, turn: MemoryTurn
    ) -> Saved | Staged:
        with self.documents.exclusive(FILE_NAMES[target]):
            applied = self._apply_locked(target, ops, batch)
        if not applied.changed:
            return self._saved(
                turn,
                target,
                applied.entries,
                "Entry already exists; nothing to stage.",
                wrote=False,
            )
        item = PendingWrite(new_pending_id(), target, tuple(applied.ops), self._clock(), batch)
        with self.documents.exclusive(PENDING_FILE):
            state = load_pending(self.documents)
            taken = {p.id for p in state.items} | {d.write.id for d in state.decided}
            while item.id in taken:
                item = PendingWrite(
                    new_pending_id(), target, item.operations, item.created_at, batch
                )
            state.items.append(item)
            save_pending(self.documents, state)
        turn.failures = 0
        turn.staged.append(item.id)
        return Staged(
            target,
            item.id,
            f"Staged for the user's approval as {item.id}; memory is unchanged until they "
            "approve it. This call is complete: do not repeat it.",
        )

    def pending(self) -> list[PendingWrite]:
        with self.documents.exclusive(PENDING_FILE):
            return load_pending(self.documents).items

    def decide(self, pending_id: str, *, approve: bool) -> Decision:
        """Approve (apply, if every entry it was pinned to is still there) or reject one
        staged write; an id decided before answers with that decision (``earlier``)."""
        return self._decide(pending_id, approve)[0]

    def approve(self, pending_id: str) -> Saved | Refused:
        """``decide(approve=True)`` as an outcome to print (for the CLI)."""
        outcome = self._decide(pending_id, True)[1]
        assert not isinstance(outcome, Done)  # only a rejection is Done
        return outcome

    def reject(self, pending_id: str) -> Done | Refused:
        outcome = self._decide(pending_id, False)[1]
        assert not isinstance(outcome, Saved)  # only an approval saves
        return outcome

    def _decide(self, pending_id: str, approve: bool) -> tuple[Decision, Saved | Done | Refused]:
        with self.documents.exclusive(PENDING_FILE):
            state = load_pending(self.documents)
            item = state.find(pending_id)
            if item is None:
                return _unknown(state, pending_id)
            if not approve:
                state.decide(item, "rejected", self._clock())
                save_pending(self.documents, state)
                message = f"Rejected {pending_id}; memory unchanged."
                return Decision(pending_id, "rejected", item), Done(message)
            turn = MemoryTurn()
            try:
                with self.documents.exclusive(FILE_NAMES[item.target]):
                    applied = self._apply_locked(item.target, item.operations, item.batch)
                    if applied.changed:
                        self._write(item.target, applied.entries, applied.version)
            except Refusal as refusal:
                result = self._failure(turn, refusal)
                if refusal.stale:
                    state.decide(item, "discarded", self._clock())
                    save_pending(self.documents, state)
                    return Decision(pending_id, "discarded", item, error=refusal.error), result
                problem: Problem = (
                    "full"
                    if result.usage is not None
                    else "drift"
                    if result.drift_backup is not None
                    else "other"
                )
                decision = Decision(
                    pending_id, None, item, problem=problem, error=refusal.error, usage=result.usage
                )
                return decision, result
            state.decide(item, "approved", self._clock())
            save_pending(self.documents, state)
        saved = self._saved(
            turn,
            item.target,
            applied.entries,
            f"Approved {pending_id}: {'; '.join(item.summary())}",
            changes=applied.changes,
        )
        return Decision(pending_id, "approved", item, usage=saved.usage), saved


def _unknown(state: PendingFile, pending_id: str) -> tuple[Decision, Refused]:
    """Nothing waits under ``pending_id``: what was decided about it, if anything."""
    earlier = state.decision(pending_id)
    if earlier is None:
        error = f"No pending memory write with id {pending_id!r}."
        return Decision(pending_id, None, None), Refused(error)
    file = FILE_NAMES[earlier.write.target]
    error = f"No pending memory write with id {pending_id!r}: it was {earlier.verdict} already ({file})."  # noqa: E501
    decision = Decision(pending_id, earlier.verdict, earlier.write, earlier=True)
    return decision, Refused(error)
