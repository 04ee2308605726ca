"""Serving a fake on 127.0.0.1: what every emulator of the suite starts the same way."""

from __future__ import annotations

from aiohttp import web

__all__ = ["serve"]


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
