"""The gateway: adapters in, one choke point, lanes, the agent, the outbox out.

Every update an adapter normalises goes through ``Gateway.receive`` in this order:

1. **authorize** (``gateway.auth``): deny by default; pairing codes for unknown DMs; groups,
   bots and blocked people ignored silently. Nothing else runs for a message that fails here.
2. **gate**: in a group the bot answers only when addressed (mention, reply, command),
   unless the platform's ``require_mention`` is off or the chat is a free-response chat.
3. **deduplicate** (``gateway.ledger``): an update seen before is dropped, so a redelivery
   after a restart never gets a second answer.
4. **pairing** (``gateway.pairing.notices``): a stranger is told their code once (then at
   most a reminder every 10 minutes), and the admins hear of each new code, batched.
5. **budget** (``gateway.limits``): a message that would start a turn past the person's
   turns-an-hour or tokens-a-day budget is answered with the limit, not run.
6. **queue** (``gateway.router``) on the session key's lane.

A lane handles its batch in order: a command (``gateway.commands``) is answered without the
model; consecutive plain messages are merged into one turn. The reply is persisted in the
outbox, then sent (``gateway.outbox``), followed by the memory writes the turn staged for
approval, if any (``Replies.staged``); the review runs afterwards in the background.
``cancel`` stops the turn a message's session is running (the console's Ctrl-C: the person's
message stays archived, and they are told ``CANCELLED``); ``idle`` waits until that session
has nothing queued or running.

``start`` tells people whose turn a restart interrupted, delivers replies a restart left
unsent, and starts the adapters; ``stop`` stops intake, lets running turns finish (bounded),
awaits reviews and notices, flushes the outbox and closes the adapters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from adapters.base import Adapter, BotCommand
from adapters.messages import InboundMessage
from agent_core.agent import Agent, Conversation
from agent_core.review import ReviewOutcome
from gateway.auth import Access, Auth
from gateway.commands import COMMANDS, CommandReply, CommandRequest, Commands, parse_command
from gateway.ledger import Inbound, Ledger
from gateway.limits import Budgets, Limits
from gateway.metrics import Metrics, archive_bytes, memory_usage
from gateway.outbox import Outbox
from gateway.pairing import PairingDesk
from gateway.replies import Replies
from gateway.router import Router, RouterClosed, SessionKey
from gateway.sessions import GroupScope, Sessions
from gateway.turn_text import merged_text, skill_turn

__all__ = ["Gateway", "GatewaySettings", "PlatformPolicy"]

log = logging.getLogger(__name__)

COMMAND_FAILED = "Sorry, that command failed. The operator can find why in the logs."
CANCELLED = "(cancelled)"
TYPING_AFTER_S = 0.5
TYPING_EVERY_S = 4.0


@dataclass(frozen=True, slots=True)
class PlatformPolicy:
    require_mention: bool = True
    free_response_chats: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    group_sessions_per_user: bool = True
    group_scope: GroupScope = "chat"  # memory.group_scope
    max_concurrent_turns: int = 8
    max_reply_messages: int = 6  # then the whole reply goes as a file
    drain_timeout_s: float = 30.0
    idle_session_s: float = 3600.0
    notify: str = "off"  # off | on | verbose (memory.notify)
    pairing_poll_s: float = 2.0  # how often approvals made from the shell are looked for
    limits: Limits = field(default_factory=Limits)  # gateway.limits
    platforms: Mapping[str, PlatformPolicy] = field(default_factory=dict)


class Gateway:
    def __init__(
        self,
        *,
        agent: Agent,
        auth: Auth,
        adapters: Mapping[str, Adapter],
        settings: GatewaySettings | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` (unix time) measures budgets and what strangers are told of their code."""
        self.agent = agent
        self.metrics = metrics or Metrics(platforms=adapters, process=False)  # tests' default
        self.auth = auth
        self.adapters = dict(adapters)
        for name, adapter in self.adapters.items():  # read at scrape time
            self.metrics.watch_skips(name, adapter)
        self.settings = settings or GatewaySettings()
        self.ledger = Ledger(agent.archive)
        self.outbox = Outbox(
            self.ledger, self.adapters, max_chunks=self.settings.max_reply_messages
        )
        self.replies = Replies(
            outbox=self.outbox,
            ledger=self.ledger,
            adapters=self.adapters,
            track=self._track,
            stores=agent.stores,
        )
        self.sessions = Sessions(
            agent, idle_s=self.settings.idle_session_s, group_scope=self.settings.group_scope
        )
        self.router = Router(
            self._handle,
            max_concurrent=self.settings.max_concurrent_turns,
            on_cancel=self._cancelled,
        )
        self.budgets = Budgets(agent.archive, self.settings.limits, clock=clock)
        self.pairing_desk = PairingDesk(
            auth.pairing,
            admins=lambda: self.auth.access.admins,
            platforms=self.adapters,
            post=self.replies.private,
            clock=clock,
        )
        self.commands = Commands(
            archive=agent.archive,
            stores=agent.stores,
            sessions=self.sessions,
            pairing=auth.pairing,
            stats=self._stats,
            on_paired=lambda: self.replies.welcome(self.auth.pairing),
            skills=agent.skills,
            budget=self.budgets.status,
            admins=lambda: self.auth.access.admins,
        )
        self._running = False
        self._closing = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._started: list[Adapter] = []

    # -- lifecycle ------------------------------------------------------------------------

    async def menu(self) -> list[BotCommand]:
        """The command menu: the built-in commands, then one per skill (built-ins win a
        name clash; each adapter leaves out or respells names its platform cannot take)."""
        commands = list(COMMANDS)
        if self.agent.skills is not None:
            skills, _problems = await asyncio.to_thread(self.agent.skills.scan)
            taken = {command.name for command in commands}
            commands += [BotCommand(s.name, s.description) for s in skills if s.name not in taken]
        return commands

    def admin_ids(self, platform: str) -> list[str]:
        """The user ids on ``platform`` of the configured admins."""
        prefix = f"{platform}:"
        return sorted(
            a.removeprefix(prefix) for a in self.auth.access.admins if a.startswith(prefix)
        )

    async def refresh_menus(self) -> None:
        """Register the command menu on every started platform (admins' chats get the
        admin commands): at start, and when a reload changes who the admins are."""
        menu = await self.menu()
        for adapter in self._started:
            try:
                await adapter.set_commands(menu, admins=self.admin_ids(adapter.platform))
            except Exception as exc:  # the menu is a convenience; chatting works without it
                log.warning("%s: could not register the command menu: %s", adapter.platform, exc)

    async def start(self) -> None:
        await self.ledger.prune()
        # before any adapter delivers: a message arriving during start-up is not "interrupted"
        interrupted = await self.ledger.interrupted()
        for adapter in self.adapters.values():
            await adapter.start(self.receive)
            self._started.append(adapter)
        await self.refresh_menus()
        self._running = True
        self._track(self._watch_pairing(), "watch:pairing")
        self._track(self.pairing_desk.notices.run(), "watch:pairing-notices")
        await self.replies.restarted(interrupted)
        delivered = await self.outbox.flush()
        if delivered:
            log.info("delivered %d reply(ies) a restart had left unsent", delivered)

    async def stop(self) -> None:
        """Stop intake, drain running turns, await background work, flush, disconnect."""
        if self._closing:
            return
        self._closing = True
        drained = await self.router.drain(self.settings.drain_timeout_s)
        if not drained:
            log.warning(
                "turns still running after %.0fs were cancelled", self.settings.drain_timeout_s
            )
        await self.agent.aclose(timeout_s=self.settings.drain_timeout_s)
        await self._await_tasks(self.settings.drain_timeout_s)
        self.pairing_desk.notices.close()
        await self.outbox.flush()
        for adapter in reversed(self._started):
            with contextlib.suppress(Exception):
                await adapter.stop()
        self._started.clear()

    async def health(self) -> tuple[bool, list[str]]:
        """``/healthz``: healthy while running with every adapter connected."""
        reasons = []
        if not self._running or self._closing:
            reasons.append("gateway: not running" if not self._closing else "gateway: stopping")
        for name, adapter in self.adapters.items():
            if not adapter.connected:
                reasons.append(f"{name}: not connected")
        return not reasons, reasons

    async def refresh_metrics(self) -> None:
        """Sample the gauges just before a scrape."""
        metrics = self.metrics
        metrics.set_queue_depth(self.router.queued)
        metrics.set_live_sessions(len(self.sessions))
        metrics.set_outbox_pending((await self.ledger.counts()).get("pending", 0))
        metrics.set_archive_bytes(await asyncio.to_thread(archive_bytes, self.agent.archive.path))
        metrics.set_memory(await asyncio.to_thread(memory_usage, self.agent.stores))

    def reload(self, access: Access, settings: GatewaySettings) -> None:
        """Take new allowlists, admins and group policies (SIGHUP); sessions, lanes and the
        outbox carry on untouched. Concurrency and drain settings apply from the next start;
        the command menus are registered again when the admins changed."""
        admins_changed = access.admins != self.auth.access.admins
        self.auth.access = access
        self.settings = replace(
            self.settings,
            platforms=settings.platforms,
            notify=settings.notify,
            group_scope=settings.group_scope,
            limits=settings.limits,
            max_reply_messages=settings.max_reply_messages,
        )
        self.outbox.max_chunks = settings.max_reply_messages
        self.sessions.group_scope = settings.group_scope  # for sessions started from now on
        self.budgets.limits = settings.limits
        if admins_changed and self._running:
            self._track(self.refresh_menus(), "menus")

    # -- intake (the choke point) ---------------------------------------------------------

    async def _dismiss(self, message: InboundMessage) -> None:
        """Nothing will answer ``message``: its adapter releases what it holds open."""
        adapter = self.adapters.get(message.platform)
        if adapter is None:
            return
        try:
            await adapter.dismiss(message)
        except Exception as exc:  # best effort, never a reason to fail intake
            log.debug("could not dismiss %s: %s", message.dedup_key, exc)

    async def receive(self, message: InboundMessage) -> None:
        """An adapter's sink: authorize, gate, deduplicate, queue. Returns quickly."""
        verdict = self.auth.check(message)
        if verdict.action == "ignore":
            log.debug("ignored %s: %s", message.dedup_key, verdict.reason)
            await self._dismiss(message)
            return
        if verdict.action == "allow" and not self._addressed(message):
            await self._dismiss(message)
            return
        key = self._key(message)
        if self._closing:
            # acknowledged by the platform: keep it in the ledger so the next start tells them
            await self._accept(message, key)
            return
        if not await self._accept(message, key):
            self.metrics.redelivery()
            log.info("dropped a redelivered update %s", message.dedup_key)
            return
        if verdict.action == "pair" and verdict.offer is not None:
            text = self.pairing_desk.offer(message.sender, verdict.offer)
            if text is None:
                await self._dismiss(message)
            await self.replies.answer_or_finish(message, key, text)
            return
        refusal = None if verdict.admin else await self.budgets.refusal(message)
        if refusal is not None:
            self.metrics.limited(message.platform, refusal.kind)
            await self.replies.answer_or_finish(message, key, refusal.text)
            return
        with contextlib.suppress(RouterClosed):  # the row stays queued: the next start tells them
            self.router.submit(key, message)

    def cancel(self, message: InboundMessage) -> bool:
        """Cancel the turn (or command) running in ``message``'s session; False when none
        runs there now."""
        return self.router.cancel(self._key(message))

    async def idle(self, message: InboundMessage) -> None:
        """Wait until ``message``'s session has nothing queued or running: everything it
        was sent has been answered (or cancelled)."""
        await self.router.idle(self._key(message))

    def _key(self, message: InboundMessage) -> SessionKey:
        return SessionKey.for_message(
            message, per_user_in_groups=self.settings.group_sessions_per_user
        )

    def _addressed(self, message: InboundMessage) -> bool:
        if message.chat_type == "dm" or message.addressed_to_bot or message.is_callback:
            return True
        policy = self.settings.platforms.get(message.platform, PlatformPolicy())
        return not policy.require_mention or message.chat_id in policy.free_response_chats

    async def _accept(self, message: InboundMessage, key: SessionKey) -> bool:
        return await self.ledger.accept(
            Inbound(
                key=message.dedup_key,
                session_key=str(key),
                platform=message.platform,
                chat_id=message.chat_id,
                thread_id=message.thread_id,
                message_id=message.message_id,
                received_at=time.time(),
            )
        )

    async def _watch_pairing(self) -> None:
        """``mnemo pairing approve`` runs in another process: look for its approvals."""
        while True:
            await asyncio.sleep(self.settings.pairing_poll_s)
            try:
                await self.replies.welcome(self.auth.pairing)
            except Exception as exc:  # a broken file must not end the watch
                log.warning("could not read pairing approvals: %s", exc)

    # -- lanes ----------------------------------------------------------------------------

    async def _handle(self, key: SessionKey, batch: Sequence[InboundMessage]) -> None:
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

    async def _cancelled(self, key: SessionKey, batch: Sequence[InboundMessage]) -> None:
        """A batch cancelled mid-way: say so, which also marks its messages answered (they
        are archived; a restart must not ask for them again)."""
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
            reply = CommandReply(
                "Sorry, that command failed. The operator can find why in the logs."
            )
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
            await asyncio.wait_for(done.wait(), TYPING_AFTER_S)
        while not done.is_set():
            with contextlib.suppress(Exception):
                await adapter.typing(message.chat_id, message.thread_id)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), TYPING_EVERY_S)

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
            notify=self.settings.notify,
            session_id=conversation.id,
        )

    # -- background work ------------------------------------------------------------------

    def _track(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _await_tasks(self, timeout_s: float) -> None:
        pending = {t for t in self._tasks if not t.get_name().startswith(("typing:", "watch:"))}
        if pending:
            _done, left = await asyncio.wait(pending, timeout=timeout_s)
            for task in left:
                task.cancel()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _stats(self) -> dict[str, Any]:
        outbox = await self.ledger.counts()
        return {
            "Reviews that saved memory (since start)": int(
                self.metrics.value("mnemo_reviews_total", result="saved")
            ),
            "Live sessions": len(self.sessions),
            "Queued messages": self.router.queued,
            "Outbox pending / failed": f"{outbox.get('pending', 0)} / {outbox.get('failed', 0)}",
        }
