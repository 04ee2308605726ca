"""Discord events that cannot be used: skipped and counted, never the end of the connection.

What discord.py 2.7 does with a malformed event (read in its source; each case is driven
over the wire in ``tests/adapters/discord/test_client.py``):

- Every DISPATCH goes from ``DiscordWebSocket.received_message`` straight to
  ``ConnectionState.parsers[event](data)``, with nothing around it. A parser that raises (a
  MESSAGE_CREATE whose author is not an object, whose id is not a number, without a
  ``channel_id``) leaves ``poll_event`` and then ``Client.connect``, whose except clauses
  name only connection errors: the connect task ends for good and no event is read again,
  while the heartbeat thread keeps the socket open, so ``connected`` went on saying True.
  ``Client.on_error`` never sees it (it wraps event handlers, not parsers). So
  ``guard_parsers`` wraps every parser of that dict (every new socket reads the same one:
  ``ws._discord_parsers = client._connection.parsers``): an exception there is logged,
  counted ``unparsable`` and the event dropped, and the socket reads on. The sequence number
  was taken before the parser ran, so the event counts as received and a RESUME never
  replays it. READY is left alone: without it there is no session, and ``start`` should
  fail at once with the cause. ``Client._connection`` is private; it is the only place the
  parsers can be reached, and the tests fail if discord.py moves them.
- An INTERACTION_CREATE that parses into an ``Interaction`` goes to
  ``CommandTree._from_interaction``, which runs ``_call`` in a task that catches only
  ``AppCommandError``: data it cannot read (no command name, no user) ended that task with
  asyncio's "Task exception was never retrieved", and nothing else. ``Tree._call`` catches
  what is not an ``AppCommandError`` and counts it ``unparsable`` (errors of our own command
  callbacks arrive wrapped in ``CommandInvokeError``, which is one, and go to ``on_error``).
- An event discord.py reads but ``normalize`` cannot map (a message without an author,
  content that is not text) raised inside ``on_message``, where ``Client._run_event`` logs
  "Ignoring exception in on_message" and goes on: nothing counted it. The adapter catches it
  around ``normalize`` and counts it ``unnormalisable``.

``Client`` hands MESSAGE_CREATE and button presses (component interactions) to the
adapter (``ShardedClient`` is the same over discord.py's ``AutoShardedClient``: one gateway
connection per shard this replica runs); ``Tree`` also answers a command Discord still
lists but we no longer hold (a restart before ``set_commands``) like a known one, through
``on_unknown``; ``normalised`` is the adapter's guard around ``normalize``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import discord
from discord import app_commands

from adapters.skips import Skips, label

__all__ = ["Client", "ShardedClient", "Tree", "event_name", "guard_parsers", "normalised"]

_T = TypeVar("_T")

Parser = Callable[[Any], None]
OnUnknown = Callable[[discord.Interaction[Any], str, str | None], Awaitable[None]]
_UNGUARDED = frozenset({"READY"})


def event_name(event: str, data: object, sequence: int | None = None) -> str:
    """``MESSAGE_CREATE #12 (id 1234)`` for a log line: nothing from inside the payload but
    its id, and that only when it is a snowflake."""
    found = data.get("id") if isinstance(data, dict) else None
    snowflake = str(found) if isinstance(found, int | str) and str(found).isdigit() else None
    text = label(event) or "an event"
    if sequence is not None:
        text += f" #{sequence}"
    if snowflake is not None and len(snowflake) <= 20:
        text += f" (id {snowflake})"
    return text


def guard_parsers(client: discord.Client, skips: Skips) -> None:
    """Wrap each parser of ``client`` so that one which raises skips its event instead of
    ending the connection (before ``connect``: every socket reads the same dict)."""

    def sequence() -> int | None:
        ws = client.ws
        return ws.sequence if ws is not None else None

    parsers: dict[str, Parser] = client._connection.parsers  # private: see the docstring
    for event, parser in list(parsers.items()):
        if event not in _UNGUARDED:
            parsers[event] = _guarded(event, parser, skips, sequence)


def _guarded(
    event: str, parser: Parser, skips: Skips, sequence: Callable[[], int | None]
) -> Parser:
    def parse(data: Any) -> None:
        try:
            parser(data)
        except Exception as exc:
            skips.skip(event_name(event, data, sequence()), "unparsable", exc)

    return parse


def normalised(skips: Skips, event: str, event_id: int, normalize: Callable[[], _T]) -> _T | None:
    """``normalize()``, or None when it raises: the event is skipped and counted
    ``unnormalisable`` (discord.py could read it; we cannot map it)."""
    try:
        return normalize()
    except Exception as exc:
        skips.skip(event_name(event, {"id": event_id}), "unnormalisable", exc)
        return None


class Client(discord.Client):
    """``discord.Client`` whose messages go to ``on_message`` and whose button presses
    (component interactions; commands are the tree's) go to ``on_press`` (the adapter's)."""

    def __init__(
        self,
        on_message: Callable[[discord.Message], Awaitable[None]],
        on_press: Callable[[discord.Interaction[Any]], Awaitable[None]],
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self._on_message = on_message
        self._on_press = on_press

    async def on_message(self, message: discord.Message) -> None:
        await self._on_message(message)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        if interaction.type is discord.InteractionType.component:
            await self._on_press(interaction)


class ShardedClient(Client, discord.AutoShardedClient):
    """``Client`` over ``AutoShardedClient(shard_ids=..., shard_count=...)``: one gateway
    connection per shard id, and discord.py routes each guild's requests (chunking,
    presence) to the connection of the shard that owns it, ``(guild_id >> 22) % count``."""


class Tree(app_commands.CommandTree[Any]):
    """The adapter's command tree: unreadable interactions are skipped and counted, and
    commands we no longer hold still reach ``on_unknown``."""

    def __init__(self, client: discord.Client, *, skips: Skips, on_unknown: OnUnknown) -> None:
        super().__init__(client)
        self._skips = skips
        self._on_unknown = on_unknown

    async def _call(self, interaction: discord.Interaction[Any]) -> None:
        try:
            await super()._call(interaction)
        except app_commands.AppCommandError:
            raise  # the tree's own path: on_error
        except Exception as exc:
            name = event_name("INTERACTION_CREATE", {"id": interaction.id})
            self._skips.skip(name, "unparsable", exc)

    async def on_error(
        self, interaction: discord.Interaction[Any], error: app_commands.AppCommandError
    ) -> None:
        """A command Discord still lists but we no longer hold is answered like a known
        one; other errors are logged (discord.py's default)."""
        data: Any = interaction.data or {}
        if isinstance(error, app_commands.CommandNotFound) and "name" in data:
            options = {o.get("name"): o.get("value") for o in data.get("options", [])}
            args = options.get("args")
            await self._on_unknown(
                interaction, str(data["name"]), args if isinstance(args, str) else None
            )
            return
        await super().on_error(interaction, error)
