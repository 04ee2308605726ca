"""Coordination between replicas: leases per session key, claims, shared flood waits and
counters (``gateway.coordination.base`` says what each one is for).

``open_coordinator`` makes the backend ``coordination.backend`` names: ``local`` (one
process, the default, no dependency) or ``redis`` (``redis.asyncio``, imported only then),
whose URL comes from the environment variable ``coordination.redis_url_env`` and is never
logged or printed (it can hold a password).
"""

from __future__ import annotations

from collections.abc import Mapping

from gateway.coordination.base import (
    Backend,
    CoordinationError,
    CoordinationEvents,
    CoordinationUnavailable,
    Coordinator,
    Lease,
    LeaseLost,
    NoEvents,
)
from gateway.coordination.local import LocalCoordinator

__all__ = [
    "CLAIM_TTL_S",
    "Backend",
    "CoordinationError",
    "CoordinationEvents",
    "CoordinationUnavailable",
    "Coordinator",
    "Lease",
    "LeaseLost",
    "LocalCoordinator",
    "NoEvents",
    "open_coordinator",
]

CLAIM_TTL_S = 86_400.0
"""How long an inbound update's claim is remembered: longer than any platform redelivers."""


async def open_coordinator(
    backend: Backend,
    *,
    environ: Mapping[str, str],
    redis_url_env: str = "MNEMO_REDIS_URL",
    namespace: str = "mnemo:",
    lease_ttl_s: float = 30.0,
    events: CoordinationEvents | None = None,
) -> Coordinator:
    """The coordinator ``backend`` names, checked to answer: ``CoordinationUnavailable``
    (one line, never the URL) when Redis is not configured or does not answer."""
    if backend == "local":
        return LocalCoordinator(events=events)
    url = environ.get(redis_url_env, "").strip()
    if not url:
        raise CoordinationUnavailable(
            f"coordination.backend is redis but {redis_url_env} is not set"
            " (the Redis URL; set it in the environment, never in the file)"
        )
    from gateway.coordination.redis import RedisCoordinator  # noqa: PLC0415 - redis only here

    try:
        coordinator = RedisCoordinator.connect(
            url, namespace=namespace, lease_ttl_s=lease_ttl_s, events=events
        )
    except ValueError:  # from_url: not a redis:// / rediss:// / unix:// URL
        raise CoordinationUnavailable(
            f"coordination.backend is redis but {redis_url_env} is not a Redis URL"
            " (redis://[:password@]host:port/db)"
        ) from None
    try:
        await coordinator.ping()
    except CoordinationError as exc:
        await coordinator.aclose()
        raise CoordinationUnavailable(
            f"coordination.backend is redis but the Redis at {redis_url_env} did not answer"
            f" ({str(exc).rsplit('(', 1)[-1]}"
        ) from None
    return coordinator
