"""Health and metrics of a running gateway, over HTTP, with the real clients on the wire."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from gateway.ops_http import OpsServer
from gateway.service import Gateway
from tests.e2e.stack import ALICE, Driver, running
from tests.e2e.telegram_driver import TelegramDriver
from tests.fakes.openai_server import FakeOpenAI, Mangled, Raw, Text
from tests.fakes.telegram_server import FakeBotAPI


@asynccontextmanager
async def ops_for(gateway: Gateway) -> AsyncIterator[str]:
    server = OpsServer(
        "127.0.0.1:0",
        health=gateway.health,
        metrics=gateway.metrics,
        refresh=gateway.refresh_metrics,
    )
    async with server:
        yield f"http://127.0.0.1:{server.port}"


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_metrics_move_after_a_turn(home: Path, driver: Driver, openai: FakeOpenAI) -> None:
    platform = driver.platform
    async with running(home, driver, openai) as stack, ops_for(stack.gateway) as base:
        assert await get(f"{base}/healthz") == (200, "ok\nstorage: sqlite\ncoordination: local\n")
        await driver.dm(ALICE, "remember: likes rye bread")
        await driver.replies(driver.dm_chat(ALICE), 1)
        await driver.command(ALICE, "/status")
        await driver.replies(driver.dm_chat(ALICE), 2)
        status, text = await get(f"{base}/metrics")
    assert status == 200
    values = samples(text)
    assert values[("mnemo_turns_total", (("outcome", "ok"), ("platform", platform)))] == 1
    assert values[("mnemo_turns_total", (("outcome", "command"), ("platform", platform)))] == 1
    assert values[("mnemo_model_tokens_total", (("kind", "prompt"),))] > 0
    assert values[("mnemo_turn_seconds_count", (("platform", platform),))] == 1
    assert values[("mnemo_memory_chars_max", (("file", "USER.md"),))] == len("likes rye bread")
    assert values[("mnemo_memory_stores", ())] == 1
    assert values[("mnemo_archive_bytes", ())] > 0
    assert values[("process_resident_memory_bytes", ())] > 0  # watched over months of uptime
    assert "telegram-1" not in text and "discord-1" not in text  # no person in any label


async def test_healthz_follows_the_adapter_connection(home: Path, openai: FakeOpenAI) -> None:
    async with FakeBotAPI() as api:
        driver = TelegramDriver(api)
        async with running(home, driver, openai) as stack, ops_for(stack.gateway) as base:
            assert (await get(f"{base}/healthz"))[0] == 200
            api.fail("getUpdates", 502, "Bad Gateway")  # the next poll fails
            await driver.dm(ALICE, "are you ok?")  # wakes the current long poll
            seen = []
            for _ in range(200):
                status, body = await get(f"{base}/healthz")
                seen.append(status)
                if status == 503:
                    assert "telegram: not connected" in body
                if 503 in seen and status == 200:
                    break
                await asyncio.sleep(0.02)
                if status == 503 and len(seen) == 10:
                    await driver.dm(ALICE, "still there?")  # the next poll succeeds
            assert 503 in seen and seen[-1] == 200  # down, then back by itself
            replies = await driver.replies(driver.dm_chat(ALICE), 2)
            assert replies == ["echo: are you ok?", "echo: still there?"]
        after, _ = await get_safely(base)
    assert after is None  # the endpoint closed with the gateway


async def get_safely(base: str) -> tuple[int | None, str]:
    try:
        return await get(f"{base}/healthz")
    except aiohttp.ClientError:
        return None, ""


async def test_a_model_outage_is_told_counted_and_loses_nothing(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    platform = driver.platform
    async with running(home, driver, openai) as stack, ops_for(stack.gateway) as base:
        openai.fail_next(1, 503)
        await driver.dm(ALICE, "the meeting moved to 3pm")
        [apology] = await driver.replies(driver.dm_chat(ALICE), 1)
        await driver.dm(ALICE, "did you get that?")
        await driver.replies(driver.dm_chat(ALICE), 2)
        _status, text = await get(f"{base}/metrics")
    assert "can't reach my language model" in apology and "saved" in apology
    values = samples(text)
    assert values[("mnemo_turns_total", (("outcome", "error"), ("platform", platform)))] == 1
    assert values[("mnemo_model_errors_total", (("kind", "unavailable"),))] == 1
    # the message the model never saw is in the archive and in the next turn's history
    assert "the meeting moved to 3pm" in str(openai.requests[-1].body["messages"])


async def test_malformed_updates_are_skipped_counted_and_the_next_is_answered(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    platform, chat = driver.platform, driver.dm_chat(ALICE)
    async with running(home, driver, openai) as stack, ops_for(stack.gateway) as base:
        expected = await driver.malformed(ALICE)
        await driver.dm(ALICE, "still there?")
        assert await driver.replies(chat, 1) == ["echo: still there?"]
        assert await get(f"{base}/healthz") == (
            200,
            "ok\nstorage: sqlite\ncoordination: local\n",
        )  # the platform never stopped
        _status, text = await get(f"{base}/metrics")
    values = samples(text)
    for reason in ("unparsable", "unnormalisable"):
        labels = (("platform", platform), ("reason", reason))
        assert values[("mnemo_updates_skipped_total", labels)] == expected[reason]
    assert driver.all_replies(chat) == ["echo: still there?"]  # the broken ones got nothing


async def test_a_broken_endpoint_is_never_silence(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    """A model.base_url answering 200 with a proxy's page, invalid JSON or a completion
    without choices: each message gets the apology, each is counted, none is lost, and the
    lane keeps answering once the endpoint is fixed."""
    platform = driver.platform
    chat = driver.dm_chat(ALICE)
    page = "<!doctype html><html><body>Please sign in to the proxy</body></html>"
    openai.script(
        Raw(page, "text/html; charset=utf-8"),
        Raw('{"choices": [{"message": ', "application/json"),
        Mangled(Text("lost"), lambda payload: {**payload, "choices": []}),
    )
    async with running(home, driver, openai) as stack, ops_for(stack.gateway) as base:
        for n, text in enumerate(["first: rye bread", "second: oat milk", "third: honey"], 1):
            await driver.dm(ALICE, text)
            assert "can't reach my language model" in (await driver.replies(chat, n))[-1]
        await driver.dm(ALICE, "are you back?")
        replies = await driver.replies(chat, 4)
        _status, text = await get(f"{base}/metrics")
    assert replies[-1] == "echo: are you back?"
    values = samples(text)
    assert values[("mnemo_turns_total", (("outcome", "error"), ("platform", platform)))] == 3
    assert values[("mnemo_turns_total", (("outcome", "ok"), ("platform", platform)))] == 1
    assert values[("mnemo_model_errors_total", (("kind", "invalid_response"),))] == 3
    assert values[("mnemo_model_errors_total", (("kind", "unavailable"),))] == 0
    seen = str(openai.requests[-1].body["messages"])
    assert all(t in seen for t in ("rye bread", "oat milk", "honey"))
