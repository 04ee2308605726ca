"""A reply cut off by SIGKILL, on both platforms: `mnemo run` is killed with chunk 2 of a
three-chunk reply in flight, restarted, and the chat ends up with each chunk once.

The outbox records each chunk as the platform confirms it, so the restart sends only the
chunks not confirmed. The one in flight is the window delivery cannot close by itself:

- Telegram: the fake holds sendMessage for chunk 2 and never carries it out (the process
  died before the request took effect); after the restart chunks 2 and 3 go, chunk 1 does
  not go again.
- Discord: the fake posts chunk 2 and loses only the answer (the request took effect, the
  process died before hearing so). The restart sends chunk 2 again with the same nonce and
  Discord answers with the message it already made (``enforce_nonce``); then chunk 3.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.discord_driver import DiscordDriver
from tests.e2e.stack import ALICE, Driver
from tests.e2e.telegram_driver import TelegramDriver
from tests.e2e.test_run_process import mnemo_run, write_config
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.slow

#: "long: N" replies of three chunks: Telegram splits at 4,096 characters, Discord at 2,000.
SIZES = {"telegram": 20000, "discord": 9000}
QUIET_S = 0.5


def _arrived(driver: Driver, chat: str) -> int:
    """Telegram: sendMessage requests to ``chat`` received (carried out or not); Discord:
    messages posted in ``chat`` (a hung request is recorded only once it is answered)."""
    if isinstance(driver, TelegramDriver):
        calls = driver.api.calls_of("sendMessage")
        return sum(str(c.params.get("chat_id")) == chat for c in calls)
    return len(driver.all_replies(chat))


async def test_a_reply_cut_by_sigkill_goes_on_without_repeating_a_chunk(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    write_config(home, driver, openai)
    chat = driver.dm_chat(ALICE)
    if isinstance(driver, TelegramDriver):
        driver.api.hang("sendMessage", None, chat_id=ALICE, after=1)
    else:
        assert isinstance(driver, DiscordDriver)
        path = rf"^/channels/{chat}/messages$"
        driver.dc.hang_next(method="POST", path=path, after=1, handled=True)

    async with mnemo_run(home, driver) as running:
        await driver.dm(ALICE, f"long: {SIZES[driver.platform]}")
        for _ in range(400):  # chunk 1 confirmed, chunk 2 at the platform
            if _arrived(driver, chat) >= 2:
                break
            await asyncio.sleep(0.025)
        assert _arrived(driver, chat) == 2
        running.proc.kill()
        await running.proc.wait()
    before = driver.all_replies(chat)

    async with mnemo_run(home, driver) as running:
        replies = await driver.replies(chat, 3)
        await asyncio.sleep(QUIET_S)
        assert driver.all_replies(chat) == replies
        running.proc.terminate()
        await running.finish()

    assert len(replies) == 3 and len(set(replies)) == 3
    assert replies[0].startswith("This paragraph explains") and replies[2].endswith("Done.")
    if isinstance(driver, TelegramDriver):
        assert before == replies[:1]  # chunk 2 never took effect
        assert _arrived(driver, chat) == 4  # 1, 2 (cut), then only 2 and 3
    else:
        assert isinstance(driver, DiscordDriver)
        assert before == replies[:2]  # chunk 2 was posted before the kill ...
        path = f"/channels/{chat}/messages"
        resent = [c.body["nonce"] for c in driver.dc.calls if c.path == path][1:]
        assert len(resent) == 2 and driver.dc.nonce_hits == resent[:1]  # ... and recognised
