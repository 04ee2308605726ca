"""Two replicas' coordinators: on one Redis (two clients, one namespace), or, for the local
backend, the one process-wide coordinator seen twice (one replica by definition)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

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
