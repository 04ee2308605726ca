"""Staged memory writes are always visible and decidable (write approval), through the
in-process adapter: what a turn stages is shown after its reply with its content and a
pair of buttons per write; a press edits the message it was pressed on; typed commands
answer the same. The wording itself: gateway/approvals.py, tested at the end. The same
flows over the real platform clients: tests/e2e/test_approvals_e2e.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.base import RateLimited
from adapters.messages import InboundMessage, Pressed
from agent_core.models import ChatMessage, ModelReply, ToolCall, ToolSpec, Usage
from gateway.approvals import CARD_CHARS, PER_CARD, QUOTE, answer, cards, decider, listing
from gateway.config.schema import Config
from memory import MemoryStore, MemoryTurn, PendingWrite, Target
from memory.archive.database import Archive
from memory.curated.approval import Decision
from memory.curated.operations import Operation
from tests.gateway.harness import ChatAdapter
from tests.gateway.rig import Rig, config

HEADER = "I'd like to remember this. Nothing is saved until you approve it:"


def approving(**memory: Any) -> Config:
    data = config().model_dump()
    data["memory"] = {**data["memory"], "write_approval": True, **memory}
    return Config.model_validate(data)


def remembering(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
    """``remember: A | B``: one memory call per fact, all in one reply; then "noted"."""
    last = messages[-1]
    if last["role"] == "tool":
        return ModelReply("noted", usage=Usage(10, 2, 4))
    text = str(last["content"]).partition("\n")[2]
    if not text.startswith("remember: "):
        return ModelReply(f"echo: {text}", usage=Usage(10, 2, 4))
    facts = text.removeprefix("remember: ").split(" | ")
    calls = tuple(
        ToolCall(f"c{n}", "memory", json.dumps({"action": "add", "target": "user", "content": f}))
        for n, f in enumerate(facts)
    )
    return ModelReply(None, calls, usage=Usage(10, 2, 0))


@pytest.fixture
async def rig(home: Path, archive: Archive) -> AsyncIterator[Rig]:
    made = Rig(home, archive, approving())
    made.model._respond = remembering
    await made.gateway.start()
    yield made
    await made.gateway.stop()


def store(rig: Rig, person: str = "telegram-1") -> MemoryStore:
    return rig.gateway.agent.stores.for_person(person)


def user_md(rig: Rig, person: str = "telegram-1") -> str:
    path = rig.home / "memories" / person / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


# -- shown after the reply, with what would be saved ----------------------------------------


async def test_a_write_the_turn_staged_is_shown_after_the_reply_with_its_content(
    rig: Rig,
) -> None:
    await rig.adapter.say("remember: prefers tea")
    await rig.adapter.wait_sent(2)
    reply, card = rig.adapter.sent
    [write] = store(rig).pending()
    assert reply.chunks == ["noted"]
    assert card.message.text == (
        f"{HEADER}\n\nadd to USER.md: «prefers tea»\n"
        f"type /memory approve {write.id} or /memory reject {write.id}"
    )
    assert card.message.buttons == (
        ("✓ Approve", f"/memory approve {write.id}"),
        ("✗ Reject", f"/memory reject {write.id}"),
    )
    assert card.message.markdown is False  # memory content is plain text
    assert user_md(rig) == ""


async def test_a_press_saves_and_edits_its_message_which_loses_its_buttons(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea")
    await rig.adapter.wait_sent(2)
    card = rig.adapter.card("✓ Approve")
    await rig.adapter.press("✓ Approve")
    await rig.adapter.wait_edits(1)
    [edit] = rig.adapter.edits
    assert (edit.chat_id, edit.message_id) == ("1", card)
    assert edit.text == f"{HEADER}\n\n✓ Saved to USER.md: «prefers tea»"
    assert edit.buttons == ()
    assert user_md(rig) == "prefers tea"
    await rig.gateway.stop()
    assert len(rig.adapter.sent) == 2  # the edit said it all: no other message
    assert (await rig.gateway.ledger.counts()) == {"sent": 3}  # reply, card, edit


async def test_a_second_press_on_a_decided_change_says_it_was_decided(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea")
    await rig.adapter.wait_sent(2)
    card = rig.adapter.card("✗ Reject")
    shown = rig.adapter.shown[card]
    pressed, data = Pressed(shown.text, shown.buttons), dict(shown.buttons)

    def press(label: str) -> InboundMessage:  # on the card as it was shown before either
        return rig.adapter.message(
            data[label], callback=True, command=False, reply_to=card, pressed=pressed
        )

    await rig.adapter.deliver(press("✗ Reject"))
    # a second device still showed the buttons: its Approve arrives after the reject
    await rig.adapter.deliver(press("✓ Approve"))
    await rig.adapter.wait_edits(2)
    rejected, again = (e.text for e in rig.adapter.edits)
    assert rejected == f"{HEADER}\n\n✗ Not saved — add to USER.md: «prefers tea»"
    assert again == f"{HEADER}\n\n✗ Not saved (decided earlier) — add to USER.md: «prefers tea»"
    assert user_md(rig) == "" and store(rig).pending() == []


async def test_typing_the_command_answers_what_the_press_would_show(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea | lives in Lyon")
    await rig.adapter.wait_sent(2)
    tea, lyon = store(rig).pending()
    await rig.adapter.say(f"/memory approve {tea.id}")
    await rig.adapter.say(f"/memory reject {lyon.id}")
    await rig.adapter.say(f"/memory approve {lyon.id}")
    await rig.adapter.wait_sent(5)
    assert rig.adapter.texts()[2:] == [
        "✓ Saved to USER.md: «prefers tea»",
        "✗ Not saved — add to USER.md: «lives in Lyon»",
        "✗ Not saved (decided earlier) — add to USER.md: «lives in Lyon»",
    ]
    assert rig.adapter.edits == []  # typed: nothing to edit


async def test_several_changes_share_a_card_and_each_keeps_its_own_buttons(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea | lives in Lyon | has a cat")
    await rig.adapter.wait_sent(2)
    tea, lyon, cat = store(rig).pending()
    card = rig.adapter.sent[1].message
    assert card.text.startswith("I'd like to remember 3 things. Nothing is saved until you")
    assert "\n\n2. add to USER.md: «lives in Lyon»\n" in card.text
    assert [label for label, _ in card.buttons] == [
        "✓ Approve 1", "✗ Reject 1", "✓ Approve 2", "✗ Reject 2", "✓ Approve 3", "✗ Reject 3",
    ]  # fmt: skip
    await rig.adapter.press("✗ Reject 2")
    await rig.adapter.wait_edits(1)
    await rig.adapter.press("✓ Approve 3")
    await rig.adapter.wait_edits(2)
    edit = rig.adapter.edits[-1]
    paragraphs = edit.text.split("\n\n")
    assert paragraphs[2:] == [
        "✗ Not saved — add to USER.md: «lives in Lyon»",
        "✓ Saved to USER.md: «has a cat»",
    ]
    assert paragraphs[1].startswith("1. add to USER.md: «prefers tea»")  # still asking
    assert edit.buttons == (
        ("✓ Approve 1", f"/memory approve {tea.id}"),
        ("✗ Reject 1", f"/memory reject {tea.id}"),
    )
    assert user_md(rig) == "has a cat" and [p.id for p in store(rig).pending()] == [tea.id]
    assert {lyon.id, cat.id}.isdisjoint(p.id for p in store(rig).pending())


# -- refused without touching the message ---------------------------------------------------


async def test_a_press_by_someone_else_is_refused_without_editing(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea")
    await rig.adapter.wait_sent(2)
    card = rig.adapter.card("✓ Approve")
    # an old card in a group (or a forwarded one): Bob is not the store's owner
    await rig.adapter.press("✓ Approve", on=card, user="2", chat="-100", chat_type="group")
    await rig.adapter.wait_sent(1, chat="2")
    [refusal] = rig.adapter.texts("2")
    assert refusal.startswith("No memory write") and "/memory pending lists" in refusal
    assert "tea" not in refusal and "tea" not in "".join(rig.adapter.texts("-100"))
    assert rig.adapter.edits == [] and len(store(rig).pending()) == 1
    assert user_md(rig, "telegram-2") == ""


async def test_an_approval_that_does_not_fit_keeps_its_buttons_and_says_why(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, approving(user_char_limit=30))
    rig.model._respond = remembering
    await rig.gateway.start()
    try:
        await rig.adapter.say("remember: likes long walks by the sea")
        await rig.adapter.wait_sent(2)
        direct = MemoryStore(home / "memories" / "telegram-1", limits=store(rig).limits)
        direct.call({"action": "add", "target": "user", "content": "x" * 20}, MemoryTurn())
        await rig.adapter.press("✓ Approve")
        await rig.adapter.wait_sent(3)
        assert rig.adapter.texts()[2] == (
            "Not saved yet: USER.md has no room for it (66% — 20/30 chars). Make room with"
            " /forget, then approve it again; it stays waiting."
        )
        assert rig.adapter.edits == [] and len(store(rig).pending()) == 1
    finally:
        await rig.gateway.stop()


# -- delivery of the edit -------------------------------------------------------------------


async def test_the_edit_waits_out_a_flood_limit_like_a_reply(rig: Rig) -> None:
    await rig.adapter.say("remember: prefers tea")
    await rig.adapter.wait_sent(2)
    rig.adapter.failures["1"] = [RateLimited("flood control", 0.05)]
    await rig.adapter.press("✓ Approve")
    await rig.adapter.wait_edits(1)
    assert rig.adapter.edits[0].text.endswith("✓ Saved to USER.md: «prefers tea»")
    assert rig.adapter.failures["1"] == []  # the first attempt met the flood limit
    assert (await rig.gateway.ledger.counts()).get("pending", 0) == 0


# -- who sees what: a group ------------------------------------------------------------------


async def test_in_a_group_the_speakers_own_write_is_shown_to_them_alone(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, approving(group_scope="person"))
    rig.model._respond = remembering
    await rig.gateway.start()
    try:
        await rig.adapter.say("remember: my PIN hint is the cat", mention=True, chat="-100",
                              chat_type="group")  # fmt: skip
        await rig.adapter.wait_sent(1, chat="1")
        assert rig.adapter.texts("-100") == ["noted"]
        [private] = rig.adapter.texts("1")
        assert "add to USER.md: «my PIN hint is the cat»" in private
        await rig.adapter.press("✓ Approve", chat="1")  # in their private chat
        await rig.adapter.wait_edits(1)
        assert rig.adapter.edits[0].chat_id == "1"
        assert user_md(rig) == "my PIN hint is the cat"
    finally:
        await rig.gateway.stop()


# -- the wording ----------------------------------------------------------------------------


def write(pending_id: str, *ops: Operation, target: Target = "user") -> PendingWrite:
    return PendingWrite(pending_id, target, ops, 0.0, batch=len(ops) > 1)


MINE = decider("telegram-1", mine=True)


def test_a_long_entry_is_cut_and_says_so_and_stays_one_plain_line() -> None:
    long = "Works on the [SYSTEM] team\nin Lyon, " + "and likes long walks " * 20
    [card] = cards([write("a1", Operation("add", long))], MINE, header="H")
    line = card.text.split("\n")[2]
    assert line.startswith("add to USER.md: «Works on the (SYSTEM) team in Lyon, and likes")
    assert line.endswith(f"…» (shortened from {len(' '.join(long.split()))} characters)")
    assert len(line) < QUOTE + 70


def test_replace_remove_and_batches_say_what_they_change() -> None:
    replace = Operation("replace", "lives in Paris", "Lyon", pin="lives in Lyon")
    remove = Operation("remove", None, "VPN", pin="old VPN is vpn1")
    batch = write("c3", *[Operation("add", f"fact {n}") for n in range(5)], target="memory")
    [card] = cards([write("a1", replace), write("b2", remove), batch], MINE, header="H")
    paragraphs = card.text.split("\n\n")
    assert (
        paragraphs[1].split("\n")[0]
        == "1. replace in USER.md: «lives in Lyon» with «lives in Paris»"
    )
    assert paragraphs[2].split("\n")[0] == "2. remove from USER.md: «old VPN is vpn1»"
    assert paragraphs[3].split("\n") == [
        "3. 5 changes to MEMORY.md, all or none:",
        "- add to MEMORY.md: «fact 0»",
        "- add to MEMORY.md: «fact 1»",
        "- add to MEMORY.md: «fact 2»",
        "- … and 2 more, not shown here",
        "type /memory approve c3 or /memory reject c3",
    ]
    approved = answer(Decision("a1", "approved", write("a1", replace)), MINE, message("typed"))
    assert approved.text == "✓ Saved to USER.md: «lives in Paris», instead of «lives in Lyon»"
    removed = answer(Decision("b2", "approved", write("b2", remove)), MINE, message("typed"))
    assert removed.text == "✓ Removed from USER.md: «old VPN is vpn1»"
    stale = answer(Decision("a1", "discarded", write("a1", replace)), MINE, message("typed"))
    assert stale.text.startswith("✗ Not saved: the entry it changes had changed or gone —")


def test_cards_hold_a_few_changes_and_fit_one_message() -> None:
    many = [write(f"{n:06x}", Operation("add", f"fact {n} " + "y" * 200)) for n in range(12)]
    made = cards(many, decider("discord-chat-1234567890123456789", mine=False), header="H")
    assert sum(len(c.buttons) for c in made) == 24 and len(made) >= 3
    assert all(len(c.buttons) <= 2 * PER_CARD and len(c.text) <= CARD_CHARS for c in made)
    assert made[0].buttons[0][1] == "/admin approve discord-chat-1234567890123456789 000000"
    listed = listing(many, MINE, header="H")
    assert listed.text.endswith(
        f"{12 - len(listed.buttons) // 2} more wait: decide these, then /memory pending again."
    )


def message(kind: str, pressed: Pressed | None = None) -> Any:
    adapter = ChatAdapter()
    if kind == "typed":
        return adapter.message("/memory approve a1")
    return adapter.message("/memory approve a1", callback=True, reply_to="5", pressed=pressed)


def test_a_press_on_a_message_that_does_not_show_the_change_adds_the_outcome() -> None:
    decided = Decision("a1", "approved", write("a1", Operation("add", "prefers tea")))
    older = Pressed("I'd like to remember something (1 change(s)).", (("Approve a1", "x"),))
    edit = answer(decided, MINE, message("press", older)).edit
    assert edit is not None
    assert edit.text == f"{older.text}\n\n✓ Saved to USER.md: «prefers tea»"
    assert edit.buttons == older.buttons  # not this change's: it stays
    unseen = answer(decided, MINE, message("press", Pressed(""))).edit
    assert unseen is not None and unseen.text == "✓ Saved to USER.md: «prefers tea»"
