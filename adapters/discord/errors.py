"""discord.py's errors as the gateway's ``PlatformError`` family, and small shared helpers.

``translate``: ``discord.RateLimited`` / 429 -> ``RateLimited`` (``Retry-After``, else
``X-RateLimit-Reset-After``, else 5 s); 401/403 -> ``Forbidden``; 404 -> ``NotFound``; 5xx,
aiohttp errors, timeouts, socket errors and a closed gateway -> ``Unavailable``; other HTTP
errors -> ``BadRequest``; anything else is a bug and gives None (the caller re-raises).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import aiohttp
import discord

from adapters.base import BadRequest, Forbidden, NotFound, PlatformError, RateLimited, Unavailable

__all__ = ["NO_PINGS", "TOKEN_GONE", "snowflake", "translate"]

NO_PINGS = discord.AllowedMentions.none()
TOKEN_GONE = (10015, 50027)  # Unknown Webhook, Invalid Webhook Token


def snowflake(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _retry_after(exc: discord.HTTPException) -> float:
    headers = getattr(exc.response, "headers", None) or {}
    for name in ("Retry-After", "X-RateLimit-Reset-After"):
        with contextlib.suppress(KeyError, TypeError, ValueError):
            return float(headers[name])
    return 5.0


def translate(exc: BaseException, sent: Sequence[str]) -> PlatformError | None:
    """The gateway's error for a library error; None for anything else (a bug: re-raise)."""
    if isinstance(exc, discord.RateLimited):
        return RateLimited("Discord rate limit", exc.retry_after, sent=sent)
    if isinstance(exc, discord.HTTPException):
        detail = f"Discord {exc.status} (code {exc.code}): {exc.text}"
        if exc.status == 429:
            return RateLimited(detail, _retry_after(exc), sent=sent)
        if exc.status in (401, 403):
            return Forbidden(detail, sent=sent)
        if exc.status == 404:
            return NotFound(detail, sent=sent)
        if exc.status >= 500:
            return Unavailable(detail, sent=sent)
        return BadRequest(detail, sent=sent)
    if isinstance(exc, (aiohttp.ClientError, TimeoutError, OSError, discord.ConnectionClosed)):
        return Unavailable(f"Discord unreachable: {type(exc).__name__}", sent=sent)
    return None
