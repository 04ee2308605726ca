"""Write approval over the wire, on every platform: a staged write is shown after the reply
with its content and real buttons (a Telegram inline keyboard, Discord components); a
press is acknowledged at once and edits its message, which loses that write's buttons.
(The rules in detail, through the in-process adapter: tests/gateway/test_approvals.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.stack import ADMIN, ALICE, Driver, running
from tests.fakes.openai_server import FakeOpenAI

QUIET_S = 0.4
APPROVAL = {"write_approval": True}
HEADER = "I'd like to remember this. Nothing is saved until you approve it:"


def user_md(home: Path, person: str) -> str:
    path = home / "memories" / person / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_a_staged_write_is_shown_and_a_press_saves_it_and_edits_the_message(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai, memory=APPROVAL) as stack:
        await driver.dm(ALICE, "remember: prefers tea")
        reply, card = await driver.replies(chat, 2)
        [write] = stack.gateway.agent.stores.for_person(f"{driver.platform}-{ALICE}").pending()
        assert reply == "noted"
        assert card == (
            f"{HEADER}\n\nadd to USER.md: «prefers tea»\n"
            f"type /memory approve {write.id} or /memory reject {write.id}"
        )  # Discord too: the text already says what to type, so no fallback lines
        handle = await driver.press(ALICE, "✓ Approve")
        text, buttons = await driver.shown(ALICE, handle, edits=1)
        assert text == f"{HEADER}\n\n✓ Saved to USER.md: «prefers tea»" and buttons == []
        assert driver.presses_acknowledged() == 1
        await asyncio.sleep(QUIET_S)
    assert driver.all_replies(chat) == [reply, card]  # the edit said it all
    assert user_md(home, f"{driver.platform}-{ALICE}") == "prefers tea"


async def test_several_writes_one_card_each_decided_on_its_own_then_typed(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai, memory=APPROVAL):
        await driver.dm(ALICE, "remember: prefers tea | lives in Lyon")
        _reply, card = await driver.replies(chat, 2)
        assert "\n\n1. add to USER.md: «prefers tea»\n" in card
        assert "\n\n2. add to USER.md: «lives in Lyon»\n" in card
        handle = await driver.press(ALICE, "✗ Reject 2")
        text, buttons = await driver.shown(ALICE, handle, edits=1)
        assert text.endswith("\n\n✗ Not saved — add to USER.md: «lives in Lyon»")
        assert "1. add to USER.md: «prefers tea»" in text
        assert buttons == ["✓ Approve 1", "✗ Reject 1"]
        tea = card.split("type /memory approve ", 1)[1].split(" ", 1)[0]
        await driver.command(ALICE, f"/memory approve {tea}")
        typed = (await driver.replies(chat, 3))[2]
        assert typed == "✓ Saved to USER.md: «prefers tea»"  # what a press would have shown
    assert user_md(home, f"{driver.platform}-{ALICE}") == "prefers tea"


async def test_an_admin_decides_a_chats_write_from_a_listing_only_they_see(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat_store = f"{driver.platform}-chat-{driver.group_chat}"
    async with running(home, driver, openai, memory=APPROVAL):
        await driver.dm(ADMIN, "hello")  # the admin has a private chat with the bot
        await driver.replies(driver.dm_chat(ADMIN), 1)
        await driver.group(ALICE, "remember: the office wifi is mnemo-5g", mention=True)
        _reply, notice = await driver.replies(driver.group_chat, 2)
        assert "about this chat" in notice and "wifi" not in notice
        await driver.command(ADMIN, "/memory pending", group=True)  # answered privately
        listing = (await driver.private_texts(ADMIN, 2))[-1]
        assert listing.startswith(f"Waiting for approval in the memory of {chat_store}:")
        assert "add to USER.md: «the office wifi is mnemo-5g»" in listing
        handle = await driver.press(ADMIN, "✓ Approve")
        text, buttons = await driver.shown(ADMIN, handle, edits=1)
        assert text.endswith("\n\n✓ Saved to USER.md: «the office wifi is mnemo-5g»")
        assert buttons == []
    assert "mnemo-5g" in user_md(home, chat_store)
    assert all("wifi" not in text for text in driver.public_texts()[1:])
