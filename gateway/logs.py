"""Logging for ``mnemo run``: text or JSON lines, and no secret ever reaches a log line.

``install(secrets, level=..., fmt="text"|"json")`` configures the root logger with one
stderr handler whose formatter redacts after formatting:

- every configured secret (bot tokens, the API key, the webhook secret) is replaced by
  ``[redacted]`` wherever it appears — in a URL httpx logs (``/bot<token>/getUpdates``), in
  an exception's text, in a traceback;
- anything shaped like a credential is replaced too, with the scanner's own credential
  patterns (``memory.scan.scanner``'s ``hardcoded-secret``: ``sk-…`` keys, Telegram bot tokens,
  GitHub/AWS/Slack tokens, private-key blocks, ``password=…``), so a secret nobody
  configured (one a person pasted into a chat, say) is not written to disk either.

``fmt="json"`` writes one JSON object per line: ``ts`` (ISO 8601, UTC), ``level``,
``logger``, ``message`` and, for an exception, ``exc`` — each field redacted.

Library lines that are not news are kept out of the INFO log (``quiet_libraries``, part of
``install``): each request the HTTP clients make (python-telegram-bot polls through
``httpx``, the openai SDK talks through ``httpx``/``httpx2``: one INFO line per request
otherwise) and the platform libraries' own start and stop lines, which the adapters restate
once in their own words, are logged at DEBUG instead (``--verbose``, ``ops.log_level:
debug``); discord.py's warnings that voice is not supported are dropped, as mnemo never
joins a voice channel.

A log message often carries text from outside (a platform's error, a name, a file name).
It can never forge a line or drive a terminal: in text logs every control character of
the message (a newline included) is written as an escape (``\n``, ``\x1b``), and in both
formats format characters (bidi overrides, zero-width) as ``<U+XXXX>``. One record is one
line; only a traceback, which follows it, spans several.
"""

from __future__ import annotations

import json
import logging
import sys
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from memory.scan import pattern

__all__ = [
    "DEMOTED",
    "DROPPED",
    "JsonFormatter",
    "Redactor",
    "TextFormatter",
    "install",
    "one_line",
    "quiet_libraries",
    "redact",
]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REDACTED = "[redacted]"
_CREDENTIALS = pattern("hardcoded-secret").regex


class Redactor:
    """Replaces known secrets (longest first) and credential-shaped text."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return _CREDENTIALS.sub(REDACTED, text)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    return Redactor(secrets)(text)


def one_line(text: str, *, controls: bool = True) -> str:
    """``text`` with its control characters escaped (``controls``) and its format
    characters (bidi, zero-width, tags) named, so it cannot break or hide a log line."""
    out = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf":
            out.append(f"<U+{ord(char):04X}>")
        elif controls and category == "Cc":
            out.append(repr(char)[1:-1] if char in "\n\r\t" else f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return "".join(out)


class TextFormatter(logging.Formatter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__(FORMAT)
        self.redactor = redactor

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = one_line(record.message)
        return super().formatMessage(record)

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor(super().format(record))


class JsonFormatter(logging.Formatter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, str] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            # JSON escapes control characters itself
            "message": self.redactor(one_line(record.getMessage(), controls=False)),
        }
        if record.exc_info:
            line["exc"] = self.redactor(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False)


#: Library INFO lines logged at DEBUG instead, by logger: the message templates they start
#: with, or None for every INFO line of that logger.
DEMOTED: dict[str, tuple[str, ...] | None] = {
    "httpx": None,  # "HTTP Request: POST …/bot<token>/getUpdates" on every poll
    "httpx2": None,  # the openai SDK's client: one line per model request
    # "telegram: @bot connected (polling)" and "… stopped" say it once
    "telegram.ext.Application": (
        "Application started",
        "Application is stopping",
        "Application.stop() complete",
    ),
    # "discord: connected as …" says it once
    "discord.client": ("logging in using static token",),
    "discord.gateway": ("Shard ID %s has connected to Gateway",),
}
#: Library warnings that do not apply to mnemo, dropped: it never joins a voice channel.
DROPPED: dict[str, tuple[str, ...]] = {
    "discord.client": ("PyNaCl is not installed", "davey is not installed"),
}


class _Quiet(logging.Filter):
    def __init__(self, logger: logging.Logger, demoted: tuple[str, ...] | None) -> None:
        super().__init__()
        self.logger = logger
        self.demoted = demoted
        self.dropped = DROPPED.get(logger.name, ())

    def filter(self, record: logging.LogRecord) -> bool:
        template = str(record.msg)
        if record.levelno == logging.WARNING and template.startswith(self.dropped):
            return False
        if record.levelno == logging.INFO and (
            self.demoted is None or template.startswith(self.demoted)
        ):
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
            return self.logger.isEnabledFor(logging.DEBUG)
        return True


def quiet_libraries() -> None:
    """Put the filters of ``DEMOTED`` and ``DROPPED`` on their loggers (once, however often
    it is called)."""
    for name in DEMOTED.keys() | DROPPED.keys():
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, _Quiet)]:
            logger.removeFilter(old)
        logger.addFilter(_Quiet(logger, DEMOTED.get(name, ())))


def install(
    secrets: Iterable[str],
    *,
    level: int = logging.INFO,
    fmt: Literal["text", "json"] = "text",
) -> logging.Handler:
    redactor = Redactor(secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(redactor) if fmt == "json" else TextFormatter(redactor))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    quiet_libraries()
    return handler
