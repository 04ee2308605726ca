"""Telegram: python-telegram-bot behind the ``Adapter`` protocol.

``normalize`` (Update -> InboundMessage), ``render`` (OutboundMessage -> HTML chunks with a
plain fallback, via ``markup.markdown_to_html``) and ``TelegramAdapter`` (``client``: the
Application's lifecycle), which updates reach through ``polling`` or ``webhook`` and which
sends with ``sending`` and ``menus``, its errors translated by ``errors``; ``valid_secret``
says whether Telegram accepts a webhook secret (the config check asks it). Only this package
imports ``telegram``.

``PTB_TIMEDELTA``: since 22.2, PTB emits a ``PTBDeprecationWarning`` (a ``UserWarning``, so
printed in production and an error under ``pytest -W error``) every time it *builds* a
``RetryAfter`` or reads a duration attribute, unless the process opts in to the
``timedelta`` attributes of its next major version. This package reads only
``RetryAfter.retry_after`` and accepts both forms, so it opts in (unless the environment
already says otherwise).
"""

import os

os.environ.setdefault("PTB_TIMEDELTA", "true")

from adapters.telegram.client import TelegramAdapter
from adapters.telegram.normalize import normalize
from adapters.telegram.probe import probe
from adapters.telegram.render import Chunk, render
from adapters.telegram.webhook import valid_secret

__all__ = ["Chunk", "TelegramAdapter", "normalize", "probe", "render", "valid_secret"]
