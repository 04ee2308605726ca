"""One raw Bot API update (a JSON object) -> a PTB ``Update``, or why it cannot be one.

``Bot.get_updates`` parses the whole result list at once (``Update.de_list``): one element
PTB cannot read (``"date": "yesterday"``, a ``chat`` that is not an object) fails the batch,
PTB logs the entire raw batch at CRITICAL (what people wrote, in the log), and since the
offset never moves the same batch fails on every poll: the bot is deaf for good. The
adapter therefore takes the raw list and reads each element here; the webhook reads its one
body the same way.

- ``update_id(data)``: the id when it is an integer (a bool is not), else None. PTB itself
  accepts any value (``"update_id": "ten"``), but the offset and deduplication need a number.
- ``read(data, bot)``: ``Update.de_json`` and ExtBot's ``insert_callback_data`` (what
  ``ExtBot.get_updates`` does per update); raises ``Unusable("update_id")`` for an update
  without a usable id and lets whatever PTB raises through.
- ``name(data)``: ``update 700000002 (message)`` for a log line: the id and the kind of
  update (its field besides ``update_id``), nothing from inside it; of raw JSON or of an
  ``Update``.
"""

from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.ext import ExtBot

from adapters.skips import Unusable, label

__all__ = ["name", "read", "update_id"]


def update_id(data: object) -> int | None:
    if not isinstance(data, dict):
        return None
    value = data.get("update_id")
    return value if type(value) is int else None


def _kind(data: object) -> str | None:
    if not isinstance(data, dict):
        return None
    return next((label(key) or "?" for key in data if key != "update_id"), None)


def name(data: object) -> str:
    """``update 700000002 (message)``; ``an update without an update_id (message)``.
    ``data`` is the raw JSON, or an ``Update`` PTB has read."""
    if isinstance(data, Update):
        found: int | None = data.update_id if type(data.update_id) is int else None
        kind = next((str(k) for k in Update.ALL_TYPES if getattr(data, k, None) is not None), None)
    else:
        found, kind = update_id(data), _kind(data)
    head = f"update {found}" if found is not None else "an update without an update_id"
    return f"{head} ({kind})" if kind else head


def read(data: object, bot: ExtBot[Any]) -> Update:
    """The ``Update`` in ``data``; raises when PTB cannot read it or it has no usable id."""
    if not isinstance(data, dict) or update_id(data) is None:
        raise Unusable("update_id")
    update = Update.de_json(data, bot)
    bot.insert_callback_data(update)
    return update
