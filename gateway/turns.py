"""What a lane runs: the router (``gateway.router``) hands ``Turns.handle`` one session's
batch at a time.

A batch is handled in order: a command (``gateway.commands``) is answered without the
model, a ``/<skill>`` becomes a turn with the skill's instructions; consecutive plain
messages are merged into one turn. The reply is persisted in the outbox, then sent
(``gateway.replies``), followed by the memory writes the turn staged for approval, if any
(``Replies.staged``); the review runs afterwards in the background and the person is told
what it saved as ``memory.notify`` says. While a turn runs the chat shows "typing…".

A batch cancelled mid-way (``Router.cancel``: the console's Ctrl-C) is answered
``CANCELLED``, which also marks its messages answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence

from adapters.base import Adapter
from adapters.messages import InboundMessage
from agent_core.agent import Agent, Conversation
from agent_core.review import ReviewOutcome
from gateway.auth import Auth
from gateway.commands import CommandReply, CommandRequest, Commands, parse_command
from gateway.ledger import DeliveryLedger
from gateway.metrics import Metrics
from gateway.prefetch import EarlyRecall
from gateway.replies import Replies, Track
from gateway.sessions import SessionKey, Sessions
from gateway.settings import Notify
from gateway.turn_text import merged_text, skill_turn

__all__ = ["CANCELLED", "COMMAND_FAILED", "Turns"]

log = logging.getLogger(__name__)

COMMAND_FAILED = "Sorry, that command failed. The operator can find why in the logs."
CANCELLED = "(cancelled)"
TYPING_AFTER_S = 0.5
TYPING_EVERY_S = 4.0


class Turns:
    def __init__(
        self,
        *,
        agent: Agent,
        auth: Auth,
        adapters: Mapping[str, Adapter],
        sessions: Sessions,
        commands: Commands,
        replies: Replies,
        ledger: DeliveryLedger,
        metrics: Metrics,
        track: Track,
        notify: Callable[[], Notify],
        early: EarlyRecall | None = None,
    ) -> None:
        """``track`` runs background work the gateway awaits when it stops (typing, and
        what replies send later); ``notify`` is read when a review ends (a reload applies)."""
        self.agent = agent
        self.auth = auth
        self.adapters = adapters
        self.sessions = sessions
        self.commands = commands
        self.replies = replies
        self.ledger = ledger
        self.metrics = metrics
        self._track = track
        self._notify = notify
        self.early = early

    async def handle(self, key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        """One lane's batch, in order: commands one by one, plain messages merged."""
        texts: list[InboundMessage] = []
        for message in batch:
            if not (message.is_command or message.is_callback):
                texts.append(message)
                continue
            await self._flush_texts(key, texts)
            texts = []
            command = parse_command(message.text)
            if command is None and (message.text.split() or [""])[0].lower() == "/start":
                command = ("help", "")  # what Telegram sends when someone opens the bot
            skill = None if command is not None else await skill_turn(self.agent.skills, message)
            if isinstance(skill, InboundMessage):
                texts.append(skill)
            elif isinstance(skill, str):
                await self.replies.to(
                    message, key, skill, answers=(message.dedup_key,), markdown=False, reply=True
                )
            elif command is not None:
                await self._command(key, message, *command)
            elif message.is_callback:  # a button we did not make
                await self.ledger.finish([message.dedup_key])
            else:
                name = message.text.split(maxsplit=1)[0] if message.text.strip() else "/"
                await self.replies.to(
                    message,
                    key,
                    f"I don't know the command {name}. /help lists the ones I know.",
                    answers=(message.dedup_key,),
                    markdown=False,
                    reply=True,
                )
        await self._flush_texts(key, texts)

    async def cancelled(self, key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        """A batch cancelled mid-way: say so, which also marks its messages answered (they
        are archived; a restart must not ask for them again)."""
        if self.early is not None:
            self.early.take(batch)  # cancels what was started for them
        keys = tuple(m.dedup_key for m in batch)
        await self.replies.to(batch[-1], key, CANCELLED, answers=keys, markdown=False)

    async def _command(
        self, key: SessionKey, message: InboundMessage, name: str, args: str
    ) -> None:
        began = time.monotonic()
        request = CommandRequest(message, key, name, args, admin=self.auth.is_admin(message.sender))
        try:
            reply = await self.commands.run(request)
        except Exception:
            log.exception("command /%s failed", name)
            reply = CommandReply(COMMAND_FAILED)
        await self.replies.command(message, key, reply, name=name, args=args)
        self.metrics.turn(message.platform, "command", time.monotonic() - began)

    async def _flush_texts(self, key: SessionKey, messages: list[InboundMessage]) -> None:
        if not messages:
            return
        began = time.monotonic()
        last = messages[-1]
        adapter = self.adapters.get(last.platform)
        done = asyncio.Event()
        if adapter is not None:
            self._track(self._keep_typing(adapter, last, done), f"typing:{key}")
        try:
            conversation = await self.sessions.get(key, last, admin=self.auth.is_admin(last.sender))
            shared = key.user_id is None and last.chat_type != "dm"
            text = merged_text(messages, shared=shared)
            speaker = last.sender.display_name or None if last.chat_type != "dm" else None
            outcome = await self.agent.turn(
                conversation,
                text,
                speaker=None if shared else speaker,
                author=last.sender.person,  # whose budget the turn counts against
                prefetched=None if self.early is None else self.early.take(messages),
            )
        finally:
            done.set()
        keys = tuple(m.dedup_key for m in messages)
        await self.replies.to(
            last, key, outcome.reply or "(no answer)", answers=keys, reply=last.chat_type != "dm"
        )
        own = conversation.person == last.sender.person  # else a chat's own store
        await self.replies.staged(last, key, outcome.staged, person=conversation.person, own=own)
        metrics = self.metrics
        metrics.turn(last.platform, "error" if outcome.error else "ok", time.monotonic() - began)
        usage = outcome.usage
        metrics.model_usage(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens)
        metrics.model_retries(outcome.retries)
        if outcome.error_kind:
            metrics.model_error(outcome.error_kind)
        if outcome.review is not None:
            outcome.review.add_done_callback(
                lambda task: self._after_review(task, last, key, conversation)
            )

    async def _keep_typing(
        self, adapter: Adapter, message: InboundMessage, done: asyncio.Event
    ) -> None:
        """Show "typing…" while a turn runs: first after ``TYPING_AFTER_S`` (a quick answer
        needs none), then every ``TYPING_EVERY_S``. It stops at ``done``, between requests:
        cancelling one mid-flight would cost the platform client its kept-alive connection
        (bench/gateway_bench.py measured +50% throughput from this)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(TYPING_AFTER_S):  # 3.11 wait_for loses cancels
                await done.wait()
        while not done.is_set():
            with contextlib.suppress(Exception):
                await adapter.typing(message.chat_id, message.thread_id)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TYPING_EVERY_S):  # 3.11 wait_for loses cancels
                    await done.wait()

    def _after_review(
        self,
        task: asyncio.Task[ReviewOutcome],
        message: InboundMessage,
        key: SessionKey,
        conversation: Conversation,
    ) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        outcome = task.result()
        writes = len(outcome.saved) + len(outcome.staged) + len(outcome.skills)
        self.metrics.review(outcome.wrote, writes)
        self.metrics.model_usage(
            outcome.usage.prompt_tokens,
            outcome.usage.cached_tokens,
            outcome.usage.completion_tokens,
        )
        self.replies.review(
            outcome,
            message,
            key,
            person=conversation.person,
            own=conversation.person == message.sender.person,  # else a chat's own store
            notify=self._notify(),
            session_id=conversation.id,
        )
