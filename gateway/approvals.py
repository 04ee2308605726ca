"""Staged memory writes as people see them (``memory.write_approval``): what a change says,
the message that asks for a decision, and what a decision answers, typed or pressed.

**A change** is one line per operation, its entry text quoted «like this» through
``label`` (one plain line: memory content came from a conversation) and cut at ``QUOTE``
characters, saying so: ``«…» (shortened from 412 characters)``::

    add to USER.md: «prefers tea»
    replace in MEMORY.md: «staging is staging.local» with «staging is staging2.local»
    remove from MEMORY.md: «old VPN is vpn1»

A batch (several operations applied all or none) shows its first ``OPS_SHOWN``
operations and says how many more there are.

**A card** is the message that asks: a header, then one paragraph per staged write (its
lines, then the command to type, ``type /memory approve ID or /memory reject ID``), and
one pair of buttons per write (``✓ Approve`` / ``✗ Reject``, numbered when the card holds
several) whose data is that same command. ``cards`` puts at most ``PER_CARD`` writes on a
card (Discord shows five rows of buttons) and keeps a card under ``CARD_CHARS`` (one
Discord message), so a card is never split and its buttons always sit under it.

**A decision** (``answer``) says what became of the write: ``✓ Saved to USER.md: «prefers
tea»``, ``✗ Not saved — add to USER.md: «…»``, the same marked "(decided earlier)" when it
had been decided already. Typed, that is the reply. Pressed, it *replaces the write's
paragraph* in the pressed message, whose other writes keep their lines and buttons (the
message as the platform showed it at the press: ``Pressed``); nothing else is said. A
press that decides nothing is refused without touching the message: an id that is
neither waiting nor decided in the presser's own store (someone else's card, or an old
one), or an approval that cannot apply yet (the file is full), which stays waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adapters.messages import Button, InboundMessage, Pressed, label
from memory import FILE_NAMES, PendingWrite
from memory.curated import Decision, Operation

__all__ = [
    "CARD_CHARS",
    "OPS_SHOWN",
    "PER_CARD",
    "QUOTE",
    "Answer",
    "Card",
    "Decider",
    "answer",
    "cards",
    "decider",
    "describe",
    "listing",
    "outcome",
    "quote",
]

QUOTE = 120  # characters of an entry shown in a change line
OPS_SHOWN = 3  # operations of a batch shown
PER_CARD = 5  # staged writes per card: a pair of buttons each, five rows on Discord
CARD_CHARS = 1800  # under Discord's 2,000 with room for a typed fallback line

Decider = Callable[[str], str]
"""How a decision on one store's writes is typed: ``"approve"`` -> ``/memory approve``
(one's own) or ``/admin approve PERSON`` (an admin deciding someone else's, or a chat's)."""


def decider(person: str, *, mine: bool) -> Decider:
    """How a decision on ``person``'s staged writes is typed (and put on a button)."""
    return (lambda word: f"/memory {word}") if mine else (lambda word: f"/admin {word} {person}")


@dataclass(frozen=True, slots=True)
class Card:
    """A message's plain text and its buttons."""

    text: str
    buttons: tuple[Button, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """What a decision says: ``text`` to send (may be ""), and for a press the ``edit``
    of the pressed message (None: leave it as it is)."""

    text: str
    edit: Card | None = None


# -- what a change says --------------------------------------------------------------------


def quote(text: str) -> str:
    """«text» on one plain line; a long one is cut at ``QUOTE`` characters, saying so."""
    whole = label(text, max(len(text), 1))
    if len(whole) <= QUOTE:
        return f"«{whole}»"
    return f"«{label(whole, QUOTE)}» (shortened from {len(whole):,} characters)"


def describe(op: Operation, file: str) -> str:
    """``add to USER.md: «prefers tea»``; ``replace in F: «old» with «new»``; ``remove from
    F: «old»`` (the entry a replace or remove was pinned to when it was staged)."""
    old = quote(op.pin or op.old_text or "")
    if op.action == "add":
        return f"add to {file}: {quote(op.content or '')}"
    if op.action == "remove":
        return f"remove from {file}: {old}"
    return f"replace in {file}: {old} with {quote(op.content or '')}"


def _lines(write: PendingWrite) -> list[str]:
    file = FILE_NAMES[write.target]
    ops = write.operations
    if len(ops) == 1:
        return [describe(ops[0], file)]
    lines = [f"{len(ops)} changes to {file}, all or none:"]
    lines += [f"- {describe(op, file)}" for op in ops[:OPS_SHOWN]]
    if len(ops) > OPS_SHOWN:
        lines.append(f"- … and {len(ops) - OPS_SHOWN} more, not shown here")
    return lines


def _typed(pending_id: str, decide: Decider) -> str:
    return f"type {decide('approve')} {pending_id} or {decide('reject')} {pending_id}"


# -- cards ---------------------------------------------------------------------------------


def cards(writes: Sequence[PendingWrite], decide: Decider, *, header: str) -> list[Card]:
    """The cards asking for a decision on ``writes``, in order (none for none)."""
    numbered = len(writes) > 1
    made: list[Card] = []
    paragraphs: list[str] = []
    buttons: list[Button] = []
    for number, write in enumerate(writes, start=1):
        lines = _lines(write)
        if numbered:
            lines[0] = f"{number}. {lines[0]}"
        paragraph = "\n".join([*lines, _typed(write.id, decide)])
        text = "\n\n".join([header, *paragraphs, paragraph])
        if paragraphs and (len(paragraphs) >= PER_CARD or len(text) > CARD_CHARS):
            made.append(Card("\n\n".join([header, *paragraphs]), tuple(buttons)))
            paragraphs, buttons = [], []
        paragraphs.append(paragraph)
        tag = f" {number}" if numbered else ""
        buttons += [
            (f"✓ Approve{tag}", f"{decide('approve')} {write.id}"),
            (f"✗ Reject{tag}", f"{decide('reject')} {write.id}"),
        ]
    if paragraphs:
        made.append(Card("\n\n".join([header, *paragraphs]), tuple(buttons)))
    return made


def listing(writes: Sequence[PendingWrite], decide: Decider, *, header: str) -> Card:
    """One message listing ``writes`` (``/memory pending``): the first card, and how many
    more wait when they do not fit on it."""
    if not writes:
        return Card("No memory writes are waiting for approval.")
    first = cards(writes, decide, header=header)[0]
    shown = len(first.buttons) // 2
    if shown == len(writes):
        return first
    more = f"{len(writes) - shown} more wait: decide these, then {decide('pending')} again."
    return Card(f"{first.text}\n\n{more}", first.buttons)


# -- decisions -----------------------------------------------------------------------------


def outcome(decision: Decision) -> str:
    """What became of a decided write (``decision.verdict`` set)."""
    write = decision.write
    assert write is not None and decision.verdict is not None
    file = FILE_NAMES[write.target]
    ops = write.operations
    later = " (decided earlier)" if decision.earlier else ""
    if decision.verdict == "approved" and len(ops) == 1:
        op = ops[0]
        old = quote(op.pin or op.old_text or "")
        if op.action == "remove":
            return f"✓ Removed from {file}: {old}{later}"
        text = f"✓ Saved to {file}: {quote(op.content or '')}"
        return text + (f", instead of {old}" if op.action == "replace" else "") + later
    head = {
        "approved": f"✓ Saved to {file}{later}:",
        "rejected": f"✗ Not saved{later} —",
        "discarded": f"✗ Not saved{later}: the entry it changes had changed or gone —",
    }[decision.verdict]
    lines = _lines(write)
    if decision.verdict == "approved":  # a batch: its lines say what was saved
        return "\n".join([head, *lines[1:]])
    return "\n".join([f"{head} {lines[0]}", *lines[1:]])


def _not_yet(decision: Decision) -> str:
    """Why an approval did not apply; the write stays waiting."""
    assert decision.write is not None
    file = FILE_NAMES[decision.write.target]
    if decision.problem == "full":
        return (
            f"Not saved yet: {file} has no room for it ({decision.usage}). Make room with"
            " /forget, then approve it again; it stays waiting."
        )
    if decision.problem == "drift":
        return (
            f"Not saved yet: {file} was edited by hand and must be repaired first (the"
            " operator: mnemo memory repair). It stays waiting."
        )
    return f"Not saved yet: {label(decision.error or 'it could not be applied', 300)}"


def answer(decision: Decision, decide: Decider, message: InboundMessage) -> Answer:
    """What to say about ``decision``, made by ``message`` (typed, or a press)."""
    if decision.write is None:
        shown = label(decision.id, 20)
        return Answer(
            f"No memory write {shown!r} is waiting for approval here."
            f" {decide('pending')} lists the ones that are."
        )
    if decision.verdict is None:
        return Answer(_not_yet(decision))
    text = outcome(decision)
    if not (message.is_callback and message.reply_to_message_id):
        return Answer(text)
    return Answer("", _pressed(message.pressed, decision.id, decide, text))


def _pressed(pressed: Pressed | None, pending_id: str, decide: Decider, text: str) -> Card:
    """The pressed message with the write's paragraph replaced by ``text`` and its buttons
    gone; a message that does not show the write (an older notice) gets ``text`` below."""
    own = {f"{decide('approve')} {pending_id}", f"{decide('reject')} {pending_id}"}
    shown = pressed.text if pressed is not None else ""
    left = tuple(b for b in (pressed.buttons if pressed is not None else ()) if b[1] not in own)
    paragraphs = shown.split("\n\n") if shown else []
    typed = _typed(pending_id, decide)
    hits = [i for i, p in enumerate(paragraphs) if typed in p.split("\n")]
    if hits:
        for index in hits:
            paragraphs[index] = text
        return Card("\n\n".join(paragraphs), left)
    if shown and len(shown) + len(text) < CARD_CHARS:
        return Card(f"{shown}\n\n{text}", left)
    return Card(text, left)
