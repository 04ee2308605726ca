"""Pairing over the wire, on every platform: a stranger is told their code once (then a
reminder), the admin is notified with buttons and a press admits them, and a block holds
across a restart. (The same rules in detail, through the in-process adapter:
tests/gateway/pairing/test_gateway.py.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.e2e.stack import ADMIN, ALICE, BOB, STRANGER, Driver, running
from tests.fakes.openai_server import FakeOpenAI

QUIET_S = 0.4


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def test_a_strangers_repeated_dms_get_one_code_and_later_one_reminder(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    clock = Clock()
    stranger = driver.dm_chat(STRANGER)
    async with running(home, driver, openai, clock=clock):
        for n in range(8):
            await driver.dm(STRANGER, f"hello {n}?")
        [offer] = await driver.replies(stranger, 1)
        await asyncio.sleep(QUIET_S)
        assert len(driver.all_replies(stranger)) == 1
        code = offer.split("\n\n")[1].strip()
        clock.now += 10 * 60 + 30
        await driver.dm(STRANGER, "anyone?")
        await driver.dm(STRANGER, "hello??")
        replies = await driver.replies(stranger, 2)
        await asyncio.sleep(QUIET_S)
    assert replies[1] == f"Your pairing code {code} is still waiting for an admin, 49 minutes left."
    assert len(driver.all_replies(stranger)) == 2
    assert not openai.requests


async def test_the_admin_is_notified_with_buttons_and_approve_admits(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    stranger = driver.dm_chat(STRANGER)
    admin = driver.dm_chat(ADMIN)
    async with running(home, driver, openai) as stack:
        stack.gateway.pairing_desk.notices.batch_s = 0.2
        await driver.command(ADMIN, "/help")  # the admin has a private chat with the bot
        await driver.replies(admin, 1)
        await driver.dm(STRANGER, "hi, who are you?")
        [offer] = await driver.replies(stranger, 1)
        code = offer.split("\n\n")[1].strip()
        notice = (await driver.replies(admin, 2))[1]
        assert notice.startswith(f"New pairing request on {driver.platform.capitalize()}:")
        assert f"{driver.platform}:{STRANGER} (calls themselves “" in notice
        assert f"code {code}, 59 minutes left" in notice
        handle = await driver.press(ADMIN, f"Approve {code}")
        text, buttons = await driver.shown(ADMIN, handle, edits=1)  # the notice, edited
        assert text.endswith(f"✓ {code}: approved ({driver.platform}:{STRANGER})")
        assert buttons == []
        await driver.replies(stranger, 2)  # "you're approved"
        await driver.dm(STRANGER, "thanks")
        replies = await driver.replies(stranger, 3)
    assert replies[2] == "echo: thanks"


async def test_a_block_holds_after_a_restart(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    admin = driver.dm_chat(ADMIN)
    async with running(home, driver, openai):
        await driver.command(ADMIN, f"/pair block {driver.platform}:{ALICE}")
        [blocked] = await driver.replies(admin, 1)
    assert blocked.startswith(f"Blocked {driver.platform}:{ALICE}")
    async with running(home, driver, openai):
        await driver.dm(ALICE, "hello?")
        await driver.group(ALICE, "hello group", mention=True)
        await driver.command(ALICE, "/status")
        await driver.dm(BOB, "and me?")
        await driver.replies(driver.dm_chat(BOB), 1)
        await asyncio.sleep(QUIET_S)
    assert driver.all_replies(driver.dm_chat(ALICE)) == []
    assert driver.public_texts() == []
    assert driver.left_thinking() == 0  # her /status was withdrawn, not left hanging
    assert "hello" not in str([r.body for r in openai.requests])
