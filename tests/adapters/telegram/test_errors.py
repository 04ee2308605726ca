"""``errors``: PTB's errors as the ``PlatformError`` family, and the token kept out of logs
(pure: the errors PTB raises are built here, the log records too)."""

from __future__ import annotations

import logging
import sys
from datetime import timedelta

import pytest
from telegram import error as tg

from adapters.base import BadRequest, Forbidden, NotFound, PlatformError, RateLimited, Unavailable
from adapters.telegram.errors import REDACTOR, TokenRedactor, call, translate

TOKEN = "123456:SecretTokenValue_abc"

CASES: list[tuple[tg.TelegramError, type[PlatformError]]] = [
    (tg.Forbidden("Forbidden: bot was blocked by the user"), Forbidden),
    (tg.InvalidToken("Unauthorized"), Forbidden),
    (tg.BadRequest("Bad Request: chat not found"), NotFound),
    (tg.BadRequest("Bad Request: message thread not found"), NotFound),
    (tg.BadRequest("Bad Request: message to edit not found"), NotFound),
    (tg.ChatMigrated(-1001234), NotFound),
    (tg.BadRequest("Bad Request: BOT_COMMAND_INVALID"), BadRequest),
    (tg.EndPointNotFound("Not Found"), BadRequest),
    (tg.NetworkError("httpx.ConnectError: connection refused"), Unavailable),
    (tg.TimedOut(), Unavailable),
    (tg.Conflict("Conflict: terminated by other getUpdates request"), Unavailable),
]


@pytest.mark.parametrize(("error", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_each_ptb_error_has_its_place_in_the_family(
    error: tg.TelegramError, expected: type[PlatformError]
) -> None:
    translated = translate(error, ["7", "8"], "sendMessage", token=TOKEN)
    assert type(translated) is expected
    assert translated.sent == ("7", "8") and str(translated).startswith("telegram sendMessage: ")


def test_flood_control_carries_the_wait_in_seconds() -> None:
    translated = translate(tg.RetryAfter(timedelta(seconds=12)), (), "sendMessage", token=TOKEN)
    assert isinstance(translated, RateLimited) and translated.retry_after == 12.0
    assert "retry in 12 s" in str(translated)


def test_a_migrated_group_names_its_supergroup() -> None:
    assert "-1009876" in str(translate(tg.ChatMigrated(-1009876), (), "x", token=TOKEN))


def test_the_token_never_reaches_the_message() -> None:
    error = tg.NetworkError(f"POST https://api.telegram.org/bot{TOKEN}/getMe failed")
    translated = translate(error, (), "getMe", token=TOKEN)
    assert TOKEN not in str(translated) and "/bot<token>/getMe" in str(translated)


async def test_call_returns_the_result_or_raises_the_translation_without_its_cause() -> None:
    async def answer() -> int:
        return 42

    async def refuse() -> int:
        raise tg.BadRequest(f"Bad Request: chat not found ({TOKEN})")

    assert await call(answer(), "getChat", token=TOKEN) == 42
    with pytest.raises(NotFound, match="telegram getChat: ") as caught:
        await call(refuse(), "getChat", token=TOKEN)
    assert TOKEN not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def _record(message: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord("httpx", logging.INFO, __file__, 1, message, args, exc_info)


def test_the_redactor_rewrites_messages_arguments_and_tracebacks_while_registered() -> None:
    redactor = TokenRedactor()
    untouched = _record("HTTP Request: POST %s", f"/bot{TOKEN}/getMe")
    assert redactor.filter(untouched) and TOKEN in untouched.getMessage()  # none registered
    redactor.register(TOKEN)
    redactor.register(TOKEN)  # two adapters with the same token
    try:
        raise RuntimeError(f"failed: /bot{TOKEN}/getUpdates")
    except RuntimeError:
        failed = _record("polling failed", exc=sys.exc_info()[1])
    for record in (_record("HTTP Request: POST %s", f"/bot{TOKEN}/getMe"), failed):
        assert redactor.filter(record)  # rewritten, never dropped
        assert TOKEN not in record.getMessage() + (record.exc_text or "")
    assert "/bot<token>/getMe" in redactor.redact(f"/bot{TOKEN}/getMe")
    redactor.unregister(TOKEN)
    assert redactor.redact(TOKEN) == "<token>"  # the other adapter still runs
    redactor.unregister(TOKEN)
    assert redactor.redact(TOKEN) == TOKEN


def test_registering_filters_ptb_httpx_and_this_package_loggers() -> None:
    REDACTOR.register(TOKEN)
    try:
        for name in ("httpx", "httpcore", "telegram.ext.Application", "adapters.telegram.client"):
            assert REDACTOR in logging.getLogger(name).filters, name
        for name in ("adapters.telegram.sending", "adapters.telegram.webhook"):
            assert REDACTOR in logging.getLogger(name).filters, name
    finally:
        REDACTOR.unregister(TOKEN)
