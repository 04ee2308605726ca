"""Staged memory writes (``memory.write_approval``): ``<person>/PENDING.json``.

A staged write keeps its operations *pinned* to the exact entry text they matched when it
was staged, so approving applies only if that entry is still there. The file lives beside
the store it changes, so a person's pending writes are as private as their memory.

The file also keeps the last ``KEEP_DECIDED`` decisions (what was approved, rejected or
discarded, and when), so a second press of an old Approve button, or a typed ``approve``
of an id already decided, can say what became of it instead of "no such write"::

    {"version": 1, "items": [<staged write>...], "decided": [{"verdict": "approved",
     "at": 1715000000.0, "write": <staged write>}...]}

A file without ``decided`` (written before decisions were kept) reads as none decided.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from memory.curated.entries import Target
from memory.curated.operations import Operation, op_dict
from memory.documents import Documents, Version

__all__ = [
    "KEEP_DECIDED",
    "PENDING_FILE",
    "Decided",
    "PendingFile",
    "PendingWrite",
    "Verdict",
    "load_pending",
    "new_pending_id",
    "save_pending",
]

PENDING_FILE = "PENDING.json"
KEEP_DECIDED = 200
Verdict = Literal["approved", "rejected", "discarded"]
"""``discarded``: approved, but the entry it was pinned to had changed or gone."""
_VERDICTS: tuple[Verdict, ...] = ("approved", "rejected", "discarded")


@dataclass(frozen=True, slots=True)
class PendingWrite:
    id: str
    target: Target
    operations: tuple[Operation, ...]
    created_at: float
    batch: bool = False

    def summary(self) -> list[str]:
        return [op.describe() for op in self.operations]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "target": self.target,
            "created_at": self.created_at,
            "batch": self.batch,
            "operations": [
                {k: v for k, v in op_dict(op).items() if v is not None} for op in self.operations
            ],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> PendingWrite:
        ops = tuple(
            Operation(o["action"], o.get("content"), o.get("old_text"), o.get("pin"))
            for o in raw["operations"]
        )
        return cls(
            str(raw["id"]), raw["target"], ops, float(raw["created_at"]), bool(raw.get("batch"))
        )


@dataclass(frozen=True, slots=True)
class Decided:
    """A staged write that was decided: ``verdict`` at unix time ``at``."""

    write: PendingWrite
    verdict: Verdict
    at: float

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "at": self.at, "write": self.write.to_json()}


@dataclass(slots=True)
class PendingFile:
    """What ``PENDING.json`` holds: the writes waiting, the decisions kept (oldest first),
    and the stored version they were read at (a save writes only over that one)."""

    items: list[PendingWrite] = field(default_factory=list)
    decided: list[Decided] = field(default_factory=list)
    version: Version = None

    def find(self, pending_id: str) -> PendingWrite | None:
        return next((p for p in self.items if p.id == pending_id), None)

    def decision(self, pending_id: str) -> Decided | None:
        """The latest decision kept for ``pending_id``."""
        return next((d for d in reversed(self.decided) if d.write.id == pending_id), None)

    def decide(self, item: PendingWrite, verdict: Verdict, now: float) -> None:
        """Take ``item`` off the waiting list and keep the decision (the last few only)."""
        self.items = [p for p in self.items if p.id != item.id]
        self.decided.append(Decided(item, verdict, now))
        del self.decided[:-KEEP_DECIDED]


def new_pending_id() -> str:
    return secrets.token_hex(3)


def load_pending(documents: Documents) -> PendingFile:
    """Read the staged writes and decisions; call inside the file's exclusive section.

    A file that cannot be read as ours is set aside (on disk ``PENDING.json.corrupt.<ts>``;
    kept for an operator, logged) rather than crashing every later memory call.
    """
    document = documents.read(PENDING_FILE)
    if document.raw is None:
        return PendingFile()
    try:
        data = json.loads(document.raw.decode("utf-8"))
        items = [PendingWrite.from_json(raw) for raw in data["items"]]
        decided = []
        for raw in data.get("decided", []):
            if raw["verdict"] not in _VERDICTS:
                raise ValueError(f"unknown verdict {raw['verdict']!r}")
            verdict = cast(Verdict, raw["verdict"])
            decided.append(Decided(PendingWrite.from_json(raw["write"]), verdict, float(raw["at"])))
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        documents.set_aside(PENDING_FILE, exc, what="staged memory writes", now=time.time())
        return PendingFile()
    return PendingFile(items, decided, document.version)


def save_pending(documents: Documents, state: PendingFile) -> None:
    """Write ``state`` over the version it was read at (``Conflict`` if that changed)."""
    data = {
        "version": 1,
        "items": [item.to_json() for item in state.items],
        "decided": [d.to_json() for d in state.decided],
    }
    text = json.dumps(data, ensure_ascii=False, indent=1)
    documents.write(PENDING_FILE, text.encode("utf-8"), expected=state.version)
