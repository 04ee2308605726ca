"""One scenario suite, every platform: ``driver`` is parametrised over the emulators."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.e2e.discord_driver import DiscordDriver
from tests.e2e.stack import Driver, default_model
from tests.e2e.telegram_driver import TelegramDriver
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeBotAPI

PLATFORMS = ["telegram", "discord"]


@pytest.fixture(params=PLATFORMS)
async def driver(request: pytest.FixtureRequest) -> AsyncIterator[Driver]:
    if request.param == "telegram":
        async with FakeBotAPI() as api:
            yield TelegramDriver(api)
    else:
        async with FakeDiscord() as dc:
            yield DiscordDriver(dc)


@pytest.fixture
async def openai() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(default=default_model()) as server:
        yield server
