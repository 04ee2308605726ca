"""What the loopback fakes of memory services (Honcho, mem0) share: the serving, the request
log, the API-key check, and the switches that make the service misbehave.

A fake subclasses ``MemoryServiceFake``, names its auth scheme and adds its routes in
``routes(app)``; its handlers keep their state in memory and answer JSON. Every request is
kept in ``requests`` (method, path, query, lower-cased headers, parsed JSON body) before
anything else happens to it, so a test can check what the SDK sent even when it was refused.

Misbehaving, for the error paths of a client: ``fail(status)`` answers that status with a
``{"detail": …}`` body, ``slow(seconds)`` waits before answering (a client's timeout trips
first; leaving the ``async with`` wakes every wait), ``malformed()`` answers 200 with a body
that is not JSON; each may be limited to paths containing ``path`` and to the next ``times``
requests. ``heal()`` ends them all. With ``api_key`` set, a request without
``Authorization: <scheme> <api_key>`` gets 401, as the real services answer a bad key.

A handler that raises answers 500 and is kept in ``handler_errors`` (re-raised when the
``async with`` exits normally, see ``tests/fakes/loopback.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer, serve

__all__ = ["Fault", "MemoryServiceFake", "Recorded", "detail"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: Any  # the parsed JSON body; None when empty or not JSON


@dataclass
class Fault:
    status: int | None = None  # answer this status with a {"detail": ...} body
    delay: float = 0.0  # seconds before answering
    malformed: bool = False  # answer 200 with a body that is not JSON
    path: str | None = None  # only requests whose path contains this (None: every one)
    times: int | None = None  # only the next this many requests (None: until heal())

    def hits(self, path: str) -> bool:
        return (self.path is None or self.path in path) and (self.times is None or self.times > 0)


def detail(status: int, message: Any) -> web.Response:
    """An error answer as FastAPI and Django REST framework shape it."""
    return web.json_response({"detail": message}, status=status)


class MemoryServiceFake(LoopbackServer):
    """A memory service on 127.0.0.1; subclasses add the routes (see the module doc)."""

    scheme = "Bearer"  # the Authorization scheme the service's SDK sends

    def __init__(self, *, api_key: str | None = None, shutdown_timeout: float = 2.0) -> None:
        self.api_key = api_key
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.handler_errors: list[BaseException] = []
        self._shutdown_timeout = shutdown_timeout
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError(f"{self.name} is already running")
        app = web.Application(middlewares=[self._middleware])
        self.routes(app)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._closing.clear()
        self._runner, self._port = await serve(app, shutdown_timeout=self._shutdown_timeout)

    async def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            self._closing.set()  # wake every slow answer so shutdown does not wait for it
            await runner.cleanup()

    @property
    def base_url(self) -> str:
        if self._port is None or self._runner is None:
            raise RuntimeError(f"{self.name} is not running")
        return f"http://127.0.0.1:{self._port}"

    # -- misbehaving --------------------------------------------------------------------

    def fail(self, status: int = 500, *, path: str | None = None, times: int | None = None) -> None:
        self.faults.append(Fault(status=status, path=path, times=times))

    def slow(self, seconds: float, *, path: str | None = None, times: int | None = None) -> None:
        self.faults.append(Fault(delay=seconds, path=path, times=times))

    def malformed(self, *, path: str | None = None, times: int | None = None) -> None:
        self.faults.append(Fault(malformed=True, path=path, times=times))

    def heal(self) -> None:
        self.faults.clear()

    def paths(self, method: str | None = None) -> list[str]:
        """The paths requested, in order (only ``method``'s when given)."""
        return [r.path for r in self.requests if method is None or r.method == method]

    # -- the pipeline -------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        raw = await request.read()
        body: Any = None
        if raw:
            with contextlib.suppress(ValueError):
                body = json.loads(raw)
        self.requests.append(
            Recorded(
                method=request.method,
                path=request.path,
                query=dict(request.query),
                headers={name.lower(): value for name, value in request.headers.items()},
                body=body,
            )
        )
        faulty = await self._misbehave(request.path)
        if faulty is not None:
            return faulty
        if self.api_key is not None and request.headers.get("Authorization") != (
            f"{self.scheme} {self.api_key}"
        ):
            return detail(401, "Invalid API key")
        try:
            return await handler(request)
        except web.HTTPException:
            raise
        except Exception as exc:  # a broken fake must not pass silently
            self.handler_errors.append(exc)
            return detail(500, f"fake server: the handler failed: {exc!r}")

    async def _misbehave(self, path: str) -> web.Response | None:
        for fault in [f for f in self.faults if f.hits(path)]:
            if fault.times is not None:
                fault.times -= 1
            if fault.delay:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), fault.delay)
            if fault.status is not None:
                return detail(fault.status, f"fake server: told to answer {fault.status}")
            if fault.malformed:
                return web.Response(status=200, text="{not json", content_type="application/json")
        return None

    async def _unknown(self, request: web.Request) -> web.Response:
        return detail(404, f"Not Found: {request.method} {request.path}")
