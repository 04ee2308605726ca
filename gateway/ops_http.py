"""The operations endpoint: ``/healthz`` and ``/metrics`` over plain HTTP (aiohttp).

Off by default; ``ops.http.listen: 127.0.0.1:9464`` turns it on. It is meant for a local
Prometheus, a Docker ``HEALTHCHECK`` or a load balancer — bind it to loopback or a private
network, there is no authentication.

- ``GET /healthz`` awaits the ``health`` callback, which answers ``(ok, lines)``: 200 with
  ``ok`` when ``ok`` is true, then the lines (what the gateway reports either way, e.g.
  ``storage: postgres``); otherwise 503 with the lines, one per line (e.g. ``telegram:
  disconnected``). A callback that raises or hangs past ``health_timeout`` is itself a
  reason — the endpoint answers, it never hangs a probe.
- ``GET /metrics`` first awaits ``refresh`` (which samples queue depth, outbox backlog,
  archive size and memory usage into the gauges of ``Metrics``), bounded by
  ``refresh_timeout``; if it fails or times out the scrape still gets the last values and a
  warning is logged. Then 200 with ``Metrics.render()`` as Prometheus text format 0.0.4.
- Any other path is 404; any other method on these paths is 405 (aiohttp's own answers).

Access logging is off: a scrape every 15 s would drown the real log lines. aiohttp is
imported when the server starts, so ``parse_listen`` (``mnemo config check``, the Docker
health check) costs no more than this module.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from aiohttp import web

    from gateway.metrics import Metrics

__all__ = ["METRICS_CONTENT_TYPE", "HealthCheck", "OpsServer", "Refresh", "parse_listen"]

log = logging.getLogger(__name__)

HealthCheck = Callable[[], Awaitable[tuple[bool, list[str]]]]
Refresh = Callable[[], Awaitable[None]]

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The classic Prometheus text format; every Prometheus version reads it."""

_LISTEN = re.compile(r"^(?:\[(?P<v6>[^\[\]]+)\]|(?P<host>[^\s:/\[\]]+)):(?P<port>\d{1,5})$")


def parse_listen(listen: str) -> tuple[str, int]:
    """``"127.0.0.1:9464"`` -> ``("127.0.0.1", 9464)``; IPv6 in brackets: ``"[::1]:9464"``."""
    text = listen.strip()
    match = _LISTEN.match(text)
    if match is None:
        hint = (
            " (write an IPv6 address in brackets, e.g. [::1]:9464)"
            if text.count(":") > 1 and "[" not in text
            else ""
        )
        raise ValueError(f"ops.http.listen: expected host:port, got {listen!r}{hint}")
    host = match["v6"] or match["host"]
    port = int(match["port"])
    if port > 65535:
        raise ValueError(f"ops.http.listen: port {port} is out of range (0-65535)")
    return host, port


class OpsServer:
    """Serves ``/healthz`` and ``/metrics`` on ``listen`` (``host:port``; port 0 picks one)."""

    def __init__(
        self,
        listen: str,
        *,
        health: HealthCheck,
        metrics: Metrics,
        refresh: Refresh | None = None,
        health_timeout: float = 5.0,
        refresh_timeout: float = 5.0,
    ) -> None:
        self._host, self._port_wanted = parse_listen(listen)
        self._health = health
        self._metrics = metrics
        self._refresh = refresh
        self._health_timeout = health_timeout
        self._refresh_timeout = refresh_timeout
        self._refresh_lock = asyncio.Lock()
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Bind and serve; raises ``OSError`` if the address is taken or not ours."""
        if self._runner is not None:
            raise RuntimeError("OpsServer is already running")
        from aiohttp import web  # noqa: PLC0415 - only a running endpoint needs it

        app = web.Application()
        app.router.add_get("/healthz", self._on_healthz)
        app.router.add_get("/metrics", self._on_metrics)
        runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self._host, self._port_wanted)
            await site.start()
            self._port = int(runner.addresses[0][1])
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        log.info("health and metrics on http://%s/ (/healthz, /metrics)", self.address)

    async def stop(self) -> None:
        """Close the listener and any open connections; safe to call twice."""
        runner, self._runner = self._runner, None
        self._port = None
        if runner is not None:
            await runner.cleanup()

    @property
    def port(self) -> int:
        """The bound port (the real one when ``listen`` asked for port 0)."""
        if self._port is None:
            raise RuntimeError("OpsServer is not running")
        return self._port

    @property
    def address(self) -> str:
        """``host:port`` as a URL authority (IPv6 in brackets)."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{host}:{self.port}"

    # -- handlers --------------------------------------------------------------------------

    async def _on_healthz(self, request: web.Request) -> web.Response:
        ok, reasons = await self._check_health()
        if ok:
            return _text(200, "".join(f"{line}\n" for line in ["ok", *reasons]))
        lines = reasons or ["unhealthy"]
        return _text(503, "".join(f"{line}\n" for line in lines))

    async def _check_health(self) -> tuple[bool, list[str]]:
        try:
            async with asyncio.timeout(self._health_timeout):
                return await self._health()
        except TimeoutError:
            log.warning("health check timed out after %.1f s", self._health_timeout)
            return False, [f"health check timed out after {self._health_timeout:g} s"]
        except Exception as exc:
            log.warning("health check failed", exc_info=True)
            return False, [f"health check failed: {type(exc).__name__}"]

    async def _on_metrics(self, request: web.Request) -> web.Response:
        from aiohttp import web  # noqa: PLC0415 - loaded by start()

        await self._run_refresh()
        response = web.Response(status=200, body=self._metrics.render())
        response.headers["Content-Type"] = METRICS_CONTENT_TYPE
        response.headers["Cache-Control"] = "no-store"
        return response

    async def _run_refresh(self) -> None:
        if self._refresh is None:
            return
        # One refresh at a time: concurrent scrapes would sample the same state twice.
        async with self._refresh_lock:
            try:
                async with asyncio.timeout(self._refresh_timeout):
                    await self._refresh()
            except TimeoutError:
                log.warning(
                    "metrics refresh timed out after %.1f s; serving the last values",
                    self._refresh_timeout,
                )
            except Exception:
                log.warning("metrics refresh failed; serving the last values", exc_info=True)


def _text(status: int, body: str) -> web.Response:
    from aiohttp import web  # noqa: PLC0415 - loaded by start()

    response = web.Response(status=status, text=body, content_type="text/plain")
    response.headers["Cache-Control"] = "no-store"
    return response
