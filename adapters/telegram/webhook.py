"""The Telegram adapter's webhook listener (webhook mode; ``polling`` is the other mode).

Why not ``Updater.start_webhook``: it needs the ``python-telegram-bot[webhooks]`` extra
(tornado), which is not a dependency. aiohttp (already installed with discord.py) serves the
webhook instead, with PTB's handler rules, checked in this order:

1. the ``X-Telegram-Bot-Api-Secret-Token`` header, compared in constant time with the
   secret given to setWebhook. The secret is required (the listener refuses to be built
   without one): the URL is public, and without it anyone who guesses it can post updates
   that look like any person. Missing or wrong -> 403, nothing is handed on, the refusal is
   counted in ``refused["secret"]`` and logged without the header's value (the first
   refusal and then at 10, 100, 1000 ...: a scanner must not flood the log);
2. ``Content-Type: application/json`` (403 otherwise, ``refused["content_type"]``);
3. a body that is JSON (400 otherwise, ``refused["body"]``);
4. 200 once the application has handled the update (and the sink has it). Unlike PTB's
   handler (400), JSON that is not a usable update gets 200: Telegram retries every
   non-2xx delivery, and one that can never be read would come back forever; it is
   counted ``unparsable`` in ``skips`` (``updates.read`` reads it as polling does).

Stateless: the listener keeps nothing between posts, so behind a load balancer any replica
can take any update (ordering and deduplication across replicas are the gateway's).

``Listener.start`` binds ``listen:port`` (``port`` 0: any free one, see ``Listener.port``)
and then tells Telegram where to deliver (setWebhook with the URL, the secret, the
``allowed_updates`` and ``max_connections``, ``drop_pending_updates=False``); every replica
sets the same webhook, which is idempotent. ``close`` stops listening and leaves the webhook
set: the other replicas still serve it (``mnemo run --polling`` deletes it).
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from aiohttp import web
from telegram.ext import Application

from adapters.skips import Skips
from adapters.telegram import updates

__all__ = ["REFUSALS", "SECRET_HEADER", "Listener", "Refusal", "valid_secret"]

_LOGGER = logging.getLogger(__name__)
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 -- a header name
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what setWebhook accepts as secret_token

Refusal = Literal["secret", "content_type", "body"]
REFUSALS: tuple[Refusal, ...] = ("secret", "content_type", "body")


_WHY: dict[Refusal, str] = {
    "secret": "a missing or wrong secret token",
    "content_type": "not application/json",
    "body": "a body that is not JSON",
}


def valid_secret(secret: str | None) -> bool:
    """Whether Telegram accepts ``secret`` as a webhook secret token (1-256 characters of
    ``A-Z a-z 0-9 _ -``)."""
    return secret is not None and _SECRET.fullmatch(secret) is not None


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
        secret: str,
        max_connections: int,
        allowed_updates: Sequence[str],
        refused: dict[Refusal, int] | None = None,
    ) -> None:
        if not valid_secret(secret):
            raise ValueError(
                "a webhook needs a secret token of 1-256 characters of A-Z, a-z, 0-9, _ and -"
            )
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
        self._refused = refused if refused is not None else dict.fromkeys(REFUSALS, 0)

    @property
    def refused(self) -> Mapping[Refusal, int]:
        """Posts answered 403/400, by reason (the ``refused`` counts it was given: its
        adapter's, kept across restarts)."""
        return self._refused

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

    def _refuse(self, reason: Refusal, status: int, request: web.Request) -> web.Response:
        """Count a refused post; log the 1st, 10th, 100th, 1000th ... of each reason, naming
        the reason and the peer, never a header or the body."""
        count = self._refused[reason] = self._refused[reason] + 1
        if str(count).rstrip("0") == "1":
            _LOGGER.warning(
                "telegram: the webhook refused a post from %s (%s): %d so far",
                request.remote or "an unknown peer", _WHY[reason], count,
            )  # fmt: skip
        return web.Response(status=status)

    async def _on_post(self, request: web.Request) -> web.Response:
        app = self._app
        if app is None:
            return web.Response(status=503)
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode("utf-8", "replace"), self._secret.encode()):
            return self._refuse("secret", 403, request)
        if request.content_type != "application/json":
            return self._refuse("content_type", 403, request)
        try:
            data = json.loads(await request.read())
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past Python
            return self._refuse("body", 400, request)
        try:
            update = updates.read(data, app.bot)
        except Exception as exc:  # acknowledged: Telegram would retry it forever
            self._skips.skip(updates.name(data), "unparsable", exc)
            return web.Response(status=200)
        await app.process_update(update)
        return web.Response(status=200)
