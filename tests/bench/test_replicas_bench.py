"""bench/replicas_bench.py at a tiny size: one replica on SQLite, one and three on PostgreSQL
and Redis (real ones on loopback; skipped where they do not answer), every message answered
exactly once through the webhooks, and nothing left behind in either service. No timing is
asserted: the numbers depend on the machine."""

from __future__ import annotations

import asyncpg
import pytest
from redis.asyncio import Redis

from bench.replicas_bench import Setup, parse_args, render, run
from tests.services import POSTGRES_DSN, REDIS_URL, RedisTarget

pytestmark = pytest.mark.slow  # gateway processes

CHATS, PER_CHAT, SOLO = 12, 2, 4


async def _leftovers() -> tuple[list[str], list[bytes]]:
    admin = await asyncpg.connect(POSTGRES_DSN)
    try:
        schemas = [
            r["nspname"]
            for r in await admin.fetch(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'mnemo_bench_%'"
            )
        ]
    finally:
        await admin.close()
    client = Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match="mnemo_bench_*")]
    finally:
        await client.aclose()
    return schemas, keys


async def test_one_and_three_replicas_answer_every_message_once(
    postgres_dsn: str, redis_target: RedisTarget
) -> None:  # the fixtures: skip where the services do not answer
    before = await _leftovers()
    args = parse_args(
        ["--chats", str(CHATS), "--messages-per-chat", str(PER_CHAT), "--solo", str(SOLO),
         "--dsn", POSTGRES_DSN, "--redis", REDIS_URL, "--timeout", "60"]
    )  # fmt: skip
    assert args.setups == [Setup("sqlite", 1), Setup("postgres", 1), Setup("postgres", 3)]
    outcomes = await run(args)
    for outcome in outcomes:
        assert outcome.loaded.replies == len(outcome.loaded.latencies) == CHATS * PER_CHAT
        assert outcome.solo is not None and outcome.solo.replies == SOLO
        assert outcome.calls["sendMessage"] == outcome.turns  # no retries, no duplicates
        assert outcome.calls["getUpdates"] == 0  # webhook mode: nobody polls
        assert all(0 < x < 30 for x in outcome.loaded.latencies + outcome.solo.latencies)
    text = render(args, outcomes, (1.0, 1.0))
    assert "postgres+redis x3 / postgres+redis x1: throughput" in text
    assert await _leftovers() == before  # the schema and the key namespace are gone


def test_replicas_and_backend_flags() -> None:
    assert parse_args(["--replicas", "3", "--backend", "postgres"]).setups == [Setup("postgres", 3)]
    assert parse_args(["--backend", "sqlite"]).setups == [Setup("sqlite", 1)]
    assert parse_args(["--setups", "postgres:3:sticky,postgres:3"]).setups == [
        Setup("postgres", 3, sticky=True),
        Setup("postgres", 3),
    ]
    with pytest.raises(SystemExit):
        parse_args(["--replicas", "2", "--backend", "sqlite"])
