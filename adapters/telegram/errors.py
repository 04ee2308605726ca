"""PTB's errors as the gateway's ``PlatformError`` family, and the token kept out of logs.

``translate``: ``RetryAfter`` -> ``RateLimited``; ``Forbidden`` and a rejected token
(``InvalidToken``) -> ``Forbidden``; "chat not found", "message thread not found", "message to
edit not found" and ``ChatMigrated`` -> ``NotFound``; any other ``BadRequest`` and
``EndPointNotFound`` -> ``BadRequest``; network trouble, timeouts, ``Conflict`` and 5xx ->
``Unavailable``; always with the ids already sent. ``call`` awaits one Bot API call and
translates what it raises.

Secrets: PTB puts the token in every request URL, which httpx logs at INFO
(``HTTP Request: POST https://api.telegram.org/bot<token>/getMe ...``), in a DEBUG line of
``Bot.__init__`` and in the message of the ``InvalidToken`` that ``Bot.initialize`` raises.
While an adapter runs its token is registered with ``REDACTOR``, a filter on the ``httpx``,
``httpcore``, ``telegram.*`` and our own (``adapters.telegram.*``) loggers that replaces it in
messages and tracebacks (the ``httpx`` level is left alone: other clients share that
logger). Every error ``translate`` builds has redacted text, and its callers raise it with
the cause suppressed.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from telegram import error as tg

from adapters.base import BadRequest, Forbidden, NotFound, PlatformError, RateLimited, Unavailable
from adapters.telegram.polling import retry_after

__all__ = ["REDACTOR", "TokenRedactor", "call", "translate"]

_T = TypeVar("_T")
_GONE = ("chat not found", "thread not found", "message to edit not found")
_OURS = ("telegram", "adapters.telegram")  # logger name prefixes: PTB's and this package's


class TokenRedactor(logging.Filter):
    """Replaces registered tokens in log records (message, arguments and traceback)."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: Counter[str] = Counter()

    def redact(self, text: str) -> str:
        for token in self.tokens:
            text = text.replace(token, "<token>")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.tokens:
            return True
        with contextlib.suppress(Exception):
            message = record.getMessage()
            redacted = self.redact(message)
            if redacted != message:
                record.msg, record.args = redacted, ()
            if record.exc_info:
                formatted = logging.Formatter().formatException(record.exc_info)
                record.exc_text, record.exc_info = self.redact(formatted), None
            elif record.exc_text:
                record.exc_text = self.redact(record.exc_text)
        return True

    def register(self, token: str) -> None:
        """Redact ``token`` from now on (counted: each ``register`` needs an ``unregister``)."""
        names = [n for n in logging.root.manager.loggerDict if n.startswith(_OURS)]
        for name in ["httpx", "httpcore", *names]:
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)
        self.tokens[token] += 1

    def unregister(self, token: str) -> None:
        self.tokens[token] -= 1
        if self.tokens[token] <= 0:
            del self.tokens[token]


REDACTOR = TokenRedactor()
"""The one filter of the process: every running adapter registers its token with it."""


def translate(
    exc: tg.TelegramError, sent: Sequence[str], action: str, *, token: str
) -> PlatformError:
    """The ``adapters.base`` error for a PTB error, its text free of ``token`` (and of every
    token registered with ``REDACTOR``)."""
    error = _translate(exc, sent, action)
    message = str(error).replace(token, "<token>")
    if message != str(error):
        error.args = (message,)
    return error


async def call(request: Awaitable[_T], action: str, *, token: str) -> _T:
    """``await request``, a PTB error raised as its translation (cause suppressed)."""
    try:
        return await request
    except tg.TelegramError as exc:
        raise translate(exc, (), action, token=token) from None


def _translate(exc: tg.TelegramError, sent: Sequence[str], action: str) -> PlatformError:
    text = f"telegram {action}: {REDACTOR.redact(exc.message)}"
    if isinstance(exc, tg.RetryAfter):
        seconds = retry_after(exc)
        return RateLimited(
            f"telegram {action}: flood control, retry in {seconds:g} s", seconds, sent=sent
        )
    if isinstance(exc, tg.InvalidToken):
        return Forbidden(f"telegram {action}: the bot token was rejected (Unauthorized)", sent=sent)
    if isinstance(exc, tg.ChatMigrated):
        return NotFound(
            f"telegram {action}: the group is now the supergroup {exc.new_chat_id}", sent=sent
        )
    if isinstance(exc, tg.Forbidden):
        return Forbidden(text, sent=sent)
    if isinstance(exc, tg.BadRequest):  # before NetworkError: BadRequest subclasses it
        lowered = exc.message.lower()
        if any(gone in lowered for gone in _GONE):
            return NotFound(text, sent=sent)
        return BadRequest(text, sent=sent)
    if isinstance(exc, tg.EndPointNotFound):
        return BadRequest(text, sent=sent)
    return Unavailable(text, sent=sent)  # NetworkError, TimedOut, Conflict, bad responses
