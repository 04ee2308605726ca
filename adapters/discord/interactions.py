"""Discord interactions: slash commands and button presses, from the 3-second
acknowledgement to the last answer through their token.

In. A slash command is deferred at once (Discord's 3-second rule; ephemeral in guilds, so
command output is private to whoever asked), remembered, and handed on as
``InboundMessage(is_command=True, text="/name args", message_id=<interaction id>)``. A
button press is acknowledged at once as a deferred update (``components.acknowledge``),
remembered like a command (its answers go as followups, ephemeral in a guild) and handed on
as a press. What ``normalize`` cannot map is skipped and counted (``intake.normalised``)
before anything is acknowledged: it will never be answered.

Out. ``answer`` fills a command's deferred response with the first unit of a reply and
sends the rest as followups (ephemeral in guilds); interaction responses carry no nonce.
Interaction tokens live 15 minutes: past ``ttl``, when Discord says the token is gone
(``TOKEN_GONE``), or when the acknowledgement itself failed, the rest goes as normal
messages (``sending.post``): to the channel for a DM command, to the asker's DM for a guild
command (its output was meant to be private, so it never falls back to the public channel).

Dismiss. A command the gateway will not answer has its deferred "thinking…" deleted, so it
neither lingers nor fails as "the application did not respond" (a press was acknowledged
without one: nothing to undo).

At most ``MAX_PENDING`` interactions are remembered, none past ``ttl``; ``components.edit``
reads them too (an edit through a fresh press on the message).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
import discord

from adapters.discord.components import Deferred, acknowledge
from adapters.discord.errors import NO_PINGS, TOKEN_GONE, snowflake, translate
from adapters.discord.intake import normalised
from adapters.discord.normalize import normalize_interaction, normalize_press
from adapters.discord.sending import Progress, Unit, content, post, view
from adapters.messages import InboundMessage, OutboundMessage
from adapters.skips import Skips

__all__ = ["MAX_PENDING", "Interactions"]

log = logging.getLogger(__name__)

MAX_PENDING = 1000


class Interactions:
    """The interactions one adapter acknowledged and may still answer, by interaction id."""

    def __init__(
        self,
        *,
        skips: Skips,
        deliver: Callable[[InboundMessage], Awaitable[None]],
        ttl: float,
        timeout: float,  # each request's bound
    ) -> None:
        self.pending: dict[int, Deferred] = {}
        self._skips = skips
        self._deliver = deliver
        self._ttl = ttl
        self._timeout = timeout

    def find(self, message_id: str | None) -> Deferred | None:
        """The interaction ``message_id`` names (an answer's ``reply_to_message_id``)."""
        key = snowflake(message_id)
        return self.pending.get(key) if key is not None else None

    def remember(self, pending: Deferred) -> None:
        now = time.monotonic()
        for key in [k for k, p in self.pending.items() if now - p.created > self._ttl]:
            del self.pending[key]
        while len(self.pending) >= MAX_PENDING:
            del self.pending[next(iter(self.pending))]
        self.pending[pending.interaction.id] = pending

    def clear(self) -> None:
        self.pending.clear()

    # -- in ---------------------------------------------------------------------------------

    async def on_command(
        self, interaction: discord.Interaction[Any], name: str, args: str | None
    ) -> None:
        """A slash command: deferred at once, remembered, then normalised for the sink."""
        inbound = normalised(  # first: what we cannot answer is not deferred
            self._skips, "INTERACTION_CREATE", interaction.id,
            lambda: normalize_interaction(interaction, name=name, args=args),
        )  # fmt: skip
        if inbound is None:
            return
        ephemeral = interaction.guild_id is not None
        deferred = False
        try:
            async with asyncio.timeout(self._timeout):
                await interaction.response.defer(ephemeral=ephemeral, thinking=True)
            deferred = True
        except (discord.DiscordException, aiohttp.ClientError, TimeoutError, OSError) as exc:
            log.warning("discord: could not defer /%s: %s", name, translate(exc, ()) or exc)
        # remembered even when the defer failed: the answer then takes the fallback route,
        # which keeps guild command output out of the public channel
        self.remember(Deferred(interaction, time.monotonic(), ephemeral, deferred))
        await self._deliver(inbound)

    async def on_press(self, interaction: discord.Interaction[Any], bot_id: int) -> None:
        """A button press: acknowledged at once, remembered (answers go as followups, the
        edit of its message through its token), then normalised for the sink."""
        inbound = normalised(  # first: what we cannot answer is not acknowledged
            self._skips, "INTERACTION_CREATE", interaction.id,
            lambda: normalize_press(interaction, bot_id=bot_id),
        )  # fmt: skip
        if inbound is None:
            return
        deferred = await acknowledge(interaction, self._timeout)
        ephemeral = interaction.guild_id is not None
        self.remember(Deferred(interaction, time.monotonic(), ephemeral, deferred, True))
        await self._deliver(inbound)

    async def dismiss(self, message: InboundMessage) -> None:
        """A slash command the gateway will not answer: its deferred "thinking…" is
        deleted (a press was acknowledged without one: nothing to undo)."""
        pending = self.pending.get(snowflake(message.message_id) or 0)
        if pending is None or pending.original_used or message.is_callback:
            return
        del self.pending[pending.interaction.id]
        if not pending.deferred:
            return
        try:
            async with asyncio.timeout(self._timeout):
                await pending.interaction.delete_original_response()
        except Exception as exc:  # best effort: it expires by itself
            log.debug("discord: could not withdraw a deferred answer: %s", exc)

    # -- out --------------------------------------------------------------------------------

    async def answer(
        self,
        client: discord.Client,
        pending: Deferred,
        chunks: Sequence[Unit],
        message: OutboundMessage,
        progress: Progress,
    ) -> list[str]:
        """Send ``chunks`` as the answer to ``pending``; the ids delivered."""
        sent, rest = progress.sent, self._fallback
        interaction = pending.interaction
        async with pending.lock:
            for index, chunk in enumerate(chunks):
                expired = time.monotonic() - pending.created > self._ttl
                if expired or not pending.deferred:
                    return await rest(client, pending, chunks[index:], message, progress)
                buttons = view(message.buttons, index == len(chunks) - 1)
                try:
                    async with asyncio.timeout(self._timeout):
                        if not pending.original_used and isinstance(chunk, str):
                            posted: discord.Message = await interaction.edit_original_response(
                                content=chunk, allowed_mentions=NO_PINGS, **buttons
                            )
                            pending.original_used = True
                        else:
                            posted = await interaction.followup.send(
                                **content(chunk),
                                ephemeral=pending.ephemeral,
                                allowed_mentions=NO_PINGS,
                                wait=True,
                                **buttons,
                            )
                except discord.HTTPException as exc:
                    if exc.code in TOKEN_GONE:
                        return await rest(client, pending, chunks[index:], message, progress)
                    raise (translate(exc, sent) or exc) from exc
                except Exception as exc:
                    raise (translate(exc, sent) or exc) from exc
                await progress.done(posted.id)
        return sent

    async def _fallback(
        self, client: discord.Client, pending: Deferred, chunks: Sequence[Unit],
        message: OutboundMessage, progress: Progress,
    ) -> list[str]:  # fmt: skip
        """The interaction cannot answer (token expired or gone, or never deferred): a DM
        interaction continues in its channel, a guild one (private output) in the asker's DM."""
        self.pending.pop(pending.interaction.id, None)
        if not pending.ephemeral:
            return await post(
                client, int(message.chat_id), chunks, None, progress,
                buttons=message.buttons, timeout=self._timeout,
            )  # fmt: skip
        try:
            async with asyncio.timeout(self._timeout):
                dm = await pending.interaction.user.create_dm()
        except Exception as exc:
            raise (translate(exc, progress.sent) or exc) from exc
        return await post(
            client, dm.id, chunks, None, progress, buttons=message.buttons, timeout=self._timeout
        )
