"""Ingress for several replicas, whole gateways over the wire: two gateways (each as
``mnemo run`` builds it, each with its own home) behind one Telegram bot in webhook mode
take whichever updates are posted to them and answer; two behind one Discord bot, with
``shard_ids`` [0] and [1] of 2, each answer their own guild's messages and only those.

Shared storage and coordination across replicas are not what this checks (each gateway
here has its own SQLite home): only that updates get in, wherever they arrive."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from agent_core.models.openai import OpenAIModel
from gateway.cli.run import adapters_for
from gateway.config.schema import Config, Paths
from gateway.service import Gateway
from gateway.wiring import build_gateway
from memory.archive.database import Archive
from tests.e2e.stack import ALICE, BOB, Driver, stack_config
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_methods import Call
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

SECRET = "replica-secret_0123456789"
HOOK = "https://bot.example.org/telegram"


def homes(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for home in made:
        home.mkdir()
    return made


@asynccontextmanager
async def replica(
    home: Path, driver: Driver, openai: FakeOpenAI, environ: dict[str, str], **platform: Any
) -> AsyncIterator[Gateway]:
    """One gateway on ``driver``'s platform with ``platform`` merged into its section."""
    base = stack_config(driver).model_dump()
    base["platforms"][driver.platform] |= platform
    config = Config.model_validate(base)
    model = OpenAIModel(
        name="fake-model", base_url=openai.base_url, api_key="sk-test-key", max_retries=0
    )
    async with await Archive.open(home / "state.db") as archive:
        gateway = build_gateway(
            paths=Paths(home, home / "config.yaml", explicit_config=False),
            config=config,
            archive=archive,
            model=model,
            adapters=adapters_for(config, environ),
        )
        await gateway.start()
        try:
            yield gateway
        finally:
            await gateway.stop()
            await model.close()


def webhook_port(gateway: Gateway) -> int:
    port: int = getattr(gateway.adapters["telegram"], "webhook_port")  # noqa: B009 -- Adapter has none
    return port


async def test_two_webhook_replicas_each_answer_what_is_posted_to_them(
    tmp_path: Path, openai: FakeOpenAI
) -> None:
    from tests.e2e.telegram_driver import TelegramDriver

    environ = {"TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET}
    hook = {"mode": "webhook", "webhook_url": HOOK, "webhook_port": 0,
            "webhook_max_connections": 80}  # fmt: skip
    async with FakeBotAPI() as api, AsyncExitStack() as stack:
        driver = TelegramDriver(api)
        replicas = [
            await stack.enter_async_context(replica(home, driver, openai, environ, **hook))
            for home in homes(tmp_path, "a", "b")
        ]
        calls: list[Call] = api.calls_of("setWebhook")
        assert [c.params["secret_token"] for c in calls] == [SECRET, SECRET]
        assert all(c.params["url"] == HOOK for c in calls)
        assert all(c.params["max_connections"] == 80 for c in calls)
        assert all(c.params["allowed_updates"] == ["message", "callback_query"] for c in calls)
        sent = {ALICE: ["hello from alice", "and again"], BOB: ["hello from bob", "bob again"]}
        async with aiohttp.ClientSession() as session:
            n = 0
            for round_ in range(2):
                for user, texts in sent.items():  # round robin over the replicas
                    update = api.push_text(user, user, texts[round_])
                    url = f"http://127.0.0.1:{webhook_port(replicas[n % 2])}/telegram"
                    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
                    async with session.post(url, json=update, headers=headers) as answer:
                        assert answer.status == 200
                    n += 1
                    await driver.replies(str(user), round_ + 1)  # in order, one at a time
            async with session.post(url, data=json.dumps(update), headers={
                "Content-Type": "application/json",
                "X-Telegram-Bot-Api-Secret-Token": "guessed",
            }) as answer:  # fmt: skip
                assert answer.status == 403
        for user, texts in sent.items():
            assert driver.all_replies(str(user)) == [f"echo: {t}" for t in texts]
        assert not api.calls_of("getUpdates") and not api.calls_of("deleteWebhook")
        refused = "mnemo_webhook_refused_total"
        assert [
            r.metrics.value(refused, platform="telegram", reason="secret") for r in replicas
        ] == [
            0,
            1,
        ]  # fmt: skip  (the guess went to the replica that took the last update)
        assert b'mnemo_webhook_refused_total{platform="telegram",reason="body"} 0.0' in (
            replicas[1].metrics.render()
        )


async def test_two_sharded_discord_replicas_each_answer_their_guild(
    tmp_path: Path, openai: FakeOpenAI
) -> None:
    from tests.e2e.discord_driver import DiscordDriver

    async with FakeDiscord() as dc, AsyncExitStack() as stack:
        driver = DiscordDriver(dc)  # its guild is shard (id >> 22) % 2 of 2
        guild = dc.channels[driver.channel].guild_id or 0
        # the other shard's guild: from the guild's id, not its channel's (a snowflake made a
        # millisecond later may have the other parity, and put both guilds on one shard)
        other_guild = dc.add_guild("other", id=((guild >> 22) + 1) << 22)
        other = dc.add_channel(other_guild, "general")
        channels = sorted(
            [driver.channel, other], key=lambda c: (dc.channels[c].guild_id or 0) >> 22 & 1
        )  # channels[s]: the one whose guild is on shard s
        environ = {"DISCORD_BOT_TOKEN": driver.token}
        replicas = [
            await stack.enter_async_context(
                replica(
                    home, driver, openai, environ, shard_count=2, shard_ids=[shard],
                    allowed_chats=[str(c) for c in channels],
                )
            )
            for shard, home in enumerate(homes(tmp_path, "shard0", "shard1"))
        ]  # fmt: skip
        assert sorted(i["shard"] for i in dc.identify) == [[0, 2], [1, 2]]
        assert [(dc.channels[c].guild_id or 0) >> 22 & 1 for c in channels] == [0, 1]
        mention = f"<@{dc.bot.id}>"
        for shard, channel in enumerate(channels):
            await dc.push_message(channel, driver.users[ALICE], f"{mention} on shard {shard}")
        await dc.push_message(driver.dms[BOB], driver.users[BOB], "a dm")
        for shard, channel in enumerate(channels):
            assert await driver.replies(str(channel), 1) == [f"echo: on shard {shard}"]
        assert await driver.replies(driver.dm_chat(BOB), 1) == ["echo: a dm"]

        def turns() -> list[float]:
            return [r.metrics.value("mnemo_turns_total", platform="discord", outcome="ok")
                    for r in replicas]  # fmt: skip

        # shard 0: its guild and the DM; shard 1: its guild. A turn is counted once its reply
        # is delivered, each replica on its own: wait for both counts, not for their sum.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                while turns() != [2, 1]:  # noqa: ASYNC110 -- the registry has no event to wait on
                    await asyncio.sleep(0.02)
        assert turns() == [2, 1]
