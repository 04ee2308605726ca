"""``RedisCoordinator``: coordination across replicas through one Redis (``redis.asyncio``).

``redis`` is imported when a coordinator is made, so a gateway on the local backend never
loads it. Every key lives under the namespace (``coordination.namespace``), so several bots
can share one Redis::

    <ns>lease:<key>    the holder's random id, PX lease_ttl      (SET NX, renewed in Lua)
    <ns>queue:<key>    zset waiter -> since: whose work is oldest (granted in that order)
    <ns>seen:<key>     zset waiter -> last poll (ms, Redis TIME) (dead waiters dropped)
    <ns>fence          INCR per granted lease: the fencing tokens
    <ns>claim:<key>    SET NX PX: the first caller wins
    <ns>hold:<scope>   the unix time a flood wait ends, PXAT that time
    <ns>count:<key>    zset of event times: the sliding-window counter

**Leases.** Taking one is one Lua script: the caller joins the queue (once, scored by its
``since``), marks itself seen, drops waiters not seen for a TTL (a replica that died
waiting), and gets the lease only when nobody holds it and it is at the head of the queue;
the grant sets ``lease:<key>`` with ``PX ttl`` and returns ``INCR fence``. ``since`` comes
from each replica's clock, so the order across replicas is as good as their clocks agree
(NTP). A waiter polls that script with a capped back-off (5 ms doubling to ``poll_cap_s``,
at most a quarter of the TTL, so a live waiter is never taken for a dead one), and every
release publishes the key on ``<ns>released``: one subscription per coordinator wakes the
waiters of that key at once, so a lease passes between replicas in about a round trip; an
expired lease (its holder died) is found by the next poll.

A holder that lets go for older work elsewhere while it still has work of its own
(``Lease.let_go``) is put back in the queue by the release script itself, so the waiter
granted next sees it at once; a place nobody comes back for is dropped as a dead waiter's.

A holder renews every ``ttl/3`` with a compare-and-renew script and releases with
compare-and-delete, so a replica never extends or releases a lease it no longer owns. When
a renewal finds another value (the key expired and someone else took it), or when no
renewal succeeded for ``2/3 ttl`` (Redis unreachable: by the time it answers again the lease
may be gone), the lease is **lost**: ``Lease.lost`` turns true, ``on_lost`` is called (the
router cancels the turn) and ``leases_lost`` is counted. A replica that dies stops renewing,
and its leases expire after the TTL; the next waiter in line gets the key then.

**Failures** are ``CoordinationUnavailable`` (connection refused or lost, timeouts: each
call is bounded by ``timeout_s``, so nothing hangs) or ``CoordinationError``, each counted
(``coordination_error(op)``). Their text names the operation and the error's type, never
the URL (it can hold a password).

Single-instance Redis (or a primary with replicas) is assumed: the scripts touch keys of
one namespace that are not hash-tagged for Redis Cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from gateway.coordination.base import (
    Backend,
    CoordinationError,
    CoordinationEvents,
    CoordinationUnavailable,
    Lease,
    NoEvents,
    wait_out,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["RedisCoordinator"]

#: Connections to Redis one replica keeps at most; more callers wait for one (bounded).
MAX_CONNECTIONS = 64

log = logging.getLogger(__name__)
_T = TypeVar("_T")

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - ttl)) do
  redis.call('ZREM', KEYS[2], gone)
  redis.call('ZREM', KEYS[3], gone)
end
redis.call('PEXPIRE', KEYS[2], ttl * 2)
redis.call('PEXPIRE', KEYS[3], ttl * 2)
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
return redis.call('INCR', KEYS[4])
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[4] ~= '' then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
  redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[4])
end
local released = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  released = redis.call('DEL', KEYS[1])
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return released
"""
_HOLD = """
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
  return 1
end
return 0
"""
_HIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('ZCARD', KEYS[1])
"""


class RedisCoordinator:
    def __init__(
        self,
        client: Redis,
        *,
        namespace: str,
        lease_ttl_s: float = 30.0,
        timeout_s: float = 2.0,
        poll_cap_s: float = 0.25,
        clock: Callable[[], float] = time.time,
        events: CoordinationEvents | None = None,
    ) -> None:
        """Use ``connect`` (it imports ``redis``); ``client`` is closed by ``aclose``."""
        self._client = client
        self.namespace = namespace
        self.lease_ttl_s = lease_ttl_s
        self.timeout_s = timeout_s
        self.poll_cap_s = min(poll_cap_s, lease_ttl_s / 4)
        self._clock = clock
        self.events: CoordinationEvents = events or NoEvents()
        self._scripts: dict[str, AsyncScript] = {
            name: client.register_script(text)
            for name, text in (
                ("acquire", _ACQUIRE),
                ("renew", _RENEW),
                ("release", _RELEASE),
                ("hold", _HOLD),
                ("hit", _HIT),
            )
        }
        self._renewals: set[asyncio.Task[None]] = set()
        self._places: dict[str, str] = {}  # key -> the waiter its next lease is (let_go)
        self._wakeups = _Wakeups(client, f"{namespace}released")

    @classmethod
    def connect(cls, url: str, **options: Any) -> RedisCoordinator:
        """A coordinator on the Redis at ``url`` (no I/O yet: ``ping`` checks it answers)."""
        from redis.asyncio import BlockingConnectionPool, Redis  # noqa: PLC0415 - redis only
        from redis.asyncio.retry import Retry  # noqa: PLC0415
        from redis.backoff import NoBackoff  # noqa: PLC0415

        timeout = float(options.get("timeout_s", 2.0))
        # A burst of chats (a thousand lanes asking for leases at once) waits its turn for a
        # connection, up to the timeout, instead of failing at the pool's cap: failures there
        # lost renewals, and with them turns (found by bench/replicas_bench.py --window 1000).
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=timeout,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            health_check_interval=30,
        )
        client = Redis(
            connection_pool=pool,
            retry=Retry(NoBackoff(), 1),  # one quick retry on a dropped connection, no more
        )
        client.auto_close_connection_pool = True  # the client owns its pool: aclose closes it
        return cls(client, **options)

    @property
    def backend(self) -> Backend:
        return "redis"

    # -- leases ----------------------------------------------------------------------------

    @asynccontextmanager
    async def lease(
        self,
        key: str,
        *,
        since: float | None = None,
        on_lost: Callable[[], object] | None = None,
    ) -> AsyncIterator[Lease]:
        keys = self._lease_keys(key)
        me = self._places.pop(key, None) or secrets.token_hex(12)  # ``Lease.let_go``
        ttl_ms = max(1, round(self.lease_ttl_s * 1000))
        args: list[str | int] = [me, ttl_ms, repr(self._clock() if since is None else since)]
        granted: Lease | None = None

        async def peek() -> float | None:
            head = await self._call("lease", self._client.zrange(keys[1], 0, 0, withscores=True))
            return float(head[0][1]) if head else None

        try:
            began = time.monotonic()
            delay = 0.005
            with self._wakeups.watch(key) as woken:
                while True:
                    woken.clear()  # a release from now on cuts the next pause short
                    fence = int(await self._call("lease", self._scripts["acquire"](keys, args)))
                    if fence:
                        granted = Lease(key, fence, on_lost=on_lost, peek=peek)
                        break
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):  # not wait_for: see ``_call``
                            await woken.wait()
                    delay = min(delay * 2, self.poll_cap_s)
            self.events.lease_wait(time.monotonic() - began)
            held = asyncio.Event()  # cleared when the block ends: renewals stop
            held.set()
            renewal = asyncio.create_task(
                self._renew(keys[0], me, granted, held), name=f"lease:{key}"
            )
            self._renewals.add(renewal)
            renewal.add_done_callback(self._renewals.discard)
            try:
                yield granted
            finally:
                held.clear()
                renewal.cancel()
                # bounded: a renewal that outlived this block acts on nothing (``held``)
                await asyncio.wait({renewal}, timeout=self.timeout_s + 1)
        finally:
            # Released (or, when cancelled while waiting, our place in the queue given up),
            # even if the caller is being cancelled: a lease left behind blocks the key a TTL.
            place = None
            if granted is not None and granted.requeue is not None:
                place = (secrets.token_hex(12), granted.requeue)
                self._places[key] = place[0]  # the next lease of the key waits there
            release = asyncio.ensure_future(self._release(keys, me, key, place))
            release.add_done_callback(_retrieve)
            with contextlib.suppress(CoordinationError):
                await asyncio.shield(release)

    async def _release(
        self, keys: list[str], me: str, key: str, place: tuple[str, float] | None = None
    ) -> None:
        """Give up the lease (or the place in the queue); with ``place``, join the queue
        again as that waiter, in the same script (``Lease.let_go``)."""
        requeue: list[str] = ["", ""] if place is None else [place[0], repr(place[1])]
        args = [me, self._wakeups.channel, key, *requeue]
        await self._call("release", self._scripts["release"](keys[:3], args))

    async def _renew(self, lease_key: str, me: str, lease: Lease, held: asyncio.Event) -> None:
        """Renew every ttl/3 while ``held``; lose the lease when the key is someone else's,
        or when no renewal succeeded for 2/3 of the TTL."""
        ttl = self.lease_ttl_s
        ttl_ms = max(1, round(ttl * 1000))
        last_ok = time.monotonic()
        wait = ttl / 3
        while True:
            await asyncio.sleep(wait)
            try:
                renewed = await self._call(
                    "renew", self._scripts["renew"]([lease_key], [me, ttl_ms])
                )
            except CoordinationError as exc:
                if not held.is_set():
                    return
                if time.monotonic() - last_ok < ttl * 2 / 3:
                    wait = ttl / 12  # try again soon, while the key surely is still ours
                    continue
                log.warning("lease on %s: no renewal for %.1f s (%s)", lease.key, ttl * 2 / 3, exc)
                renewed = 0
            if not held.is_set():
                return  # the block ended while this renewal ran: the lease is released
            if not renewed:
                self.events.lease_lost()
                log.warning("lease on %s lost; the work under it is stopped", lease.key)
                lease.mark_lost()
                return
            last_ok = time.monotonic()
            wait = ttl / 3

    def _lease_keys(self, key: str) -> list[str]:
        ns = self.namespace
        return [
            f"{ns}lease:{key}",
            f"{ns}queue:{key}",
            f"{ns}seen:{key}",
            f"{ns}fence",
        ]

    # -- claims, flood holds, counters -------------------------------------------------------

    async def claim(self, key: str, ttl_s: float) -> bool:
        name = f"{self.namespace}claim:{key}"
        ttl_ms = max(1, math.ceil(ttl_s * 1000))
        return bool(await self._call("claim", self._client.set(name, b"1", nx=True, px=ttl_ms)))

    async def hold_until(self, scope: str, until: float) -> None:
        if until <= self._clock():
            return
        name = f"{self.namespace}hold:{scope}"
        args: list[str | int] = [repr(until), math.ceil(until * 1000)]
        await self._call("hold", self._scripts["hold"]([name], args))

    async def held_until(self, scope: str) -> float:
        raw = await self._call("hold", self._client.get(f"{self.namespace}hold:{scope}"))
        until = float(raw) if raw is not None else 0.0
        return until if until > self._clock() else 0.0

    async def wait(self, scope: str, *, max_s: float | None = None) -> float:
        return await wait_out(lambda: self.held_until(scope), self._clock, max_s)

    async def hit(self, key: str, window_s: float) -> int:
        now = self._clock()
        name = f"{self.namespace}count:{key}"
        member = f"{now!r}:{secrets.token_hex(4)}"
        args: list[str | int] = [
            repr(now),
            repr(now - window_s),
            member,
            max(1, math.ceil(window_s * 1000)),
        ]
        return int(await self._call("count", self._scripts["hit"]([name], args)))

    async def hits(self, key: str, window_s: float) -> int:
        since = self._clock() - window_s
        name = f"{self.namespace}count:{key}"
        return int(await self._call("count", self._client.zcount(name, f"({since!r}", "+inf")))

    # -- health and lifecycle ----------------------------------------------------------------

    async def ping(self) -> float:
        began = time.monotonic()
        await self._call("ping", self._client.ping())
        return time.monotonic() - began

    async def aclose(self) -> None:
        for task in list(self._renewals):
            task.cancel()
        await self._wakeups.aclose()
        with contextlib.suppress(Exception):
            await self._client.aclose()

    async def _call(self, op: str, request: Awaitable[_T]) -> _T:
        """``await request`` bounded by ``timeout_s``; Redis's errors as ours, counted."""
        from redis import exceptions  # noqa: PLC0415 - loaded with the client already

        task = asyncio.current_task()
        asked = 0 if task is None else task.cancelling()
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await request
        except (TimeoutError, OSError, exceptions.ConnectionError, exceptions.TimeoutError) as exc:
            self.events.coordination_error(op)
            raise CoordinationUnavailable(
                f"coordination: Redis did not answer ({op}: {type(exc).__name__})"
            ) from None
        except exceptions.RedisError as exc:
            self.events.coordination_error(op)
            raise CoordinationError(
                f"coordination: Redis refused {op}: {type(exc).__name__}"
            ) from None
        if task is not None and task.cancelling() > asked:
            # Cancelled while the request completed, and the cancellation was swallowed:
            # redis-py awaits ``asyncio.wait_for``, which on Python 3.11 returns the result
            # when both land in one loop pass (CPython gh-86296). Raised again, or a
            # cancelled renewal renewed its lease for ever and held the chat's turns
            # (found by bench/replicas_bench.py --window 1000).
            raise asyncio.CancelledError
        return result


def _retrieve(task: asyncio.Future[None]) -> None:
    """A shielded release finishes after its caller was cancelled: its error, already
    counted, is read here so asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()


class _Wakeups:
    """One subscription to ``channel`` per coordinator, started when a lease is first
    waited for and kept until ``aclose``: each key published there (a release) wakes the
    local waiters of that key. If the subscription fails the waiters still poll; it is
    started again on the next wait."""

    def __init__(self, client: Redis, channel: str) -> None:
        self._client = client
        self.channel = channel
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @contextlib.contextmanager
    def watch(self, key: str) -> Iterator[asyncio.Event]:
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._listen(), name=f"wakeups:{self.channel}")
        event = asyncio.Event()
        self._waiting.setdefault(key, set()).add(event)
        try:
            yield event
        finally:
            events = self._waiting.get(key)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._waiting[key]

    async def _listen(self) -> None:
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
            while not self._closed:  # a subscription is cheap, setting one up is not
                message = await pubsub.get_message(timeout=1.0)
                if message is None:
                    continue
                data = message["data"]
                key = data.decode() if isinstance(data, bytes) else str(data)
                for event in self._waiting.get(key, ()):
                    event.set()
        except Exception as exc:  # the waiters poll on; the next wait subscribes again
            log.debug("lease wake-ups on %s stopped: %s", self.channel, type(exc).__name__)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def aclose(self) -> None:
        """Stop listening. Bounded: redis-py may swallow a cancellation that lands inside a
        read, so the loop also checks ``_closed`` at each one-second turn."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task}, timeout=2)
