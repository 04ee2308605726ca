"""The bounded, curated memory of one person: ``MEMORY.md`` and ``USER.md``.

``MemoryStore.call(args, turn)`` runs the LLM-facing ``memory`` tool: it takes the JSON
arguments the model sends and answers with a typed outcome (``memory.curated.outcomes``; the
tool's JSON is built from it in ``agent_core.tools.memory``). The CLI and the chat commands
go through the same function, so there is one set of rules:

* add / replace / remove by unique substring, or an all-or-nothing ``operations`` batch
  whose budget is checked on the final state;
* hard character limits per file; over the limit the tool answers with the entries and an
  instruction to consolidate, and after ``MAX_FAILURES_PER_TURN`` failures in one turn it
  tells the model to stop;
* every write holds the file's exclusive section across re-read → mutate → write (the
  compare-and-swap of ``memory.documents``; on disk ``<FILE>.lock`` and an atomic rename);
* content is scanned (``memory.scan.scanner``) before it is stored, and again when a snapshot is
  taken for a system prompt;
* a file edited by hand that no longer round-trips is backed up and never overwritten
  (the drift guard); on PostgreSQL a row whose text a store did not write is such a file
  too (``Document.foreign``; another replica's writes go through a store and never are);
* with write approval on, writes are validated and staged in ``PENDING.json`` instead
  (``memory.curated.approval``: staging, and deciding a staged write).

Which folder holds whose store (people, the shared scope) is ``memory.curated.scope``. The
files are ``memory.documents`` (a folder on disk, or rows in PostgreSQL): this module and
``approval`` hold every rule, the documents only store text.

Errors: ``MemoryStoreError`` (``memory.curated.errors``) is the root; a person id that is
not a safe directory name is ``memory.people.InvalidPersonError`` (a ``ValueError``), shared
with the archive.

Recoverable problems (no match, over the limit, drift, blocked content) are *results*
(``Refused``) for the model, never exceptions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.curated.approval import WriteApproval
from memory.curated.entries import (
    FILE_NAMES,
    TARGETS,
    Target,
    format_usage,
    join_entries,
    parse_entries,
    preview,
    render_block,
    usage_chars,
)
from memory.curated.errors import MemoryStoreError
from memory.curated.operations import (
    Applied,
    MemoryTurn,
    Operation,
    Refusal,
    apply_operations,
    blocked_placeholder,
    display,
    finding_ids,
    parse_request,
    success_message,
)
from memory.curated.outcomes import Change, Done, Refused, Saved, WriteOutcome
from memory.curated.pending import PendingWrite
from memory.documents import Conflict, Documents, DocumentsError, FileDocuments, Version

__all__ = [
    "MAX_FAILURES_PER_TURN",
    "BlockedEntry",
    "DriftReport",
    "MemoryLimits",
    "MemorySnapshot",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryTurn",
    "PendingWrite",
]

log = logging.getLogger(__name__)
MAX_FAILURES_PER_TURN = 3


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    memory: int = 2200
    user: int = 1375

    def __post_init__(self) -> None:
        if self.memory <= 0 or self.user <= 0:
            raise ValueError("memory limits must be positive")

    def of(self, target: Target) -> int:
        return self.memory if target == "memory" else self.user


@dataclass(frozen=True, slots=True)
class BlockedEntry:
    target: Target
    index: int
    entry: str
    ids: tuple[str, ...]

    @property
    def placeholder(self) -> str:
        return blocked_placeholder(FILE_NAMES[self.target], self.ids)


@dataclass(frozen=True, slots=True)
class DriftReport:
    target: Target
    reason: str


@dataclass(frozen=True, slots=True)
class MemorySnapshot:
    """What a session's system prompt carries; rendered once, byte-stable."""

    memory_block: str
    user_block: str
    blocked: tuple[BlockedEntry, ...] = ()

    def render(self) -> str:
        return "\n\n".join(block for block in (self.memory_block, self.user_block) if block)


@dataclass(frozen=True, slots=True)
class _Disk:
    raw: bytes | None  # None: the file does not exist
    text: str | None  # None: missing or undecodable
    decode_error: str | None = None
    version: Version = None
    foreign: bool = False


class MemoryStore(WriteApproval):
    """One person's (or the shared) ``MEMORY.md`` + ``USER.md``: in ``where`` (a folder on
    disk, or any ``Documents``, then ``person`` is required); with write approval on, the
    model's writes are staged (``memory.curated.approval``)."""

    def __init__(
        self,
        where: Path | Documents,
        *,
        limits: MemoryLimits | None = None,
        write_approval: bool = False,
        person: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(where, Path):
            self.documents: Documents = FileDocuments(where)
            person = person or where.name
        else:
            self.documents = where
        if not person:
            raise TypeError("a store that is not a folder on disk needs person=")
        self.limits = limits or MemoryLimits()
        self.write_approval = write_approval
        self.person = person
        self._clock = clock

    # -- reading ------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The folder on disk; ``MemoryStoreError`` for a store kept elsewhere."""
        if not isinstance(self.documents, FileDocuments):
            raise MemoryStoreError(f"{self.documents.where} is not a folder on disk")
        return self.documents.directory

    def path(self, target: Target) -> Path:
        return self.directory / FILE_NAMES[target]

    def location(self, target: Target) -> str:
        """Where ``target`` is kept, for people: a path, or ``postgres:memory/<person>/…``."""
        return self.documents.location(FILE_NAMES[target])

    def entries(self, target: Target) -> list[str]:
        """Live entries, raw text (blocked ones included, so people can see them).

        Raises ``UnicodeDecodeError`` for a file that is not UTF-8: such a file is never
        read as empty.
        """
        disk = self._read(target)
        if disk.decode_error is not None:
            raise UnicodeDecodeError("utf-8", disk.raw or b"", 0, 1, disk.decode_error)
        return parse_entries(disk.text or "")

    def usage(self, target: Target) -> str:
        return format_usage(usage_chars(self.entries(target)), self.limits.of(target))

    def snapshot(self) -> MemorySnapshot:
        """Render both files for a system prompt; the same bytes on disk give the same text."""
        blocks: dict[Target, str] = {}
        blocked: list[BlockedEntry] = []
        for target in TARGETS:
            disk = self._read(target)
            limit = self.limits.of(target)
            if disk.decode_error is not None:
                note = (
                    f"[UNREADABLE: {FILE_NAMES[target]} is not valid UTF-8 ({disk.decode_error});"
                    " memory changes to it are refused until an operator repairs it]"
                )
                blocks[target] = render_block(target, [note], limit, chars=len(disk.raw or b""))
                continue
            entries = parse_entries(disk.text or "")
            shown: list[str] = []
            for index, entry in enumerate(entries):
                ids = finding_ids(entry)
                if ids:
                    item = BlockedEntry(target, index, entry, ids)
                    blocked.append(item)
                    log.warning(
                        "%s entry %d of %s kept out of the prompt: matched %s",
                        FILE_NAMES[target],
                        index + 1,
                        self.person,
                        ", ".join(ids),
                    )
                    shown.append(item.placeholder)
                else:
                    shown.append(entry)
            blocks[target] = render_block(target, shown, limit, chars=usage_chars(entries))
        return MemorySnapshot(blocks["memory"], blocks["user"], tuple(blocked))

    def check(self) -> tuple[list[BlockedEntry], list[DriftReport]]:
        """Entries the scanner blocks and files that drifted; read-only (no backups)."""
        snapshot = self.snapshot()
        drifts: list[DriftReport] = []
        for target in TARGETS:
            reason = self._drift_reason(target, self._read(target))
            if reason is not None:
                drifts.append(DriftReport(target, reason))
        return list(snapshot.blocked), drifts

    # -- the memory tool ----------------------------------------------------------------

    def call(self, args: Mapping[str, Any], turn: MemoryTurn) -> WriteOutcome:
        """Run one ``memory`` tool call (the JSON arguments the model sent)."""
        try:
            target, ops, batch = parse_request(args)
            if self.write_approval:
                return self._stage(target, ops, batch, turn)
            with self.documents.exclusive(FILE_NAMES[target]):
                applied = self._apply_locked(target, ops, batch)
                if applied.changed:
                    self._write(target, applied.entries, applied.version)
        except Refusal as refusal:
            return self._failure(turn, refusal)
        if not applied.changed:
            return self._saved(
                turn, target, applied.entries, "Entry already exists; nothing to add.", wrote=False
            )
        return self._saved(
            turn, target, applied.entries, success_message(ops, batch), changes=applied.changes
        )

    def _apply_locked(self, target: Target, ops: Sequence[Operation], batch: bool) -> Applied:
        """Re-read (guarded), apply to a copy, check the final budget. Caller holds the lock."""
        guarded = batch or any(op.action != "add" for op in ops)
        current, version = self._load_for_write(target, guarded=guarded)
        applied = apply_operations(current, ops, batch=batch, target=target)
        applied.version = version
        if not applied.changed:
            return applied
        if batch and current and not applied.entries:
            raise Refusal(
                f"This batch would remove every entry of {FILE_NAMES[target]}; nothing was "
                "applied. Keep at least one entry, or remove entries one call at a time if "
                "you really mean to empty it.",
                counted=True,
            )
        self._check_budget(target, current, applied.entries, ops, batch)
        return applied

    def _check_budget(
        self,
        target: Target,
        current: list[str],
        new: list[str],
        ops: Sequence[Operation],
        batch: bool,
    ) -> None:
        limit = self.limits.of(target)
        after = usage_chars(new)
        if after <= limit:
            return
        now = usage_chars(current)
        largest = max((len(op.content or "") for op in ops), default=0)
        what = (
            "this batch"
            if batch
            else ("this entry" if ops[0].action == "add" else "this replacement")
        )
        error = (
            f"{FILE_NAMES[target]} is at {now:,}/{limit:,} chars; {what} would bring it to "
            f"{after:,}, {after - limit:,} over the limit. Nothing was saved. Consolidate now: "
            "use replace to merge related entries into shorter ones and remove stale ones "
            "(see current_entries), then retry — all in this turn. A batch "
            "(operations=[...]) can free space and add in one call."
        )
        if largest > limit:
            error += f" Note: one new entry alone is {largest:,} chars, more than the whole file holds; shorten it."  # noqa: E501
        raise Refusal(
            error,
            counted=True,
            current_entries=display(current, target),
            usage=format_usage(now, limit),
        )

    # -- repair -------------------------------------------------------------------------

    def repair(self, target: Target) -> Done | Refused:
        """Rewrite a drifted file in canonical form, after backing it up."""
        name, where = FILE_NAMES[target], self.location(target)
        with self.documents.exclusive(name):
            disk = self._read(target)
            if disk.decode_error is not None:
                return Refused(
                    f"{where} is not valid UTF-8 ({disk.decode_error}); fix the bytes by hand."
                )
            if self._drift_reason(target, disk) is None:
                return Done(f"{name} is already clean.")
            entries = parse_entries(disk.text or "")
            limit = self.limits.of(target)
            too_long = [preview(e, 50) for e in entries if len(e) > limit]
            if too_long:
                return Refused(
                    f"{name} has entries longer than the whole file's limit "
                    f"({limit:,} chars): {too_long}. Split them by hand with lines holding "
                    "only '§', then run repair again."
                )
            backup = self._backup(target, disk.raw or b"")
            self._write(target, entries, disk.version)
        return Done(
            f"Rewrote {name} in canonical form ({len(entries)} entries); the old file is at {backup}.",  # noqa: E501
            usage=format_usage(usage_chars(entries), limit),
        )

    # -- internals ----------------------------------------------------------------------

    def _read(self, target: Target) -> _Disk:
        document = self.documents.read(FILE_NAMES[target])
        raw = document.raw
        if raw is None:
            return _Disk(None, None)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            error = f"invalid byte at offset {exc.start}"
            return _Disk(raw, None, error, document.version, document.foreign)
        return _Disk(raw, text, None, document.version, document.foreign)

    def _drift_reason(self, target: Target, disk: _Disk) -> str | None:
        if disk.raw is None:
            return None
        if disk.text is None:
            return f"is not valid UTF-8 ({disk.decode_error})"
        if disk.foreign:
            return "was changed in the database by something other than mnemo's memory store"
        entries = parse_entries(disk.text)
        if join_entries(entries) != disk.text:
            return (
                "no longer round-trips through the entry format (extra blank lines or "
                "spaces, empty or duplicate entries, or text around a '§' separator)"
            )
        limit = self.limits.of(target)
        longest = max((len(e) for e in entries), default=0)
        if longest > limit:
            return f"holds one entry of {longest:,} chars, longer than the whole file's limit ({limit:,})"  # noqa: E501
        return None

    def _load_for_write(self, target: Target, *, guarded: bool) -> tuple[list[str], Version]:
        disk = self._read(target)
        reason = self._drift_reason(target, disk)
        # An undecodable file is refused even for add: it can never be read as empty.
        if reason is not None and (guarded or disk.text is None):
            backup = self._backup(target, disk.raw or b"")
            log.warning(
                "refused to change %s: it %s (copy at %s)", self.location(target), reason, backup
            )
            name = FILE_NAMES[target]
            raise Refusal(
                f"Refusing to change {name}: it was edited outside the memory tool and {reason}. "
                f"Nothing was written; a copy of the file is at {backup}. Tell the user: an "
                f"operator must repair it — edit {name} so that entries are separated by lines "
                f"holding only '§', or run `mnemo memory repair --person {self.person} "
                f"--target {target}` — then retry.",
                counted=False,
                drift_backup=str(backup),
            )
        return parse_entries(disk.text or ""), disk.version

    def _backup(self, target: Target, raw: bytes) -> str:
        """Keep ``raw`` (on disk ``<FILE>.bak.<unix-ts>``), reusing an identical backup."""
        return self.documents.backup(FILE_NAMES[target], raw, now=self._clock())

    def _write(self, target: Target, entries: Sequence[str], expected: Version) -> None:
        """Write under the section, if nobody wrote since ``expected`` was read (only a
        writer outside every section can have: a hand edit racing this one)."""
        try:
            self.documents.write(
                FILE_NAMES[target], join_entries(entries).encode("utf-8"), expected=expected
            )
        except Conflict:
            raise Refusal(
                f"{FILE_NAMES[target]} changed while this write was being made; nothing was "
                "written. Retry.",
                counted=False,
            ) from None
        except DocumentsError as exc:
            raise Refusal(
                f"{FILE_NAMES[target]} could not be written: {exc}.", counted=False
            ) from None

    def _saved(
        self,
        turn: MemoryTurn,
        target: Target,
        entries: Sequence[str],
        message: str,
        *,
        wrote: bool = True,
        changes: Sequence[Change] = (),
    ) -> Saved:
        turn.failures = 0
        usage = format_usage(usage_chars(entries), self.limits.of(target))
        return Saved(target, message, usage, len(entries), tuple(changes), wrote)

    def _failure(self, turn: MemoryTurn, refusal: Refusal) -> Refused:
        exhausted = turn.failures >= MAX_FAILURES_PER_TURN
        if refusal.counted:
            turn.failures += 1
        if exhausted:
            return Refused(
                f"Memory writes have failed {turn.failures} times this turn "
                f"(last: {preview(refusal.error, 100)}). Stop retrying: leave memory "
                "unchanged for now and answer the user. It can be saved in a later turn.",
                final=True,
            )
        return refusal.refused
