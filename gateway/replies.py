"""What the gateway says, and where: replies in the chat, answers only the asker may read,
and the notices nobody asked for (a restart, an approval, a review's writes).

Everything goes through the outbox (persisted, then sent). Where it goes is decided here:

- ``to`` answers in the chat a message came from (as a reply to it when asked).
- ``private`` writes to someone's private chat with the bot (``Adapter.private_chat``):
  the asker of an answer that carries their data, an admin told of a pairing request. It
  says ``failed`` when the platform has no such chat for them or will not let the bot
  write there (on Telegram, until they have started the bot).
- ``command`` sends a command's answer: in a group, one that ``commands.answered_privately``
  marks goes to the asker alone, and the group sees only that it did ("I've answered you
  in a private chat", or how to open one), never its content; a platform that already
  shows the answer to the asker only (a Discord slash command in a guild) keeps it there.
- ``staged`` shows, after a turn's reply, the memory writes it staged for approval, with
  their content and a pair of buttons each (``gateway.approvals``), where their store's
  owner reads them: one's own in the chat if it is private, else privately (or, when the
  bot cannot write there, a hint in the chat without the content); a chat's own store's
  in the group, without content (admins decide them with ``/memory pending``, privately).
- ``review`` tells the person what a background review saved or staged (staged writes as
  ``staged`` does).
- ``edit`` changes the message a button was pressed on (``Outbox``, kind ``edit``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from adapters.base import Adapter, PlatformError
from adapters.messages import Button, InboundMessage
from agent_core.review import ReviewOutcome
from gateway.approvals import Card, cards, decider
from gateway.commands import CommandReply, answered_privately
from gateway.ledger import DeliveryLedger, Inbound, OutboxKind, Outgoing
from gateway.outbox import EDIT, Delivery, Outbox
from gateway.pairing import PairingStore
from gateway.sessions import SessionKey
from gateway.settings import Notify
from memory import MemoryStores

__all__ = ["ANSWERED_PRIVATELY", "ASK_PRIVATELY", "RESTARTED", "Replies"]

log = logging.getLogger(__name__)

RESTARTED = (
    "I was restarted while I was answering your message, so that answer was lost."
    " Please send it again."
)
ANSWERED_PRIVATELY = "I've answered you in a private chat."
ASK_PRIVATELY = (
    "I answer that only in a private chat, and I can't write to you there yet: open a"
    " private chat with me, start it, and ask again there."
)
NOTED_ABOUT_YOU = (
    "I noted something about you; to see it, open a private chat with me and send /memory"
    " (or /memory pending)."
)
WELCOME = "You're approved — you can talk to me now. /help shows what I can do."

Track = Callable[[Coroutine[Any, Any, Any], str], "asyncio.Task[Any]"]


class Replies:
    def __init__(
        self,
        *,
        outbox: Outbox,
        ledger: DeliveryLedger,
        adapters: Mapping[str, Adapter],
        track: Track,
        stores: MemoryStores,
    ) -> None:
        self.outbox = outbox
        self.ledger = ledger
        self.adapters = adapters
        self.stores = stores  # where staged writes are read from, to show them
        self._track = track  # the gateway's: named, awaited at shutdown

    async def to(
        self,
        message: InboundMessage,
        key: SessionKey,
        text: str,
        *,
        answers: tuple[str, ...] = (),
        markdown: bool = True,
        buttons: tuple[Button, ...] = (),
        reply: bool = False,
        kind: OutboxKind = "reply",
    ) -> None:
        """Into the chat ``message`` came from; ``answers`` are the updates it answers."""
        await self.outbox.post(
            Outgoing(
                message.platform,
                message.chat_id,
                text,
                thread_id=message.thread_id,
                reply_to=message.message_id if reply else None,
                markdown=markdown,
                buttons=buttons,
                session_key=str(key),
                kind=kind,
            ),
            answers=answers,
        )

    async def answer_or_finish(
        self, message: InboundMessage, key: SessionKey, text: str | None
    ) -> None:
        """Answer ``message`` with ``text``, or, when there is nothing to say (it was said
        recently), record it as handled without a reply."""
        if text is None:
            await self.ledger.finish([message.dedup_key])
            return
        await self.to(message, key, text, answers=(message.dedup_key,), markdown=False, reply=True)

    async def private(
        self,
        platform: str,
        user_id: str,
        text: str,
        *,
        buttons: tuple[Button, ...] = (),
        answers: tuple[str, ...] = (),
        session_key: str | None = None,
        kind: OutboxKind = "reply",
    ) -> Delivery:
        """To ``user_id``'s private chat with the bot; ``failed`` when there is none the
        bot may write to."""
        adapter = self.adapters.get(platform)
        if adapter is None:
            return "failed"
        try:
            chat = await adapter.private_chat(user_id)
        except PlatformError as exc:
            log.info("no private chat with %s:%s: %s", platform, user_id, exc)
            if answers:
                await self.ledger.finish(answers)
            return "failed"
        return await self.outbox.post(
            Outgoing(
                platform,
                chat,
                text,
                markdown=False,
                buttons=buttons,
                session_key=session_key,
                kind=kind,
            ),
            answers=answers,
        )

    async def command(
        self, message: InboundMessage, key: SessionKey, reply: CommandReply, *, name: str, args: str
    ) -> None:
        """``/name args``'s answer, where ``commands.answered_privately`` says it may go;
        for a press, first the edit of the message it was pressed on."""
        text, buttons = reply.text, reply.buttons
        answers = (message.dedup_key,)
        if reply.edit is not None and message.is_callback and message.reply_to_message_id:
            await self.edit(message, key, reply.edit, answers=() if text else answers)
            if not text:
                return
        if not _must_be_private(message, name, args):
            await self.to(
                message, key, text, answers=answers, markdown=False, buttons=buttons, reply=True
            )
            return
        sender = message.sender
        delivered = await self.private(
            sender.platform,
            sender.user_id,
            text,
            buttons=buttons,
            answers=answers,
            session_key=str(key),
        )
        notice = ANSWERED_PRIVATELY if delivered != "failed" else ASK_PRIVATELY
        await self.to(message, key, notice, markdown=False, reply=True, kind="notice")

    async def edit(
        self, message: InboundMessage, key: SessionKey, card: Card, *, answers: tuple[str, ...]
    ) -> None:
        """Change the message ``message`` (a press) was pressed on to ``card``."""
        await self.outbox.post(
            Outgoing(
                message.platform,
                message.chat_id,
                card.text,
                thread_id=message.thread_id,
                reply_to=message.reply_to_message_id,
                markdown=False,
                buttons=card.buttons,
                session_key=str(key),
                kind=EDIT,
            ),
            answers=answers,
        )

    async def staged(
        self,
        message: InboundMessage,
        key: SessionKey,
        pending_ids: Sequence[str],
        *,
        person: str,
        own: bool,
    ) -> None:
        """Show the writes ``pending_ids`` staged in ``person``'s store (``own``: the
        speaker's, else a chat's), with their content where their owner reads them."""
        if not pending_ids:
            return
        if not own:  # a chat's own store: the group may know that, admins decide it
            count = len(pending_ids)
            text = (
                f"I'd like to remember something about this chat ({count} change(s)); an"
                " admin can review it with /memory pending."
            )
            await self.to(message, key, text, markdown=False, kind="notice")
            return
        try:
            waiting = await asyncio.to_thread(self.stores.for_person(person).pending)
        except (OSError, ValueError) as exc:
            log.warning("could not read the staged writes of %s: %s", person, exc)
            return
        by_id = {write.id: write for write in waiting}
        writes = [by_id[i] for i in pending_ids if i in by_id]  # decided meanwhile: gone
        if not writes:
            return
        header = (
            "I'd like to remember this. Nothing is saved until you approve it:"
            if len(writes) == 1
            else f"I'd like to remember {len(writes)} things. Nothing is saved until you approve:"
        )
        for card in cards(writes, decider(person, mine=True), header=header):
            if message.chat_type == "dm":
                await self.to(
                    message, key, card.text, markdown=False, buttons=card.buttons, kind="notice"
                )
            elif not await self._notice_privately(message, key, card.text, card.buttons):
                return  # the hint was given once

    def review(
        self,
        outcome: ReviewOutcome,
        message: InboundMessage,
        key: SessionKey,
        *,
        person: str,
        own: bool,
        notify: Notify,
        session_id: str,
    ) -> None:
        """Tell what a review saved or staged in ``person``'s store (``own``: the speaker's,
        else a chat's), in the background."""
        name = f"notice:review:{session_id}"
        if outcome.staged:
            self._track(self.staged(message, key, outcome.staged, person=person, own=own), name)
            return
        if not outcome.saved or notify == "off":
            return
        text = outcome.summary() if notify == "verbose" and own else "(memory updated)"
        if own and message.chat_type != "dm":  # their private memory: not in the group
            self._track(self._notice_privately(message, key, text, ()), name)
        else:
            self._track(self.to(message, key, text, markdown=False, kind="notice"), name)

    async def _notice_privately(
        self, message: InboundMessage, key: SessionKey, text: str, buttons: tuple[Button, ...]
    ) -> bool:
        """To the sender in private, or, when the bot cannot write to them there, a hint
        in the chat without the notice's content (then False)."""
        sender = message.sender
        delivered = await self.private(
            sender.platform,
            sender.user_id,
            text,
            buttons=buttons,
            session_key=str(key),
            kind="notice",
        )
        if delivered == "failed":
            await self.to(message, key, NOTED_ABOUT_YOU, markdown=False, kind="notice")
            return False
        return True

    async def restarted(self, interrupted: Sequence[Inbound]) -> None:
        """Tell each chat whose answer a restart interrupted (``Ledger.interrupted``, read
        before the adapters started), once per chat."""
        told: set[tuple[str, str, str | None]] = set()
        for item in interrupted:
            where = (item.platform, item.chat_id, item.thread_id)
            if where in told:
                continue
            told.add(where)
            log.info(
                "a restart interrupted the answer to %s in %s", item.message_id, item.session_key
            )
            notice = Outgoing(
                item.platform,
                item.chat_id,
                RESTARTED,
                thread_id=item.thread_id,
                reply_to=item.message_id,
                markdown=False,
                session_key=item.session_key,
                kind="notice",
            )
            self._track(self.outbox.post(notice), "notice:restart")

    async def welcome(self, pairing: PairingStore) -> None:
        """Tell people approved by pairing (in chat or from the shell) that they are in."""
        for who, chat in await asyncio.to_thread(pairing.take_welcomes, self.adapters):
            platform = who.split(":", 1)[0]
            if platform not in self.adapters:
                continue
            notice = Outgoing(platform, chat, WELCOME, markdown=False, kind="notice")
            self._track(self.outbox.post(notice), f"notice:paired:{who}")


def _must_be_private(message: InboundMessage, name: str, args: str) -> bool:
    """A group is a public place: an answer carrying someone's data goes to them alone,
    unless the platform already shows it to them only."""
    return (
        message.chat_type != "dm" and not message.private_reply and answered_privately(name, args)
    )
