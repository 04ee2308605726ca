"""Two replicas' coordinators: on one Redis (two clients, one namespace), or, for the local
backend, the one process-wide coordinator seen twice (one replica by definition)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

from gateway.coordination import Coordinator, LocalCoordinator
from gateway.coordination.redis import RedisCoordinator
from gateway.metrics import Metrics
from tests.services import RedisTarget

LEASE_TTL_S = 1.0


@dataclass
class Replicas:
    a: Coordinator
    b: Coordinator
    metrics: Metrics  # what a reports


@pytest.fixture(params=["local", "redis"])
def target(request: pytest.FixtureRequest) -> RedisTarget | None:
    """None for the local backend; the test's Redis and key prefix for redis."""
    if request.param == "redis":
        redis: RedisTarget = request.getfixturevalue("redis_target")
        return redis
    return None


def redis_coordinator(
    target: RedisTarget, *, metrics: Metrics | None = None, url: str | None = None, **options: float
) -> RedisCoordinator:
    options.setdefault("lease_ttl_s", LEASE_TTL_S)
    return RedisCoordinator.connect(
        url or target.url, namespace=target.prefix, events=metrics, **options
    )


@pytest.fixture
async def replicas(target: RedisTarget | None) -> AsyncIterator[Replicas]:
    metrics = Metrics(process=False)
    if target is None:
        local = LocalCoordinator(events=metrics)
        yield Replicas(local, local, metrics)
        await local.aclose()
        return
    a = redis_coordinator(target, metrics=metrics)
    b = redis_coordinator(target)
    try:
        yield Replicas(a, b, metrics)
    finally:
        await a.aclose()
        await b.aclose()


def via(target: RedisTarget, port: int) -> str:
    """``target``'s URL through a proxy on ``port`` (``tests.fakes.tcp_proxy``)."""
    parts = urlsplit(target.url)
    return parts._replace(netloc=f"127.0.0.1:{port}").geturl()


def closed_port() -> int:
    """A loopback port nothing listens on: Redis "down"."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: connections to it are refused


def upstream(target: RedisTarget) -> tuple[str, int]:
    """Where ``target``'s Redis listens, for a proxy to forward to."""
    parts = urlsplit(target.url)
    return parts.hostname or "127.0.0.1", parts.port or 6379
