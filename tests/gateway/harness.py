"""An in-process adapter for the gateway's own logic (auth, lanes, commands, outbox).

``ChatAdapter`` implements the ``Adapter`` protocol without a platform: a test ``say``s
messages into the gateway's sink and reads what came back from ``sent``. No wire exists
here to fake; the over-the-wire tests with the real PTB and discord.py clients live in
``tests/e2e``. Errors can be injected per chat to exercise the outbox's policy.

Buttons behave as on the platforms: ``shown`` holds every sent message as it is now (its
text and buttons, on the last chunk; ``edit`` changes them and records itself in
``edits``), and ``press`` delivers a press of a button a message shows *now*, with the
message as it is (``InboundMessage.pressed``), from whoever the test says.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Self, TypedDict, Unpack

from adapters.base import BotCommand, Delivered, PlatformError, Sink
from adapters.chunking import split_message
from adapters.messages import Button, ChatType, Identity, InboundMessage, OutboundMessage, Pressed
from adapters.skips import SKIP_REASONS, SkipReason


@dataclass(slots=True)
class Sent:
    message: OutboundMessage
    chunks: list[str]
    at: float


@dataclass(slots=True)
class Shown:
    """A message the bot sent, as it is now."""

    chat_id: str
    text: str
    buttons: tuple[Button, ...]


@dataclass(slots=True)
class Edited:
    chat_id: str
    message_id: str
    text: str
    buttons: tuple[Button, ...]


class Seen(TypedDict, total=False):
    """Where and how a message is seen: ``ChatAdapter.message``'s keywords a press takes."""

    name: str
    chat: str | None
    chat_type: ChatType
    mention: bool
    update_id: str | None
    thread: str | None


class InChat(TypedDict):
    """The chat a message is in, to pass to ``say`` or ``message`` as ``**`` (a group)."""

    chat: str
    chat_type: ChatType


class Said(Seen, total=False):
    """Every keyword of ``ChatAdapter.message``: what ``say`` takes."""

    user: str
    command: bool | None
    callback: bool
    reply_to: str | None
    pressed: Pressed | None


@dataclass
class ChatAdapter:
    platform: str = "telegram"
    limit: int = 4096
    sent: list[Sent] = field(default_factory=list)
    typing_calls: list[str] = field(default_factory=list)
    dismissed: list[str] = field(default_factory=list)  # dedup keys of unanswered messages
    commands: list[BotCommand] = field(default_factory=list)
    menu_admins: list[str] = field(default_factory=list)
    failures: dict[str, list[PlatformError]] = field(default_factory=dict)
    shown: dict[str, Shown] = field(default_factory=dict)
    edits: list[Edited] = field(default_factory=list)
    sink: Sink | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    _updates: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def connected(self) -> bool:
        return self.sink is not None

    @property
    def skipped(self) -> dict[SkipReason, int]:
        """Nothing reaches it over a wire, so nothing is ever skipped."""
        return dict.fromkeys(SKIP_REASONS, 0)

    async def start(self, sink: Sink) -> None:
        self.sink = sink

    async def stop(self) -> None:
        self.sink = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        queue = self.failures.get(message.chat_id)
        if queue:
            raise queue.pop(0)
        every = split_message(message.text, self.limit)
        chunks = every[message.skip_chunks :]
        self.sent.append(Sent(message, chunks, asyncio.get_running_loop().time()))
        self._changed.set()
        ids = [str(next(self._ids)) for _ in chunks]
        for index, (chunk, message_id) in enumerate(zip(chunks, ids, strict=True)):
            last = index == len(chunks) - 1
            self.shown[message_id] = Shown(message.chat_id, chunk, message.buttons if last else ())
            if delivered is not None:
                await delivered(message.skip_chunks + index + 1, len(every))
        return ids

    async def edit(
        self,
        chat_id: str,
        message_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        buttons: tuple[Button, ...] = (),
    ) -> None:
        queue = self.failures.get(chat_id)
        if queue:
            raise queue.pop(0)
        self.shown[message_id] = Shown(chat_id, text, buttons)
        self.edits.append(Edited(chat_id, message_id, text, buttons))
        self._changed.set()

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        self.typing_calls.append(chat_id)

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        self.commands = list(commands)
        self.menu_admins = list(admins)

    async def dismiss(self, message: InboundMessage) -> None:
        self.dismissed.append(message.dedup_key)

    async def private_chat(self, user_id: str) -> str:
        return user_id  # as on Telegram: a person's private chat has their id

    # -- test side ------------------------------------------------------------------------

    def message(
        self,
        text: str,
        *,
        user: str = "1",
        name: str = "Ada",
        chat: str | None = None,
        chat_type: ChatType = "dm",
        mention: bool = False,
        command: bool | None = None,
        callback: bool = False,
        update_id: str | None = None,
        thread: str | None = None,
        reply_to: str | None = None,
        pressed: Pressed | None = None,
    ) -> InboundMessage:
        update = update_id or str(next(self._updates))
        return InboundMessage(
            platform=self.platform,
            chat_id=chat or user,
            chat_type=chat_type,
            sender=Identity(self.platform, user, name),
            text=text,
            message_id=f"m{update}",
            timestamp=datetime.now(UTC),
            thread_id=thread,
            update_id=update,
            mentions_bot=mention,
            is_command=text.startswith("/") if command is None else command,
            is_callback=callback,
            reply_to_message_id=reply_to,
            pressed=pressed,
        )

    async def say(self, text: str, **kwargs: Unpack[Said]) -> InboundMessage:
        message = self.message(text, **kwargs)
        await self.deliver(message)
        return message

    async def deliver(self, message: InboundMessage) -> None:
        assert self.sink is not None, "start the gateway first"
        await self.sink(message)

    def card(self, label: str, *, chat: str | None = None) -> str:
        """The id of the latest message (in ``chat``) that shows a button ``label`` now."""
        for message_id, shown in reversed(self.shown.items()):
            if (chat is None or shown.chat_id == chat) and label in dict(shown.buttons):
                return message_id
        raise AssertionError(f"no message shows a button {label!r}")

    async def press(
        self, label: str, *, on: str | None = None, user: str = "1", **kwargs: Unpack[Seen]
    ) -> InboundMessage:
        """``user`` presses the button ``label`` of message ``on`` (default: the latest
        that shows one), as the platforms deliver it: in that message's chat, its data as
        the text, the message as it is now."""
        message_id = on or self.card(label)
        shown = self.shown[message_id]
        data = dict(shown.buttons)[label]
        kwargs.setdefault("chat", shown.chat_id)
        press = self.message(
            data,
            user=user,
            command=False,
            callback=True,
            reply_to=message_id,
            pressed=Pressed(shown.text, shown.buttons),
            **kwargs,
        )
        await self.deliver(press)
        return press

    async def wait_edits(self, count: int, *, within: float = 5) -> None:
        async def until() -> None:
            while len(self.edits) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), within)

    def texts(self, chat: str | None = None) -> list[str]:
        return ["\n".join(s.chunks) for s in self.sent if chat is None or s.message.chat_id == chat]

    async def wait_sent(self, count: int, *, chat: str | None = None, within: float = 5) -> None:
        async def until() -> None:
            while len(self.texts(chat)) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), within)
