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
- ``review`` tells the person what a background review saved or staged: a notice about
  someone's own memory from a group turn goes to them privately; one about a chat's own
  store stays in the group, without content (admins decide it with ``/memory pending``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from adapters.base import Adapter, PlatformError
from adapters.messages import Button, InboundMessage
from agent_core.review import ReviewOutcome
from gateway.commands import CommandReply, answered_privately
from gateway.outbox import Delivery, Outbox
from gateway.pairing import PairingStore
from gateway.router import SessionKey
from memory.ledger import Ledger, Outgoing

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
        self, *, outbox: Outbox, ledger: Ledger, adapters: Mapping[str, Adapter], track: Track
    ) -> None:
        self.outbox = outbox
        self.ledger = ledger
        self.adapters = adapters
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
        kind: str = "reply",
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
        kind: str = "reply",
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
        """``/name args``'s answer, where ``commands.answered_privately`` says it may go."""
        text, buttons = reply.text, reply.buttons
        answers = (message.dedup_key,)
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

    def review(
        self,
        outcome: ReviewOutcome,
        message: InboundMessage,
        key: SessionKey,
        *,
        own: bool,
        notify: str,
        session_id: str,
    ) -> None:
        """Tell what a review saved or staged (``own``: in the speaker's own store, else
        in a chat's), in the background."""
        text: str | None = None
        buttons: tuple[Button, ...] = ()
        if outcome.staged and own:
            text = f"I'd like to remember something ({len(outcome.staged)} change(s))."
            text += " /memory pending shows it; approve or reject it there."
            buttons = tuple(
                pair
                for pending_id in outcome.staged
                for pair in (
                    (f"Approve {pending_id}", f"/memory approve {pending_id}"),
                    (f"Reject {pending_id}", f"/memory reject {pending_id}"),
                )
            )
        elif outcome.staged:
            text = (
                f"I'd like to remember something about this chat ({len(outcome.staged)}"
                " change(s)); an admin can review it with /memory pending."
            )
        elif outcome.saved and notify != "off":
            text = outcome.summary() if notify == "verbose" and own else "(memory updated)"
        if text is None:
            return
        if own and message.chat_type != "dm":  # their private memory: not in the group
            work = self._notice_privately(message, key, text, buttons)
        else:
            work = self.to(message, key, text, markdown=False, buttons=buttons, kind="notice")
        self._track(work, f"notice:review:{session_id}")

    async def _notice_privately(
        self, message: InboundMessage, key: SessionKey, text: str, buttons: tuple[Button, ...]
    ) -> None:
        """To the sender in private, or, when the bot cannot write to them there, a hint
        in the chat without the notice's content."""
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

    async def restarted(self) -> None:
        """Tell each chat whose answer a restart interrupted, once per chat."""
        told: set[tuple[str, str, str | None]] = set()
        for item in await self.ledger.interrupted():
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
