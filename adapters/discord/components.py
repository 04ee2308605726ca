"""Buttons on Discord: real message components out, presses (component interactions) in,
and edits of a message the bot sent.

Out. ``make_view(buttons)`` turns the gateway's buttons into a ``discord.ui.View``: two to a
row (a choice and its opposite side by side), at most 5 rows (Discord's limit), labels cut
to 80 characters with ``label``, and a button whose data is over Discord's 100-character
``custom_id`` is left out (logged); ``render`` keeps a typed fallback in the text for any
button whose command the text does not already show. The View is *stopped* before it is
sent: discord.py then only serialises it (``Messageable.send``, ``followup.send`` and
``edit_original_response`` store a view for dispatch only when it is not finished), so the
adapter keeps no state per message and a press after a restart is handled the same way.

In. With no View registered, discord.py's ``ConnectionState.parse_interaction_create``
gives a component interaction (type 3) to its view store, which finds nothing and drops
it, and then dispatches ``on_interaction`` for every interaction; the client forwards the
component ones to the adapter, which acknowledges each at once with ``acknowledge``: a
deferred update (callback 6; the button stops loading and nothing changes yet), well
within Discord's 3 seconds, since the gateway decides only when the press reaches the
front of its queue. The press is then normalised (``normalize_press``) for the sink, and
remembered like a deferred command: answers to it go as followups (ephemeral in a guild).

Edit. ``edit`` changes a message with the token of a fresh press on it (PATCH
``@original``: for a press that is the pressed message, and the only way to edit an
ephemeral one), else with ``PATCH /channels/{id}/messages/{id}``; ``make_view(())`` is
None, which removes every button.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import discord

from adapters.discord.errors import NO_PINGS, TOKEN_GONE, translate
from adapters.messages import Button, label

__all__ = ["MAX_CUSTOM_ID", "MAX_ROWS", "Deferred", "acknowledge", "edit", "make_view"]

log = logging.getLogger(__name__)

MAX_CUSTOM_ID = 100
MAX_LABEL = 80
MAX_ROWS = 5
PER_ROW = 2


@dataclass
class Deferred:
    """An interaction the adapter acknowledged and may still answer with its token: a
    slash command (deferred "thinking") or a button press (deferred update)."""

    interaction: discord.Interaction[Any]
    created: float  # time.monotonic()
    ephemeral: bool  # its answers are (a guild command, a press in a guild)
    deferred: bool  # False: the acknowledgement failed, so the token cannot answer
    original_used: bool = False  # answers go as followups (always, for a press)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def make_view(buttons: Sequence[Button]) -> discord.ui.View | None:
    """A stopped View of real buttons (None when there are none to show)."""
    kept = []
    for text, data in buttons:
        if not 1 <= len(data) <= MAX_CUSTOM_ID:
            log.warning("discord: left out the button %r: its data is over 100 characters", text)
            continue
        kept.append((label(text, MAX_LABEL) or data[:MAX_LABEL], data))
    if len(kept) > MAX_ROWS * PER_ROW:
        log.warning("discord: %d buttons; the first %d are shown", len(kept), MAX_ROWS * PER_ROW)
        kept = kept[: MAX_ROWS * PER_ROW]
    if not kept:
        return None
    view = discord.ui.View(timeout=None)
    for index, (text, data) in enumerate(kept):
        style = discord.ButtonStyle.primary if index % 2 == 0 else discord.ButtonStyle.secondary
        view.add_item(
            discord.ui.Button(label=text, custom_id=data, style=style, row=index // PER_ROW)
        )
    view.stop()
    return view


async def acknowledge(interaction: discord.Interaction[Any], timeout: float) -> bool:  # noqa: ASYNC109
    """Defer a press as an update of its message (callback 6); False when that failed."""
    try:
        async with asyncio.timeout(timeout):
            await interaction.response.defer()
    except (discord.DiscordException, aiohttp.ClientError, TimeoutError, OSError) as exc:
        log.warning("discord: could not acknowledge a press: %s", translate(exc, ()) or exc)
        return False
    return True


async def edit(
    client: discord.Client,
    channel_id: int,
    message_id: int,
    text: str,
    buttons: Sequence[Button],
    *,
    presses: dict[int, Deferred],
    ttl: float,
    timeout: float,  # noqa: ASYNC109
) -> None:
    """Replace the message's content and buttons: through the newest press on it among
    ``presses`` younger than ``ttl`` whose token still works, else through the channel."""
    view = make_view(buttons)
    fresh = time.monotonic() - ttl
    press = next(
        (
            p
            for p in reversed(presses.values())
            if p.deferred and p.created > fresh and p.interaction.message is not None
            and p.interaction.message.id == message_id
        ),
        None,
    )  # fmt: skip
    try:
        async with asyncio.timeout(timeout):
            if press is not None:
                try:
                    async with press.lock:
                        await press.interaction.edit_original_response(
                            content=text, view=view, allowed_mentions=NO_PINGS
                        )
                    return
                except discord.HTTPException as exc:
                    if exc.code not in TOKEN_GONE:
                        raise
            message = client.get_partial_messageable(channel_id).get_partial_message(message_id)
            await message.edit(content=text, view=view, allowed_mentions=NO_PINGS)
    except Exception as exc:
        raise (translate(exc, ()) or exc) from exc
