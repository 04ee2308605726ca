"""Logging for ``mnemo run``: one format, and no secret ever reaches a log line.

``install(secrets)`` configures the root logger and attaches ``Redactor`` to its handler:
every record is formatted first, then each known secret (bot tokens, the API key, the
webhook secret) is replaced by ``[redacted]``. Filtering the *formatted* text catches
secrets wherever they hide: in a URL httpx logs (``/bot<token>/getUpdates``), in an
exception's text, in a traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

__all__ = ["Redactor", "install"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class Redactor(logging.Formatter):
    def __init__(self, secrets: Iterable[str], fmt: str = FORMAT) -> None:
        super().__init__(fmt)
        # longest first, so a secret that contains another is replaced whole
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return text


def install(secrets: Iterable[str], *, level: int = logging.INFO) -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Redactor(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # httpx logs every request URL at INFO; Telegram's carry the token (redacted anyway)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return handler
