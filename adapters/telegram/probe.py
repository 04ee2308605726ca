"""Is this bot token accepted? One ``getMe``, nothing else (for ``mnemo doctor``).

``probe`` builds a bare PTB ``Bot`` (no ``Application``, no updater), so it neither consumes
updates (``getUpdates`` is never called) nor touches the webhook: a gateway running with the
same token is not disturbed. ``Bot.initialize()`` is the ``getMe``; ``Bot.shutdown()`` closes
its two httpx clients whatever happened.

Errors are the ``adapters.base`` family, their text free of the token (PTB puts the token in
every request URL and in the message of the ``InvalidToken`` that ``initialize`` raises, so
nothing PTB says is passed on without the token replaced, and the cause is suppressed):
a rejected or empty token -> ``Forbidden``; network trouble, timeouts, 5xx and anything else
-> ``Unavailable``.
"""

from __future__ import annotations

from telegram import Bot
from telegram import error as tg
from telegram.request import HTTPXRequest

from adapters.base import Forbidden, Unavailable

__all__ = ["probe"]

DEFAULT_BASE_URL = "https://api.telegram.org/bot"


async def probe(
    token: str,
    *,
    base_url: str | None = None,
    timeout: float = 10,  # noqa: ASYNC109 - the HTTP client's own timeouts
) -> str:
    """``"@username (id)"`` of the bot ``token`` belongs to; raises ``Forbidden`` or
    ``Unavailable`` (messages never contain the token)."""
    if not token.strip():
        raise Forbidden("telegram getMe: the bot token is empty")
    request = HTTPXRequest(
        connection_pool_size=1,
        connect_timeout=timeout,
        read_timeout=timeout,
        write_timeout=timeout,
        pool_timeout=timeout,
    )
    try:
        bot = Bot(token, base_url=base_url or DEFAULT_BASE_URL, request=request)
    except tg.TelegramError as exc:  # InvalidToken for an empty token
        raise Forbidden(f"telegram getMe: {_redact(exc.message, token)}") from None
    try:
        await bot.initialize()
        me = bot.bot
    except tg.InvalidToken:
        raise Forbidden("telegram getMe: the bot token was rejected (Unauthorized)") from None
    except tg.Forbidden as exc:
        raise Forbidden(f"telegram getMe: {_redact(exc.message, token)}") from None
    except tg.TelegramError as exc:  # NetworkError, TimedOut, RetryAfter, bad answers
        kind = type(exc).__name__
        raise Unavailable(f"telegram getMe: {kind}: {_redact(exc.message, token)}") from None
    finally:
        await bot.shutdown()
    name = f"@{me.username}" if me.username else me.first_name
    return f"{name} ({me.id})"


def _redact(text: str, token: str) -> str:
    return text.replace(token, "<token>") if token else text
