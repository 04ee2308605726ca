"""Three ``mnemo run`` replicas, one Telegram bot, one PostgreSQL, one Redis (issue 16).

Each replica is a real OS process with a home folder of its own and the same config:
``storage.backend: postgres``, ``coordination.backend: redis``, Telegram in webhook mode.
The test plays Telegram's side of a load balancer: it posts each update to one replica's
webhook, round robin, with the secret. Then:

1. every message of every chat is answered once, in the order it was sent, though the
   replicas took turns receiving them, and an update posted to two replicas is answered once;
2. one person's memory written from two chats on two replicas at the same moment keeps both;
3. a replica SIGKILLed in the middle of a turn: another tells the person, once, that the
   answer was lost, and the chat goes on on the others;
4. a replica SIGKILLed while Telegram holds its reply: another delivers the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from gateway.config import Config
from gateway.config.schema import memory_stores
from gateway.replies import RESTARTED
from memory.documents.postgres import PgStores, open_pool
from tests import REPO_ROOT
from tests.e2e.stack import ADMIN, ALICE, BOB
from tests.e2e.telegram_driver import GROUP, TelegramDriver
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeBotAPI
from tests.services import RedisTarget

pytestmark = pytest.mark.slow  # three mnemo processes

SECRET = "replicas-secret_0123456789"
HOOK = "https://bot.example.org/telegram"
PORT = re.compile(rb"webhook on 127\.0\.0\.1:(\d+)/telegram")


class Replica:
    """One ``mnemo run`` process; its stderr is read all along (a full pipe would stall it)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.log = b""
        self.port = 0
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.log += line
            if not self.port and (found := PORT.search(line)):
                self.port = int(found.group(1))

    async def running(self, within: float = 60) -> None:
        async with asyncio.timeout(within):
            while b"mnemo is running" not in self.log:
                assert self.proc.returncode is None, self.log.decode()
                await asyncio.sleep(0.05)
        assert self.port, self.log.decode()

    async def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        await self._reader

    async def stop(self) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self.proc.wait(), 40)
        await self._reader
        return code


def _config(driver: TelegramDriver, openai: FakeOpenAI, redis: RedisTarget) -> dict[str, Any]:
    platform = driver.config() | {
        "mode": "webhook",
        "webhook_url": HOOK,
        "webhook_port": 0,
        "webhook_secret_env": "TELEGRAM_WEBHOOK_SECRET",
    }
    return {
        "model": {"base_url": openai.base_url, "name": "fake-model", "max_retries": 0},
        # both of a person's chats write the person's own memory (the DM and the group)
        "memory": {"review": {"enabled": False}, "group_scope": "person"},
        "platforms": {"telegram": platform},
        "gateway": {"admins": [f"telegram:{ADMIN}"], "drain_timeout_s": 5},
        "storage": {"backend": "postgres", "postgres": {"dead_after_s": 3}},
        "coordination": {"backend": "redis", "namespace": redis.prefix, "lease_ttl_s": 2},
    }


@contextlib.asynccontextmanager
async def replicas(
    tmp_path: Path, config: dict[str, Any], env: dict[str, str], n: int
) -> AsyncIterator[list[Replica]]:
    started: list[Replica] = []
    try:
        for i in range(n):
            home = tmp_path / f"replica-{i}"
            home.mkdir()
            (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "gateway", "--home", str(home), "run",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                cwd=REPO_ROOT, env=env,
            )  # fmt: skip
            started.append(Replica(proc))
        for replica in started:
            await replica.running()
        yield started
    finally:
        for replica in started:
            if replica.proc.returncode is None:
                replica.proc.kill()
                await replica.proc.wait()


async def _post(session: aiohttp.ClientSession, replica: Replica, update: Any) -> None:
    url = f"http://127.0.0.1:{replica.port}/telegram"
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    async with session.post(url, json=update, headers=headers) as answer:
        assert answer.status == 200, await answer.text()


def _in_order(replies: list[str], texts: list[str]) -> None:
    """Each text answered exactly once, in order (a turn may answer several at once)."""
    joined = "\n".join(replies)
    places = [joined.find(text) for text in texts]
    assert all(p >= 0 for p in places), (texts, replies)
    assert places == sorted(places), (texts, replies)
    assert all(joined.count(text) == 1 for text in texts), (texts, replies)


async def test_three_replicas_answer_once_in_order_and_survive_a_sigkill(
    tmp_path: Path, postgres_dsn: str, redis_target: RedisTarget, openai: FakeOpenAI
) -> None:
    async with FakeBotAPI() as api:
        driver = TelegramDriver(api)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO_ROOT),
            "OPENAI_API_KEY": "sk-test-replicas-0123456789",
            "TELEGRAM_BOT_TOKEN": driver.token,
            "TELEGRAM_WEBHOOK_SECRET": SECRET,
            "MNEMO_POSTGRES_DSN": postgres_dsn,
            "MNEMO_REDIS_URL": redis_target.url,
        }
        config = _config(driver, openai, redis_target)
        async with replicas(tmp_path, config, env, 3) as three, aiohttp.ClientSession() as http:
            # 1. round robin: message k of a chat goes to replica (k + chat) % 3, no waiting
            texts = {user: [f"message {k} of {user}" for k in range(4)] for user in (ALICE, BOB)}
            for k in range(4):
                for user in (ALICE, BOB):
                    update = api.push_text(user, user, texts[user][k])
                    await _post(http, three[(k + user) % 3], update)
                    if k == 1 and user == BOB:  # delivered twice: to two replicas
                        await _post(http, three[(k + user + 1) % 3], update)

            def last_answered(user: int) -> bool:
                return texts[user][-1] in "\n".join(driver.all_replies(str(user)))

            await api.wait_for(lambda: last_answered(ALICE) and last_answered(BOB), timeout=30)
            for user in (ALICE, BOB):
                _in_order(driver.all_replies(str(user)), texts[user])

            # 2. one person's memory, written from two chats on two replicas at once
            dm = api.push_text(ALICE, ALICE, "remember: likes green tea")
            group = api.push_text(
                GROUP,
                ALICE,
                f"@{api.username} remember: plays the cello",
                chat_type="supergroup",
            )
            await asyncio.gather(_post(http, three[0], dm), _post(http, three[1], group))
            await api.wait_sent(1, chat_id=GROUP, timeout=30)
            await api.wait_for(lambda: len(driver.all_replies(str(ALICE))) >= 5, timeout=30)

            # 3. SIGKILL mid-turn: the model is still thinking when replica 2 dies
            answered = len(driver.all_replies(str(BOB)))
            await _post(http, three[2], api.push_text(BOB, BOB, "slow: 60"))
            await api.wait_for(
                lambda: any("slow: 60" in str(r.body) for r in openai.requests), timeout=30
            )
            await three[2].kill()
            await api.wait_for(
                lambda: RESTARTED in driver.all_replies(str(BOB)), timeout=30
            )  # dead after 3 s, then the next sweep
            await _post(http, three[0], api.push_text(BOB, BOB, "after the cut"))
            await api.wait_for(
                lambda: "echo: after the cut" in driver.all_replies(str(BOB)), timeout=30
            )
            after = driver.all_replies(str(BOB))[answered:]
            assert after.count(RESTARTED) == 1 and "slow answer" not in after
            # no survivor ran the cut turn again (its answer would come after the test)
            assert sum("slow: 60" in str(r.body) for r in openai.requests) == 1

            # 4. SIGKILL while Telegram holds the reply: another replica delivers it
            api.hang("sendMessage", None, chat_id=ALICE)
            await _post(http, three[1], api.push_text(ALICE, ALICE, "held reply"))
            await api.wait_for(
                lambda: any(
                    c.params.get("chat_id") in (ALICE, str(ALICE))
                    and "held reply" in str(c.params.get("text"))
                    for c in api.calls_of("sendMessage")
                ),
                timeout=30,
            )
            await three[1].kill()
            await api.wait_for(
                lambda: "echo: held reply" in driver.all_replies(str(ALICE)), timeout=30
            )
            assert driver.all_replies(str(ALICE)).count("echo: held reply") == 1
            assert await three[0].stop() == 0

    # what the two replicas wrote at once, as any replica reads it
    pool = await asyncio.to_thread(open_pool, postgres_dsn, max_size=1)
    try:
        stores = memory_stores(PgStores(pool).memory(), Config())
        entries = await asyncio.to_thread(stores.for_person(f"telegram-{ALICE}").entries, "user")
    finally:
        await asyncio.to_thread(pool.close)
    assert sorted(entries) == ["likes green tea", "plays the cello"]
