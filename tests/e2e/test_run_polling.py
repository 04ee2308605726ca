"""``mnemo run --polling`` as a real OS process, on a bot whose webhook another replica set:
it deletes the webhook before its first getUpdates (Telegram, and the fake, answer
getUpdates 409 Conflict while one is set) and answers; without ``--polling`` the same
webhook config and no secret is refused in one line before anything connects."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from telegram import Bot

from tests import REPO_ROOT
from tests.e2e.stack import ALICE
from tests.e2e.telegram_driver import TelegramDriver
from tests.e2e.test_run_process import API_KEY, Process, write_config
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

pytestmark = pytest.mark.slow  # starts mnemo run as a process
WEBHOOK = {"mode": "webhook", "webhook_url": "https://bot.example.org/telegram"}


async def start(home: Path, *args: str) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "OPENAI_API_KEY": API_KEY,
        "TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN,
    }
    env.pop("TELEGRAM_WEBHOOK_SECRET", None)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "--home", str(home), "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO_ROOT, env=env,
    )  # fmt: skip


async def test_run_polling_deletes_the_webhook_first_and_answers(
    home: Path, openai: FakeOpenAI
) -> None:
    async with FakeBotAPI() as api:
        driver = TelegramDriver(api)
        async with Bot(DEFAULT_TOKEN, base_url=api.base_url) as other_replica:
            await other_replica.set_webhook(WEBHOOK["webhook_url"], secret_token="elsewhere")
        write_config(home, driver, openai, platform=WEBHOOK)

        before = len(api.calls)
        refused = await start(home)  # webhook mode, and no secret in the environment
        _out, err = await asyncio.wait_for(refused.communicate(), 60)
        assert refused.returncode == 2
        [line] = err.decode().strip().splitlines()
        assert "webhook but TELEGRAM_WEBHOOK_SECRET is not set" in line
        assert len(api.calls) == before  # nothing connected

        running = Process(await start(home, "--polling"))
        try:
            await running.wait_log("mnemo is running")
            await driver.dm(ALICE, "hello")
            assert await driver.replies(driver.dm_chat(ALICE), 1) == ["echo: hello"]
            running.proc.send_signal(signal.SIGTERM)
            logs = await running.finish()
        finally:
            if running.proc.returncode is None:
                running.proc.kill()
                await running.proc.wait()
        assert running.proc.returncode == 0, logs
        assert "telegram: @mnemo_test_bot connected (polling)" in logs
    methods = [c.method for c in api.calls if c.method in ("deleteWebhook", "getUpdates")]
    assert methods[0] == "deleteWebhook" and "getUpdates" in methods
    assert not [c for c in api.calls_of("getUpdates") if c.status == 409]
    assert api.webhook == {}
