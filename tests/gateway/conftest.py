"""Fixtures of the gateway tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.archive.database import Archive
from tests.gateway.rig import Rig, config


@pytest.fixture
async def rig(home: Path, archive: Archive) -> AsyncIterator[Rig]:
    made = Rig(home, archive, config())
    await made.gateway.start()
    yield made
    await made.gateway.stop()
