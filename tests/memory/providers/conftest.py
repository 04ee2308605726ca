"""The memory-service fakes, each started on 127.0.0.1 for one test (tests/fakes/)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.honcho_server import FakeHoncho

#: The API key the fakes expect; a test checks it never reaches an error or a log line.
API_KEY = "sk-test-0123456789abcdef-SECRET"


@pytest.fixture
async def honcho_server() -> AsyncIterator[FakeHoncho]:
    async with FakeHoncho(api_key=API_KEY) as server:
        yield server
