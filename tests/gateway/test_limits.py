"""Per-person budgets (``gateway.limits``): turns an hour, tokens a day, counted from the
archive; admins exempt; one clear message, then reminders at most every ten minutes."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from adapters import Identity, InboundMessage
from gateway.config.schema import Config
from gateway.limits import Budgets, Limited, Limits, Spent, starts_turn
from memory.archive.database import Archive, NewMessage, SessionSpec
from tests.gateway.rig import ADMIN, Rig, config

NOON = datetime(2026, 3, 2, 12, 0, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float = NOON) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limited(turns: int = 0, tokens: int = 0, **gateway: Any) -> Config:
    cfg = config(**gateway).model_dump()
    cfg["gateway"]["limits"] = {"turns_per_hour": turns, "tokens_per_day": tokens}
    return Config.model_validate(cfg)


async def turn(archive: Archive, person: str, at: float, tokens: int = 0) -> None:
    await archive.append_exchange(
        "s1",
        [
            NewMessage("user", "q", speaker=person, created_at=at),
            NewMessage("assistant", "a", prompt_tokens=tokens, completion_tokens=0, created_at=at),
        ],
    )


@pytest.fixture
async def session(archive: Archive) -> Archive:
    await archive.start_session(SessionSpec("s1", "telegram", "1", "dm", ("telegram-1",)))
    return archive


async def test_the_hourly_budget_frees_up_when_the_turn_that_filled_it_ages_out(
    session: Archive,
) -> None:
    clock = Clock()
    budgets = Budgets(session, Limits(turns_per_hour=3, tokens_per_day=0), clock=clock)
    await turn(session, "telegram-1", NOON - 4000)  # outside the hour
    for ago in (3000, 2000, 1000):
        await turn(session, "telegram-1", NOON - ago)
    await turn(session, "telegram-2", NOON - 10)  # someone else's
    over = await budgets.check("telegram-1")
    assert over == Limited("turns", 3, NOON - 3000 + 3600)  # 12:10 UTC
    assert await budgets.check("telegram-2") is None
    text = budgets.notice("telegram-1", over)
    assert text == (
        "You've reached this bot's limit of 3 messages an hour, so I haven't passed this one"
        " on. You can write again at 12:10 UTC."
    )
    clock.now = NOON - 3000 + 3600 + 1
    assert await budgets.check("telegram-1") is None
    budgets.limits = Limits(turns_per_hour=2, tokens_per_day=0)  # SIGHUP
    again = await budgets.check("telegram-1")
    assert again is not None and again.resets_at == NOON - 2000 + 3600


async def test_the_daily_token_budget_counts_today_utc_and_resets_at_midnight(
    session: Archive,
) -> None:
    clock = Clock()
    budgets = Budgets(session, Limits(turns_per_hour=0, tokens_per_day=1000), clock=clock)
    await turn(session, "telegram-1", NOON - 13 * 3600, tokens=5000)  # yesterday
    await turn(session, "telegram-1", NOON - 3600, tokens=999)
    assert await budgets.check("telegram-1") is None
    await turn(session, "telegram-1", NOON - 60, tokens=1)
    over = await budgets.check("telegram-1")
    midnight = datetime(2026, 3, 3, tzinfo=UTC).timestamp()
    assert over == Limited("tokens", 1000, midnight)
    assert budgets.notice("telegram-1", over) == (
        "You've used today's allowance of 1,000 model tokens on this bot, so I haven't passed"
        " this message on. It resets at midnight UTC (in 12 hours)."
    )
    assert await budgets.spent("telegram-1") == Spent(turns=2, tokens=1000)
    clock.now = midnight + 1
    assert await budgets.check("telegram-1") is None


async def test_one_full_message_then_a_terse_reminder_every_ten_minutes(
    session: Archive,
) -> None:
    clock = Clock()
    budgets = Budgets(session, Limits(turns_per_hour=1, tokens_per_day=0), clock=clock)
    await turn(session, "telegram-1", NOON - 30 * 60 - 30)
    over = await budgets.check("telegram-1")
    assert over is not None
    assert budgets.notice("telegram-1", over) is not None
    clock.now += 9 * 60
    assert budgets.notice("telegram-1", over) is None
    clock.now += 61
    reminder = budgets.notice("telegram-1", over)
    assert reminder == "Still over the limit: you can write again at 12:30 UTC."
    assert budgets.notice("telegram-1", over) is None
    assert math.ceil(over.resets_at / 60) * 60 == NOON + 30 * 60  # rounded up: 12:29:30


def test_only_messages_that_would_run_the_model_are_budgeted() -> None:
    def message(text: str, **kwargs: Any) -> InboundMessage:
        return InboundMessage(
            "telegram", "1", "dm", Identity("telegram", "1"), text, "m1",
            datetime.now(UTC), is_command=text.startswith("/"), **kwargs,
        )  # fmt: skip

    assert starts_turn(message("hello"))
    assert starts_turn(message("/rotate-logs on web1"))  # a skill runs a turn
    assert not starts_turn(message("/status"))
    assert not starts_turn(message("/memory@mnemo_bot pending"))
    assert not starts_turn(message("/start"))
    assert not starts_turn(message("/memory approve 1", is_callback=True))


async def test_over_the_hourly_budget_a_message_is_answered_not_run(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, limited(turns=2))
    await rig.gateway.start()
    for n in range(2):
        await rig.adapter.say(f"question {n}", user="1")
        await rig.adapter.wait_sent(n + 1, chat="1")
    for text in ("one more", "and another", "please"):
        await rig.adapter.say(text, user="1")
    await rig.adapter.wait_sent(3, chat="1")
    await rig.adapter.say("/status", user="1")
    await rig.adapter.wait_sent(4, chat="1")
    for n in range(3):
        await rig.adapter.say(f"admin question {n}", user=ADMIN)  # admins are exempt
        await rig.adapter.wait_sent(n + 1, chat=ADMIN)
    await asyncio.sleep(0.1)
    await rig.gateway.stop()
    first = (await archive.turn_times("telegram-1", 0))[-1]
    free = datetime.fromtimestamp(math.ceil((first + 3600) / 60) * 60, UTC).strftime("%H:%M")
    texts = rig.adapter.texts("1")
    assert texts[2] == (
        "You've reached this bot's limit of 2 messages an hour, so I haven't passed this one"
        f" on. You can write again at {free} UTC."
    )
    assert len(texts) == 4 and "Limits: 2/2 messages this hour" in texts[3]
    assert rig.adapter.texts(ADMIN)[2] == "echo: admin question 2"
    assert len(rig.model.requests) == 2 + 3  # the refused messages never reached the model
    assert len(await archive.turn_times("telegram-1", 0)) == 2  # nor the archive
    assert await rig.gateway.ledger.interrupted() == []  # yet none is left unanswered
    value = rig.gateway.metrics.value
    assert value("mnemo_limited_total", platform="telegram", limit="turns") == 3
    assert value("mnemo_limited_total", platform="telegram", limit="tokens") == 0


async def test_over_the_daily_token_budget_and_group_turns_count_for_the_speaker(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, limited(tokens=200))  # the model spends 105 tokens a turn
    await rig.gateway.start()
    await rig.adapter.say("in private", user="1")
    await rig.adapter.wait_sent(1, chat="1")
    await rig.adapter.say(
        "@bot in the group", user="1", chat="-100", chat_type="group", mention=True
    )
    await rig.adapter.wait_sent(1, chat="-100")
    await rig.adapter.say("a third", user="1")
    await rig.adapter.say("/status", user="1")
    await rig.adapter.wait_sent(3, chat="1")
    await rig.gateway.stop()
    refused, status = rig.adapter.texts("1")[1:3]
    assert refused.startswith("You've used today's allowance of 200 model tokens on this bot")
    assert "It resets at midnight UTC (in " in refused
    assert "210/200 model tokens today" in status
    assert (
        rig.gateway.metrics.value("mnemo_limited_total", platform="telegram", limit="tokens") == 1
    )


async def test_zero_means_unlimited(home: Path, archive: Archive) -> None:
    rig = Rig(home, archive, limited(turns=0, tokens=0))
    await rig.gateway.start()
    for n in range(5):
        await rig.adapter.say(f"q{n}", user="1")
        await rig.adapter.wait_sent(n + 1, chat="1")
    await rig.adapter.say("/status", user="1")
    await rig.adapter.wait_sent(6, chat="1")
    await rig.gateway.stop()
    assert rig.adapter.texts("1")[4] == "echo: q4"
    assert "Limits: none on this bot" in rig.adapter.texts("1")[5]
