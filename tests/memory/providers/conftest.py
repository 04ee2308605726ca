"""The memory-service fakes, each started on 127.0.0.1 for one test (tests/fakes/), and a
record of every host the process looks up or connects to while a test runs."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.mem0_server import FakeMem0

#: The API key the fakes expect; a test checks it never reaches an error or a log line.
API_KEY = "sk-test-0123456789abcdef-SECRET"


@pytest.fixture
async def honcho_server() -> AsyncIterator[FakeHoncho]:
    async with FakeHoncho(api_key=API_KEY) as server:
        yield server


@pytest.fixture
async def mem0_server() -> AsyncIterator[FakeMem0]:
    async with FakeMem0(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every host name looked up and every address connected to, by any thread, while the
    test runs (the calls themselves go ahead): a test asserts they are all loopback."""
    seen: list[str] = []
    lookup, connect, connect_ex = (
        socket.getaddrinfo,
        socket.socket.connect,
        socket.socket.connect_ex,
    )

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(host))
        return lookup(host, *args, **kwargs)

    def connecting(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            seen.append(str(address[0]))
        connect(sock, address)

    def connecting_ex(sock: socket.socket, address: Any) -> int:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            seen.append(str(address[0]))
        return connect_ex(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connecting)
    monkeypatch.setattr(socket.socket, "connect_ex", connecting_ex)
    return seen
