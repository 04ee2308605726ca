"""The contract between the gateway and a platform adapter, and the errors adapters raise.

An adapter owns one platform client's lifecycle. The gateway gives it a ``sink`` and from
then on only talks to it through this protocol::

    await adapter.start(sink)          # connect; every normalised update goes to `sink`
    ids = await adapter.send(outbound) # one OutboundMessage -> one or more platform messages
    await adapter.edit(chat_id, message_id, text, buttons=...)  # change a message it sent
    await adapter.typing(chat_id, thread_id)
    await adapter.set_commands(menu, admins=["123"])
    chat_id = await adapter.private_chat(user_id)   # where an answer only they may read goes
    await adapter.stop()

``send`` renders and splits the text itself (the platform's limit, fences intact) and returns
the ids of the messages it sent, in order. After each chunk the platform confirmed it awaits
``delivered(done, total)`` when given one (``Delivered``): the outbox records the progress,
so a reply a crash cut off mid-way is resumed after a restart rather than sent again. It
raises only the ``PlatformError`` family below, never a library exception, so the gateway's
delivery logic stays platform-neutral:

- ``RateLimited(retry_after)``: flood control; the gateway waits that long *for that chat
  only* and retries. ``sent`` holds the ids of chunks already delivered, so a retry sends
  only the rest (``OutboundMessage.skip_chunks``).
- ``Forbidden`` (blocked by the user, kicked from the group), ``NotFound`` (chat gone):
  permanent; the reply is dropped and logged.
- ``Unavailable``: network trouble or a 5xx; retried with back-off.
- ``BadRequest``: the platform refused the content itself; not retried.

Adapters call ``sink`` from their own tasks; ``sink`` returns quickly (it authorizes,
deduplicates and queues, it does not run the turn).

One bad update never stops a platform: an update the library cannot parse, or that
``normalize`` cannot map, is confirmed, skipped, logged and counted in ``skipped`` (see
``adapters.skips``), which the gateway samples at scrape time; the next update is handled
as if nothing happened. (A counter read through the protocol, not a callback into the
gateway: adapters import nothing of the gateway's.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from adapters.messages import Button, InboundMessage, OutboundMessage
from adapters.skips import SkipReason

__all__ = [
    "Adapter",
    "BadRequest",
    "BotCommand",
    "Delivered",
    "Forbidden",
    "NotFound",
    "PlatformError",
    "RateLimited",
    "Sink",
    "Unavailable",
]

Sink = Callable[[InboundMessage], Awaitable[None]]

Delivered = Callable[[int, int], Awaitable[None]]
"""``send``'s progress report, awaited after each chunk the platform confirmed: the chunks
of the reply delivered so far (``skip_chunks`` included) and the chunks it has in all."""


@dataclass(frozen=True, slots=True)
class BotCommand:
    """One entry of a platform's command menu. ``args``: it takes text after its name (a
    Discord application command gets its optional ``args`` option only then); ``admin``:
    only admins may run it, so a platform that can narrow its menu shows it to them alone
    (Telegram: in the admins' own chats; Discord: to members with Administrator)."""

    name: str
    description: str
    args: bool = True
    admin: bool = False


class PlatformError(Exception):
    """A platform refused or failed a request; ``sent`` = ids of chunks already delivered."""

    def __init__(self, message: str, *, sent: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.sent: tuple[str, ...] = tuple(sent)


class RateLimited(PlatformError):
    def __init__(self, message: str, retry_after: float, *, sent: Sequence[str] = ()) -> None:
        super().__init__(message, sent=sent)
        self.retry_after = retry_after


class Forbidden(PlatformError):
    pass


class NotFound(PlatformError):
    pass


class Unavailable(PlatformError):
    pass


class BadRequest(PlatformError):
    pass


class Adapter(Protocol):
    platform: str
    """``telegram`` or ``discord``: the prefix of identities and session keys."""

    @property
    def connected(self) -> bool:
        """True while the client is connected and receiving updates."""
        ...

    @property
    def skipped(self) -> Mapping[SkipReason, int]:
        """Updates received and skipped since the adapter was made, by reason
        (``unparsable`` | ``unnormalisable``); never reset."""
        ...

    async def start(self, sink: Sink) -> None:
        """Connect and begin delivering updates to ``sink``; returns once connected."""
        ...

    async def stop(self) -> None:
        """Stop receiving updates and close the client (idempotent)."""
        ...

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        """Render, split and send; the platform ids of the messages sent. ``delivered`` is
        awaited after each chunk, before the next one is sent."""
        ...

    async def edit(
        self,
        chat_id: str,
        message_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        buttons: tuple[Button, ...] = (),
    ) -> None:
        """Replace the text (plain, one message's worth) and the buttons of a message the
        bot sent: ``buttons`` empty removes them all. An edit that changes nothing
        succeeds. Errors as for ``send`` (``NotFound``: the message is gone or cannot be
        edited any more)."""
        ...

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        """Show the typing indicator once (the gateway repeats it during a turn)."""
        ...

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        """Register the command menu (Telegram setMyCommands, Discord app commands);
        ``admins``: the user ids on this platform who may see the admin commands."""
        ...

    async def dismiss(self, message: InboundMessage) -> None:
        """The gateway will not answer ``message`` (a blocked person, a stranger in a
        group, nothing to say yet): release what the platform holds open for it, sending
        nothing (Discord: the deferred "thinking…" of a slash command is deleted, so it
        neither lingers nor fails as "the application did not respond"). Best effort."""
        ...

    async def private_chat(self, user_id: str) -> str:
        """The chat id of ``user_id``'s private chat with the bot, for an answer nobody
        else may read (Telegram: their user id; Discord: their DM channel, opened if
        needed). Raises ``Forbidden`` when the platform has no such chat for them; whether
        the bot may write there shows when a send is refused with ``Forbidden``."""
        ...
