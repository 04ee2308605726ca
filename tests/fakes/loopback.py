"""Serving a fake on 127.0.0.1: what every emulator of the suite does the same way.

``serve(app)`` binds a free loopback port; ``LoopbackServer`` gives a fake its
``async with`` (``start`` … ``close``), and re-raises, when the block ended normally, the
first error a handler hit while answering (kept in ``handler_errors``), so a broken script
cannot pass silently.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from aiohttp import web

__all__ = ["LoopbackServer", "serve"]


class LoopbackServer:
    name = "the fake"
    handler_errors: list[BaseException]

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
        errors = getattr(self, "handler_errors", [])
        if exc is None and errors:
            raise RuntimeError(f"{self.name} failed to answer: {errors[0]!r}") from errors[0]


async def serve(app: web.Application, *, shutdown_timeout: float) -> tuple[web.AppRunner, int]:
    """Serve ``app`` on a free loopback port; the runner (to ``cleanup``) and the port.

    A client that gives up cancels its handler (``handler_cancellation``), and no access log
    is written; a failed bind leaves nothing behind."""
    runner = web.AppRunner(
        app, handler_cancellation=True, access_log=None, shutdown_timeout=shutdown_timeout
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, int(runner.addresses[0][1])
    except BaseException:
        await runner.cleanup()
        raise
