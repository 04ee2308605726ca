"""The ``memory`` tool's arguments and its pure mutation: parse, validate, scan, apply.

``parse_request`` turns the JSON the model sent into ``Operation``s (or raises
``Refusal``); ``apply_operations`` applies them in order to a copy of the entries. Nothing
here touches the disk: ``store.py`` holds the lock, re-reads, checks the budget and writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from memory.curated.entries import (
    FILE_NAMES,
    TARGETS,
    AmbiguousMatch,
    ContentError,
    NoMatch,
    Target,
    clean_content,
    find_entry,
    preview,
)
from memory.curated.errors import MemoryStoreError
from memory.curated.outcomes import Change, Refused
from memory.scan import scan

__all__ = [
    "MAX_OPERATIONS",
    "Applied",
    "MemoryTurn",
    "Operation",
    "Refusal",
    "apply_operations",
    "blocked_placeholder",
    "display",
    "finding_ids",
    "parse_request",
    "success_message",
]

MAX_OPERATIONS = 50
Action = Literal["add", "replace", "remove"]


@dataclass(frozen=True, slots=True)
class Operation:
    action: Action
    content: str | None = None
    old_text: str | None = None
    pin: str | None = None  # exact entry text a staged replace/remove must still find

    def describe(self) -> str:
        if self.action == "add":
            return f"add: {preview(self.content or '')}"
        if self.action == "remove":
            return f"remove: {preview(self.pin or self.old_text or '')}"
        return f"replace: {preview(self.pin or self.old_text or '', 40)} → {preview(self.content or '', 60)}"  # noqa: E501


def op_dict(op: Operation) -> dict[str, str | None]:
    return {"action": op.action, "content": op.content, "old_text": op.old_text, "pin": op.pin}


def blocked_placeholder(file_name: str, ids: Sequence[str]) -> str:
    return (
        f"[BLOCKED: {file_name} entry matched {', '.join(ids)}; removed from the prompt"
        " — remove it with the memory tool]"
    )


@dataclass(slots=True)
class MemoryTurn:
    """Per-turn state of the memory tool: make one at the start of every turn.

    ``failures`` counts consolidation failures (the tool tells the model to stop after a
    few); ``staged`` collects the ids of the writes staged for approval in this turn, so
    the caller can show them to the person once the turn is over."""

    failures: int = 0
    staged: list[str] = field(default_factory=list)


class Refusal(MemoryStoreError):
    """A recoverable failure, turned into a ``Refused`` result by ``call``.

    ``counted``: it counts towards the turn's ``MAX_FAILURES_PER_TURN``; ``stale``: a staged
    write's pinned entry has changed or gone (the write is discarded)."""

    def __init__(
        self,
        error: str,
        *,
        counted: bool,
        stale: bool = False,
        current_entries: Sequence[str] | None = None,
        usage: str | None = None,
        drift_backup: str | None = None,
        matches: Sequence[str] | None = None,
        blocked: Sequence[str] | None = None,
    ) -> None:
        super().__init__(error)
        self.error = error
        self.counted = counted
        self.stale = stale
        self.refused = Refused.of(
            error,
            current_entries=current_entries,
            usage=usage,
            drift_backup=drift_backup,
            matches=matches,
            blocked=blocked,
        )


@dataclass(slots=True)
class Applied:
    entries: list[str]
    changed: bool = False
    ops: list[Operation] = field(default_factory=list)  # with pins filled in
    changes: list[Change] = field(default_factory=list)  # what replaces and removes changed
    version: object = None  # the stored file's version the entries were read at (store.py)


def finding_ids(entry: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.id for f in scan(entry)))


def parse_request(args: Mapping[str, Any]) -> tuple[Target, list[Operation], bool]:
    if not isinstance(args, Mapping):
        raise Refusal("The memory tool takes a JSON object of arguments.", counted=False)
    known = {"action", "target", "content", "old_text", "operations"}
    unknown = sorted(set(args) - known)
    if unknown:
        raise Refusal(
            f"Unknown argument(s) {unknown}; the memory tool takes {sorted(known)}.", counted=False
        )
    target = args.get("target", "memory")
    if target not in TARGETS:
        raise Refusal(
            f"target must be 'memory' (your notes) or 'user' (the user profile), not {target!r}.",
            counted=False,
        )
    operations = args.get("operations")
    if isinstance(operations, str):  # some models send the list JSON-encoded
        try:
            operations = json.loads(operations)
        except ValueError:
            raise Refusal(
                "operations must be a list of {action, content?, old_text?} objects.", counted=False
            ) from None
    if operations is not None:
        if args.get("action") is not None:
            raise Refusal("Give either action or operations, not both.", counted=False)
        if not isinstance(operations, list) or not operations:
            raise Refusal(
                "operations must be a non-empty list of {action, content?, old_text?} objects.",
                counted=False,
            )
        if len(operations) > MAX_OPERATIONS:
            raise Refusal(f"At most {MAX_OPERATIONS} operations per batch.", counted=False)
        ops = []
        for index, raw in enumerate(operations, start=1):
            if not isinstance(raw, Mapping):
                raise Refusal(
                    f"Operation {index} is not an object; nothing was applied.", counted=False
                )
            extra = set(raw) - {"action", "content", "old_text"}
            if extra:
                raise Refusal(
                    f"Operation {index}: unknown key(s) {sorted(extra)}; nothing was applied.",
                    counted=False,
                )
            ops.append(
                _operation(raw, where=f"Operation {index}: ", suffix=" Nothing was applied.")
            )
        return cast(Target, target), ops, True
    return cast(Target, target), [_operation(args, where="", suffix="")], False


def _operation(raw: Mapping[str, Any], *, where: str, suffix: str) -> Operation:
    action = raw.get("action")
    if action not in ("add", "replace", "remove"):
        raise Refusal(
            f"{where}action must be 'add', 'replace' or 'remove', not {action!r}.{suffix}",
            counted=False,
        )
    content = raw.get("content")
    old_text = raw.get("old_text")
    for name, value in (("content", content), ("old_text", old_text)):
        if value is not None and not isinstance(value, str):
            raise Refusal(f"{where}{name} must be a string.{suffix}", counted=False)
    if action in ("replace", "remove") and not (old_text or "").strip():
        raise Refusal(
            f"{where}{action} needs old_text: a short unique part of the entry to {action}.{suffix}",  # noqa: E501
            counted=False,
        )
    if action in ("add", "replace"):
        if content is None or not content.strip():
            hint = " Use remove to delete an entry." if action == "replace" else ""
            raise Refusal(f"{where}{action} needs non-empty content.{hint}{suffix}", counted=False)
        try:
            content = clean_content(content)
        except ContentError as exc:
            raise Refusal(f"{where}{exc}.{suffix}", counted=False) from None
        findings = scan(content)
        if findings:
            ids = ", ".join(dict.fromkeys(f.id for f in findings))
            details = "; ".join(f.detail for f in findings)
            raise Refusal(
                f"{where}Refused: the content matched the memory scanner ({ids}: {details}). "
                f"Memory is replayed into every future system prompt, so it must not hold "
                f"instructions, secrets or hidden characters. Save the plain fact instead.{suffix}",
                counted=False,
                blocked=list(dict.fromkeys(f.id for f in findings)),
            )
    return Operation(action, content, old_text.strip() if old_text else None)


def locate(entries: Sequence[str], op: Operation, target: Target) -> int:
    """The entry an operation designates: its pin exactly, else ``old_text``.

    ``old_text`` may also name a BLOCKED placeholder the model was shown.
    """
    if op.pin is not None:
        try:
            return entries.index(op.pin)
        except ValueError:
            raise Refusal(
                f"The entry this write was pinned to has changed or gone ({preview(op.pin, 60)!r}); "  # noqa: E501
                "the staged write no longer applies and was discarded.",
                counted=False,
                stale=True,
            ) from None
    assert op.old_text is not None
    try:
        return find_entry(entries, op.old_text)
    except NoMatch:
        shown = display(entries, target)
        blocked = [i for i, text in enumerate(shown) if text != entries[i]]
        hits = [i for i in blocked if op.old_text in shown[i]]
        if hits:
            return hits[0]
        raise


def apply_operations(
    current: list[str], ops: Sequence[Operation], *, batch: bool, target: Target
) -> Applied:
    """Apply ``ops`` in order to a copy of ``current``; raise ``Refusal`` on the first failure."""
    working = list(current)
    applied = Applied(working)
    for number, op in enumerate(ops, start=1):
        where = f"Operation {number} ({op.action}): " if batch else ""
        suffix = " Nothing was applied (a batch is all or nothing)." if batch else ""
        if op.action == "add":
            assert op.content is not None
            applied.ops.append(op)
            if op.content not in working:
                working.append(op.content)
                applied.changed = True
            continue
        try:
            index = locate(working, op, target)
        except NoMatch:
            raise Refusal(
                f"{where}{'n' if where else 'N'}o entry matches "
                f"{preview(op.old_text or '', 60)!r}.{suffix} "
                "Check current_entries and retry with text copied from the entry you mean.",
                counted=True,
                current_entries=display(current, target),
            ) from None
        except AmbiguousMatch as exc:
            raise Refusal(f"{where}{exc}.{suffix}", counted=batch, matches=exc.matches) from None
        old = working[index]
        applied.ops.append(Operation(op.action, op.content, op.old_text, pin=old))
        if op.action == "remove":
            del working[index]
            applied.changes.append(Change(old))
        else:
            assert op.content is not None
            if op.content in working and working.index(op.content) != index:
                del working[index]  # the new text already exists: the two merge
            else:
                working[index] = op.content
            applied.changes.append(Change(old, op.content))
        applied.changed = True
    return applied


def display(entries: Sequence[str], target: Target) -> list[str]:
    """Entries as the model may see them: blocked ones stay replaced by placeholders."""
    name = FILE_NAMES[target]
    return [blocked_placeholder(name, ids) if (ids := finding_ids(e)) else e for e in entries]


def success_message(ops: Sequence[Operation], batch: bool) -> str:
    if batch:
        return f"Applied {len(ops)} operations."
    return {"add": "Entry added.", "replace": "Entry replaced.", "remove": "Entry removed."}[
        ops[0].action
    ]
