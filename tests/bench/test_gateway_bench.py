"""bench/gateway_bench.py at a tiny size: both systems answer every message exactly once, and
the bench's own correctness check does fail on a reply nobody asked for. No timing is
asserted: the numbers depend on the machine."""

from __future__ import annotations

import pytest
from telegram import Bot

from bench.gateway_bench import Driver, parse_args, run
from tests.fakes.telegram_server import FakeBotAPI

CHATS, PER_CHAT, SOLO = 20, 2, 5


async def test_small_run_answers_every_message_once_on_both_systems() -> None:
    args = parse_args(
        ["--chats", str(CHATS), "--messages-per-chat", str(PER_CHAT), "--solo", str(SOLO)]
    )
    floor, gateway = await run(args)
    for report in (floor, gateway):
        assert report.loaded.replies == len(report.loaded.latencies) == CHATS * PER_CHAT
        assert report.solo is not None and report.solo.replies == SOLO
        assert report.turns == CHATS * PER_CHAT + SOLO
        assert report.calls["sendMessage"] == report.turns  # no retries, no duplicates
        assert all(0 < x < 30 for x in report.loaded.latencies + report.solo.latencies)
        assert report.loaded.rate > 0 and report.rss_mb > 0
    assert floor.transactions == 0 and floor.calls["sendChatAction"] == 0
    # accept, enqueue, read back, exchange, mark sent: at least 4 write transactions a turn
    assert gateway.transactions >= 4 * gateway.turns


async def test_the_check_fails_on_a_reply_to_nothing() -> None:
    async with FakeBotAPI() as api, Bot(api.token, base_url=api.base_url) as bot:
        driver = Driver(api)
        await bot.send_message(1, "(dry run) you said: c1 m1")
        with pytest.raises(SystemExit, match="nothing outstanding"):
            driver.check()
