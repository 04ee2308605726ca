"""``OpsServer`` over real loopback HTTP: /healthz transitions, /metrics parses and moves."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import Metrics
from gateway.ops_http import METRICS_CONTENT_TYPE, OpsServer, parse_listen

TIMEOUT = aiohttp.ClientTimeout(total=3)


class Gateway:
    """The state a real gateway would report: which adapters are connected, the queues."""

    def __init__(self) -> None:
        self.connected = {"telegram": True, "discord": True}
        self.queue_depth = 0
        self.refresh_fails = False
        self.refresh_hangs = False
        self.refreshes = 0

    async def health(self) -> tuple[bool, list[str]]:
        reasons = [f"{name}: disconnected" for name, up in self.connected.items() if not up]
        return not reasons, reasons


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        yield session


def make_server(gateway: Gateway, metrics: Metrics, **kwargs: float) -> OpsServer:
    async def refresh() -> None:
        gateway.refreshes += 1
        if gateway.refresh_fails:
            raise RuntimeError("state.db is locked")
        if gateway.refresh_hangs:
            await asyncio.sleep(10)
        metrics.set_queue_depth(gateway.queue_depth)

    return OpsServer(
        "127.0.0.1:0", health=gateway.health, metrics=metrics, refresh=refresh, **kwargs
    )


async def get(http: aiohttp.ClientSession, server: OpsServer, path: str) -> tuple[int, str, str]:
    async with http.get(f"http://127.0.0.1:{server.port}{path}") as response:
        return response.status, response.headers["Content-Type"], await response.text()


def scrape(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_healthz_follows_the_adapters(http: aiohttp.ClientSession) -> None:
    gateway = Gateway()
    async with make_server(gateway, Metrics(process=False)) as server:
        status, ctype, body = await get(http, server, "/healthz")
        assert (status, body) == (200, "ok\n")
        assert ctype.startswith("text/plain")

        gateway.connected["discord"] = False
        gateway.connected["telegram"] = False
        status, _, body = await get(http, server, "/healthz")
        assert status == 503
        assert body.splitlines() == ["telegram: disconnected", "discord: disconnected"]

        gateway.connected["telegram"] = True
        status, _, body = await get(http, server, "/healthz")
        assert (status, body) == (503, "discord: disconnected\n")

        gateway.connected["discord"] = True
        assert (await get(http, server, "/healthz"))[0] == 200


async def test_a_healthy_answer_carries_what_the_gateway_reports(
    http: aiohttp.ClientSession,
) -> None:
    async def healthy_on_redis() -> tuple[bool, list[str]]:
        return True, ["coordination: redis"]

    server = OpsServer("127.0.0.1:0", health=healthy_on_redis, metrics=Metrics(process=False))
    async with server:
        assert (await get(http, server, "/healthz"))[::2] == (200, "ok\ncoordination: redis\n")


async def test_a_health_check_that_raises_or_hangs_is_a_503(
    http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken() -> tuple[bool, list[str]]:
        raise KeyError("agent")

    async def hangs() -> tuple[bool, list[str]]:
        await asyncio.sleep(10)
        return True, []

    async def unhealthy_without_reason() -> tuple[bool, list[str]]:
        return False, []

    metrics = Metrics(process=False)
    expected = [
        (broken, "health check failed: KeyError\n"),
        (hangs, "health check timed out after 0.1 s\n"),
        (unhealthy_without_reason, "unhealthy\n"),
    ]
    for check, body in expected:
        server = OpsServer("127.0.0.1:0", health=check, metrics=metrics, health_timeout=0.1)
        async with server:
            with caplog.at_level(logging.WARNING, logger="gateway.ops_http"):
                assert (await get(http, server, "/healthz"))[::2] == (503, body)


async def test_metrics_parse_and_move_after_turns(http: aiohttp.ClientSession) -> None:
    gateway = Gateway()
    metrics = Metrics(platforms=["telegram"])
    async with make_server(gateway, metrics) as server:
        status, ctype, body = await get(http, server, "/metrics")
        assert status == 200
        assert ctype == METRICS_CONTENT_TYPE
        first = scrape(body)
        ok = ("mnemo_turns_total", frozenset({("platform", "telegram"), ("outcome", "ok")}))
        assert first[ok] == 0
        assert first[("mnemo_queue_depth", frozenset())] == 0
        assert ("process_resident_memory_bytes", frozenset()) in first

        metrics.turn("telegram", "ok", 1.5)
        metrics.model_usage(prompt=900, cached=600, completion=40)
        gateway.queue_depth = 3
        second = scrape((await get(http, server, "/metrics"))[2])
        assert second[ok] == 1
        assert second[("mnemo_turn_seconds_count", frozenset({("platform", "telegram")}))] == 1
        assert second[("mnemo_model_tokens_total", frozenset({("kind", "cached")}))] == 600
        assert second[("mnemo_queue_depth", frozenset())] == 3
        assert gateway.refreshes == 2


async def test_a_failing_or_slow_refresh_still_serves_the_last_values(
    http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    gateway = Gateway()
    metrics = Metrics(process=False)
    async with make_server(gateway, metrics, refresh_timeout=0.1) as server:
        gateway.queue_depth = 5
        await get(http, server, "/metrics")
        gateway.queue_depth = 7
        metrics.turn("discord", "command", 0.01)

        gateway.refresh_fails = True
        with caplog.at_level(logging.WARNING, logger="gateway.ops_http"):
            status, _, body = await get(http, server, "/metrics")
        assert status == 200
        found = scrape(body)
        assert found[("mnemo_queue_depth", frozenset())] == 5
        key = ("mnemo_turns_total", frozenset({("platform", "discord"), ("outcome", "command")}))
        assert found[key] == 1
        assert "metrics refresh failed" in caplog.text

        gateway.refresh_fails, gateway.refresh_hangs = False, True
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="gateway.ops_http"):
            status, _, body = await get(http, server, "/metrics")
        assert status == 200
        assert scrape(body)[("mnemo_queue_depth", frozenset())] == 5
        assert "timed out" in caplog.text


async def test_other_paths_are_404_and_other_methods_405(http: aiohttp.ClientSession) -> None:
    async with make_server(Gateway(), Metrics(process=False)) as server:
        assert (await get(http, server, "/"))[0] == 404
        assert (await get(http, server, "/metrics/extra"))[0] == 404
        async with http.post(f"http://127.0.0.1:{server.port}/healthz") as response:
            assert response.status == 405


async def test_lifecycle_stop_is_idempotent_and_frees_the_port(
    http: aiohttp.ClientSession,
) -> None:
    server = make_server(Gateway(), Metrics(process=False))
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.port
    await server.start()
    port = server.port
    assert server.address == f"127.0.0.1:{port}"
    with pytest.raises(RuntimeError, match="already running"):
        await server.start()
    await server.stop()
    await server.stop()
    with pytest.raises(aiohttp.ClientConnectionError):
        await http.get(f"http://127.0.0.1:{port}/healthz")
    # A fixed port is reusable at once after stop (and is taken while running).
    fixed = OpsServer(f"127.0.0.1:{port}", health=Gateway().health, metrics=Metrics())
    async with fixed:
        assert fixed.port == port
        clash = OpsServer(f"127.0.0.1:{port}", health=Gateway().health, metrics=Metrics())
        with pytest.raises(OSError):  # noqa: PT011 - errno differs by platform
            await clash.start()


async def test_ipv6_loopback(http: aiohttp.ClientSession) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    server = OpsServer("[::1]:0", health=Gateway().health, metrics=Metrics(process=False))
    try:
        await server.start()
    except OSError:
        pytest.skip("::1 not configured")
    try:
        assert server.address == f"[::1]:{server.port}"
        async with http.get(f"http://{server.address}/healthz") as response:
            assert response.status == 200
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("listen", "expected"),
    [
        ("127.0.0.1:9464", ("127.0.0.1", 9464)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        ("localhost:80", ("localhost", 80)),
        ("[::1]:9464", ("::1", 9464)),
        ("[::]:9464", ("::", 9464)),
        (" 127.0.0.1:9464\n", ("127.0.0.1", 9464)),
    ],
)
def test_parse_listen(listen: str, expected: tuple[str, int]) -> None:
    assert parse_listen(listen) == expected


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("", "expected host:port"),
        ("9464", "expected host:port"),
        (":9464", "expected host:port"),
        ("127.0.0.1", "expected host:port"),
        ("127.0.0.1:", "expected host:port"),
        ("127.0.0.1:http", "expected host:port"),
        ("127.0.0.1:-1", "expected host:port"),
        ("127.0.0.1:70000", "out of range"),
        ("::1:9464", "in brackets"),
        ("[::1]", "expected host:port"),
        ("http://127.0.0.1:9464", "expected host:port"),
        ("my host:9464", "expected host:port"),
    ],
)
def test_parse_listen_rejects(listen: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_listen(listen)


def test_a_bad_listen_fails_at_construction() -> None:
    with pytest.raises(ValueError, match=r"ops\.http\.listen"):
        OpsServer("nope", health=Gateway().health, metrics=Metrics(process=False))
