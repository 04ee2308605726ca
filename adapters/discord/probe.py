"""Is this bot token accepted? One REST ``GET /users/@me``, nothing else (for ``mnemo doctor``).

A plain aiohttp request rather than discord.py's ``HTTPClient.static_login``: discord.py has
no per-client base URL (``Route.BASE`` is process-global, see ``client.py``) and its login
also fetches the application; the probe needs one request, opens no gateway session and
changes no global state.

Errors are the ``adapters.base`` family and never contain the token: 401/403 ->
``Forbidden``; 429 -> ``RateLimited``; 5xx, network trouble, timeouts and answers that are
not a user -> ``Unavailable``; other statuses (a wrong ``api_base``, say) -> ``BadRequest``.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from adapters.base import BadRequest, Forbidden, RateLimited, Unavailable

__all__ = ["DEFAULT_API_BASE", "probe"]

DEFAULT_API_BASE = "https://discord.com/api/v10"


async def probe(
    token: str,
    *,
    api_base: str | None = None,
    timeout: float = 10,  # noqa: ASYNC109 - the HTTP client's own timeouts
) -> str:
    """``"name (id)"`` of the bot ``token`` belongs to; raises a ``PlatformError``."""
    if not token.strip():
        raise Forbidden("discord GET /users/@me: the bot token is empty")
    url = f"{(api_base or DEFAULT_API_BASE).rstrip('/')}/users/@me"
    headers = {"Authorization": f"Bot {token}", "User-Agent": "mnemo-doctor"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.get(url, headers=headers) as response,
        ):
            status = response.status
            text = await response.text(errors="replace")
            retry_after = response.headers.get("Retry-After")
    except (aiohttp.ClientError, TimeoutError) as exc:
        detail = str(exc).replace(token, "<token>") or "timed out"
        raise Unavailable(f"discord GET /users/@me: {type(exc).__name__}: {detail}") from None
    where = "discord GET /users/@me"
    if status in (401, 403):
        raise Forbidden(f"{where}: the bot token was rejected ({status} Unauthorized)")
    if status == 429:
        seconds = _float(retry_after) or _float(_body(text).get("retry_after")) or 1.0
        raise RateLimited(f"{where}: rate limited, retry in {seconds:g} s", seconds)
    if status >= 500:
        raise Unavailable(f"{where}: server error ({status})")
    if status != 200:
        raise BadRequest(f"{where}: unexpected answer ({status}): {_message(text)}")
    user = _body(text)
    if "id" not in user:
        raise Unavailable(f"{where}: the answer is not a user: {text[:100]!r}")
    name = user.get("username") or user.get("global_name") or "?"
    discriminator = user.get("discriminator")
    if discriminator and discriminator != "0":  # legacy name#1234
        name = f"{name}#{discriminator}"
    return f"{name} ({user['id']})"


def _body(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _message(text: str) -> str:
    message = _body(text).get("message")
    return str(message)[:200] if message else text[:200]


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
