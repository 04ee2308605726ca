"""The Telegram adapter's webhook listener (webhook mode; ``polling`` is the other mode).

Why not ``Updater.start_webhook``: it needs the ``python-telegram-bot[webhooks]`` extra
(tornado), which is not a dependency. aiohttp (already installed with discord.py) serves the
webhook instead, with PTB's handler rules: POST with ``Content-Type: application/json``, the
``X-Telegram-Bot-Api-Secret-Token`` header compared in constant time (403 otherwise), 400 for
a body that is not JSON, 200 once the application has handled the update (and the sink has
it). Unlike PTB's handler (400), a JSON body that is not a usable update gets 200: Telegram
retries every non-2xx delivery, and one that can never be read would come back forever; it
is counted ``unparsable`` in ``skips`` (``updates.read`` reads it as polling does).

``Listener.start`` binds ``listen:port`` (``port`` 0: any free one, see ``Listener.port``)
and then tells Telegram where to deliver (setWebhook, ``drop_pending_updates=False``);
``close`` stops listening.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Sequence
from typing import Any

from aiohttp import web
from telegram.ext import Application

from adapters.skips import Skips
from adapters.telegram import updates

__all__ = ["SECRET_HEADER", "Listener"]

_LOGGER = logging.getLogger(__name__)
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 -- a header name


class Listener:
    """One adapter's webhook: an aiohttp server handing each update to ``app``."""

    def __init__(
        self,
        app: Application[Any, Any, Any, Any, Any, Any],
        *,
        skips: Skips,
        listen: str,
        port: int,
        path: str,
        url: str,
        secret: str | None,
        max_connections: int,
        allowed_updates: Sequence[str],
    ) -> None:
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = app
        self._skips = skips
        self._listen = listen
        self._port = port
        self._path = path
        self._url = url
        self._secret = secret
        self._max_connections = max_connections
        self._allowed_updates = list(allowed_updates)
        self._runner: web.AppRunner | None = None

    @property
    def port(self) -> int:
        """The port the listener is bound to (useful with ``port=0``)."""
        if self._runner is None or not self._runner.addresses:
            raise RuntimeError("the webhook listener is not running")
        return int(self._runner.addresses[0][1])

    async def start(self) -> None:
        """Listen, then setWebhook (a failure leaves what started for ``close``)."""
        app = self._app
        if app is None:
            raise RuntimeError("the webhook listener is closed")
        listener = web.Application()
        listener.router.add_post(self._path, self._on_post)
        runner = web.AppRunner(listener, access_log=None)
        await runner.setup()
        self._runner = runner
        site = web.TCPSite(runner, self._listen, self._port)
        await site.start()
        await app.bot.set_webhook(
            url=self._url,
            allowed_updates=self._allowed_updates,
            drop_pending_updates=False,
            max_connections=self._max_connections,
            secret_token=self._secret,
        )

    async def close(self) -> None:
        """Stop listening; a request after this is answered 503 (idempotent)."""
        runner, self._runner = self._runner, None
        try:
            if runner is not None:
                await runner.cleanup()
        finally:
            self._app = None

    async def _on_post(self, request: web.Request) -> web.Response:
        app = self._app
        if app is None:
            return web.Response(status=503)
        if request.content_type != "application/json":
            return web.Response(status=403)
        if self._secret is not None:
            given = request.headers.get(SECRET_HEADER, "")
            if not hmac.compare_digest(given.encode(), self._secret.encode()):
                return web.Response(status=403)
        try:
            data = json.loads(await request.read())
        except ValueError:
            _LOGGER.warning("telegram: the webhook received a body that is not JSON")
            return web.Response(status=400)
        try:
            update = updates.read(data, app.bot)
        except Exception as exc:  # acknowledged: Telegram would retry it forever
            self._skips.skip(updates.name(data), "unparsable", exc)
            return web.Response(status=200)
        await app.process_update(update)
        return web.Response(status=200)
