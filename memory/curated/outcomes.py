"""What a memory operation did, as typed values: the store answers with these, never JSON.

``MemoryStore.call`` (one ``memory`` tool call) answers ``Saved``, ``Staged`` or ``Refused``;
an approval answers ``Saved`` (or ``Refused``), a rejection or a repair ``Done`` (or
``Refused``). Recoverable problems are ``Refused`` results, never exceptions. The memory
tool's JSON is built from these at the tool edge (``agent_core.tools.memory``); the chat
commands and the CLI read their fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from memory.curated.entries import Target

__all__ = ["Change", "Done", "Outcome", "Refused", "Saved", "Staged", "WriteOutcome"]


@dataclass(frozen=True, slots=True)
class Change:
    """One entry a replace or remove changed: ``old`` became ``new`` (None: removed)."""

    old: str
    new: str | None = None


@dataclass(frozen=True, slots=True)
class Saved:
    """The file holds what was asked: written, or (``wrote`` False) it already did."""

    ok: ClassVar[bool] = True
    target: Target
    message: str
    usage: str  # the file's usage after the write
    entry_count: int
    changes: tuple[Change, ...] = ()  # what replaces and removes changed, in order
    wrote: bool = True


@dataclass(frozen=True, slots=True)
class Staged:
    """Write approval is on: the write waits as ``pending_id``; memory is unchanged."""

    ok: ClassVar[bool] = True
    target: Target
    pending_id: str
    message: str


@dataclass(frozen=True, slots=True)
class Done:
    """An operator's action that changed no entry (a rejection, a repair); ``usage`` is the
    repaired file's, when one was rewritten."""

    ok: ClassVar[bool] = True
    message: str
    usage: str | None = None


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing was changed, and ``error`` says why (for the model, or the person).

    ``final``: this turn's failures ran out; the model is told to stop retrying (the other
    fields are then empty). The rest say more when they apply: the entries as the model may
    see them and the file's usage (over the limit, no match), where the copy of a drifted
    file is, the previews of several matches, the scanner's pattern ids.
    """

    ok: ClassVar[bool] = False
    error: str
    final: bool = False
    current_entries: tuple[str, ...] | None = None
    usage: str | None = None
    drift_backup: str | None = None
    matches: tuple[str, ...] | None = None
    blocked: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls,
        error: str,
        *,
        current_entries: Sequence[str] | None = None,
        usage: str | None = None,
        drift_backup: str | None = None,
        matches: Sequence[str] | None = None,
        blocked: Sequence[str] | None = None,
    ) -> Refused:
        """A ``Refused`` from any sequences (kept as tuples)."""
        return cls(
            error,
            current_entries=None if current_entries is None else tuple(current_entries),
            usage=usage,
            drift_backup=drift_backup,
            matches=None if matches is None else tuple(matches),
            blocked=None if blocked is None else tuple(blocked),
        )


WriteOutcome = Saved | Staged | Refused
"""What one ``memory`` tool call did."""
Outcome = Saved | Staged | Done | Refused
"""Any answer of the store's operations."""
