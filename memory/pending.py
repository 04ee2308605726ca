"""Staged memory writes (``memory.write_approval``): ``<person>/PENDING.json``.

A staged write keeps its operations *pinned* to the exact entry text they matched when it
was staged, so approving applies only if that entry is still there. The file lives beside
the store it changes, so a person's pending writes are as private as their memory.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.entries import Target
from memory.files import atomic_write_text, move_aside
from memory.operations import Operation, op_dict

__all__ = ["PENDING_FILE", "PendingWrite", "load_pending", "new_pending_id", "save_pending"]

PENDING_FILE = "PENDING.json"


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


def new_pending_id() -> str:
    return secrets.token_hex(3)


def load_pending(path: Path) -> list[PendingWrite]:
    """Read the staged writes; call with the file's lock held.

    A file that cannot be read as ours is moved aside to ``PENDING.json.corrupt.<ts>`` (kept
    for an operator, logged) rather than crashing every later memory call.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        items: list[PendingWrite] = []
        for raw in data["items"]:
            ops = tuple(
                Operation(o["action"], o.get("content"), o.get("old_text"), o.get("pin"))
                for o in raw["operations"]
            )
            items.append(
                PendingWrite(
                    str(raw["id"]),
                    raw["target"],
                    ops,
                    float(raw["created_at"]),
                    bool(raw.get("batch")),
                )
            )
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        move_aside(path, exc, what="staged memory writes", now=time.time())
        return []
    return items


def save_pending(path: Path, items: Sequence[PendingWrite]) -> None:
    data = {"version": 1, "items": [item.to_json() for item in items]}
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1))
