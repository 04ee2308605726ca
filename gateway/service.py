"""The gateway: adapters in, one choke point, lanes, the agent, the outbox out.

``Gateway`` puts the parts together and runs their lifecycle; each part has its module:

- **intake** (``gateway.intake``): every message an adapter delivers passes one choke point
  (authorize, gate, deduplicate, pairing, budget) and is queued on its session's lane.
- **lanes** (``gateway.router``): one ordered lane per session (``gateway.sessions``), lanes
  run concurrently, at most ``max_concurrent_turns`` at once.
- **turns** (``gateway.turns``): what a lane runs: commands answered without the model,
  plain messages merged into one turn of the agent, the reply, then the review.
- **replies** (``gateway.replies``, ``gateway.outbox``): everything said is persisted in the
  outbox, then sent.

``cancel`` stops the turn a message's session is running (the console's Ctrl-C: the person's
message stays archived, and they are told ``CANCELLED``); ``idle`` waits until that session
has nothing queued or running.

Several replicas of one gateway agree through its ``coordinator`` (``gateway.coordination``;
by default one ``LocalCoordinator``: this process alone): the router takes each session's
lease around its turns, intake claims each update once, the outbox shares flood waits,
budget and pairing reminders are told once by them all.
``/healthz`` names the storage and the coordination backends and says whether the latter
answers; its waits, lost leases and errors
go to the metrics. Whoever opened the coordinator closes it.

``start`` tells people whose turn a restart interrupted, delivers replies a restart left
unsent, and starts the adapters; ``stop`` stops intake, lets running turns finish (bounded),
awaits reviews and notices, flushes the outbox and closes the adapters. ``async with
gateway`` does both (a start that fails half-way stops what it started). What ``stop`` cannot
finish (an adapter that fails to close, background work that failed) is logged as a warning
naming the part, and the rest still stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

from adapters.base import Adapter, BotCommand
from adapters.messages import InboundMessage
from agent_core.agent import Agent
from gateway.auth import Access, Auth
from gateway.commands import COMMANDS, Commands
from gateway.coordination import (
    CoordinationError,
    Coordinator,
    LocalCoordinator,
    NoEvents,
)
from gateway.intake import Intake
from gateway.ledger import DeliveryLedger, Ledger
from gateway.limits import Budgets
from gateway.logs import redact
from gateway.metrics import Metrics, RefusalSource, memory_usage
from gateway.outbox import Outbox
from gateway.pairing import PairingDesk
from gateway.prefetch import EarlyRecall
from gateway.replicas import Replicated, ReplicaWatch
from gateway.replies import Replies
from gateway.router import Router
from gateway.sessions import Sessions
from gateway.settings import GatewaySettings
from gateway.turns import Turns
from memory.archive import Archive

__all__ = ["Gateway"]

log = logging.getLogger(__name__)


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
        ledger: DeliveryLedger | None = None,
        coordinator: Coordinator | None = None,
        storage_backend: str = "sqlite",
    ) -> None:
        """``clock`` (unix time) measures budgets and what strangers are told of their code;
        ``ledger`` is a shared one when several replicas run (default: in the archive);
        ``coordinator`` is shared with the other replicas (default: this process alone);
        ``storage_backend`` names where the state lives, for ``/healthz``."""
        self.agent = agent
        self.metrics = metrics or Metrics(platforms=adapters, process=False)  # tests' default
        self.storage_backend = storage_backend
        self.coordinator = coordinator or LocalCoordinator(events=self.metrics)
        if isinstance(self.coordinator.events, NoEvents):
            self.coordinator.events = self.metrics
        self.auth = auth
        self.adapters = dict(adapters)
        for name, adapter in self.adapters.items():  # read at scrape time
            self.metrics.watch_skips(name, adapter)
            if isinstance(adapter, RefusalSource):  # a webhook (Telegram)
                self.metrics.watch_refused(name, adapter)
        self.settings = settings or GatewaySettings()
        if ledger is None:
            if not isinstance(agent.archive, Archive):
                raise TypeError("an archive on PostgreSQL needs the ledger beside it (PgLedger)")
            ledger = Ledger(agent.archive)
        self.ledger: DeliveryLedger = ledger
        self.outbox = Outbox(
            self.ledger,
            self.adapters,
            max_chunks=self.settings.max_reply_messages,
            coordinator=self.coordinator,
        )
        self.replies = Replies(
            outbox=self.outbox,
            ledger=self.ledger,
            adapters=self.adapters,
            track=self._track,
            stores=agent.stores,
        )
        self.sessions = Sessions(
            agent,
            idle_s=self.settings.idle_session_s,
            group_scope=self.settings.group_scope,
            shared=isinstance(self.ledger, Replicated),
        )
        self.budgets = Budgets(
            agent.archive, self.settings.limits, clock=clock, coordinator=self.coordinator
        )
        self.pairing_desk = PairingDesk(
            auth.pairing,
            admins=lambda: self.auth.access.admins,
            platforms=self.adapters,
            post=self.replies.private,
            clock=clock,
            coordinator=self.coordinator,
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
            provider=None if agent.recall is None else agent.recall.provider,
            semantic=None if agent.recall is None else agent.recall.ranker(),
        )
        self.early = None if agent.recall is None else EarlyRecall(agent.recall, self.sessions)
        self.turns = Turns(
            early=self.early,
            agent=agent,
            auth=auth,
            adapters=self.adapters,
            sessions=self.sessions,
            commands=self.commands,
            replies=self.replies,
            ledger=self.ledger,
            metrics=self.metrics,
            track=self._track,
            notify=lambda: self.settings.notify,
        )
        self.router = Router(
            self.turns.handle,
            max_concurrent=self.settings.max_concurrent_turns,
            on_cancel=self.turns.cancelled,
            coordinator=self.coordinator,
        )
        self.intake = Intake(
            auth=auth,
            adapters=self.adapters,
            ledger=self.ledger,
            router=self.router,
            budgets=self.budgets,
            pairing_desk=self.pairing_desk,
            replies=self.replies,
            metrics=self.metrics,
            settings=lambda: self.settings,
            early=self.early,
            coordinator=self.coordinator,
        )
        self._running = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._started: list[Adapter] = []
        self.watch: ReplicaWatch | None = None  # with a ledger shared by replicas, once started

    # -- what adapters and the console call -----------------------------------------------

    async def receive(self, message: InboundMessage) -> None:
        """An adapter's sink (``Intake.receive``): authorize, gate, deduplicate, queue."""
        await self.intake.receive(message)

    def cancel(self, message: InboundMessage) -> bool:
        """Cancel the turn (or command) running in ``message``'s session; False when none
        runs there now."""
        return self.router.cancel(self.intake.key(message))

    async def idle(self, message: InboundMessage) -> None:
        """Wait until ``message``'s session has nothing queued or running: everything it
        was sent has been answered (or cancelled)."""
        await self.router.idle(self.intake.key(message))

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
        if isinstance(self.ledger, Replicated):
            self.watch = ReplicaWatch(
                self.ledger,
                tell_interrupted=self.replies.restarted,
                deliver=self.outbox.deliver_rows,
            )
            self._track(self.watch.run(), "watch:replicas")

    async def stop(self) -> None:
        """Stop intake, drain running turns, await background work, flush, disconnect. The
        adapters are stopped even when a step before fails; one that cannot stop, and
        background work that failed, are logged (a warning naming it). Safe to call twice."""
        if self.intake.closing:
            return
        self.intake.closing = True
        try:
            drained = await self.router.drain(self.settings.drain_timeout_s)
            if not drained:
                log.warning(
                    "turns still running after %.0fs were cancelled", self.settings.drain_timeout_s
                )
            if self.early is not None:
                self.early.close()  # no turn is left to take them
            await self.agent.aclose(timeout_s=self.settings.drain_timeout_s)
            await self._await_tasks(self.settings.drain_timeout_s)
            self.pairing_desk.notices.close()
            await self.outbox.flush()
            if isinstance(self.ledger, Replicated):
                await self.ledger.leave()  # what is left is the others' to take, at once
        finally:
            for adapter in reversed(self._started):
                try:
                    await adapter.stop()
                except Exception as exc:  # the others still stop
                    _failed(f"{adapter.platform} adapter", exc)
            self._started.clear()

    async def __aenter__(self) -> Self:
        """``start``; a start that fails half-way stops what it started, then raises."""
        try:
            await self.start()
        except BaseException:
            try:
                await self.stop()
            except Exception as exc:  # the start's error is the one to raise
                _failed("gateway", exc)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def health(self) -> tuple[bool, list[str]]:
        """``/healthz``: healthy while running with every adapter connected and the
        storage and coordination backends answering; the last two lines name the storage and the
        coordination backends either way."""
        problems = []
        closing = self.intake.closing
        if not self._running or closing:
            problems.append("gateway: not running" if not closing else "gateway: stopping")
        for name, adapter in self.adapters.items():
            if not adapter.connected:
                problems.append(f"{name}: not connected")
        try:
            async with asyncio.timeout(3):
                await self.agent.archive.ping()
        except Exception as exc:  # the reason's kind, never its text (it may quote a DSN)
            problems.append(
                f"storage: {self.storage_backend}: not answering ({type(exc).__name__})"
            )
        backend, silent = await self._coordination()
        if silent is not None:
            problems.append(f"coordination: {backend}: {silent}")
        backends = [f"storage: {self.storage_backend}"]
        if silent is None:
            backends.append(f"coordination: {backend}")
        return not problems, [*problems, *backends]

    async def _coordination(self) -> tuple[str, str | None]:
        """The coordination backend's name, and why it does not answer (None: it does)."""
        backend = self.coordinator.backend
        try:
            await self.coordinator.ping()
        except CoordinationError as exc:
            self.metrics.set_coordination_up(backend, False)
            return backend, str(exc).removeprefix("coordination: ")
        self.metrics.set_coordination_up(backend, True)
        return backend, None

    async def refresh_metrics(self) -> None:
        """Sample the gauges just before a scrape."""
        metrics = self.metrics
        metrics.set_queue_depth(self.router.queued)
        metrics.set_live_sessions(len(self.sessions))
        metrics.set_outbox_pending((await self.ledger.counts()).get("pending", 0))
        metrics.set_archive_bytes(await self.agent.archive.size_bytes())
        metrics.set_memory(await asyncio.to_thread(memory_usage, self.agent.stores))
        await self._coordination()  # mnemo_coordination_up

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

    async def _watch_pairing(self) -> None:
        """``mnemo pairing approve`` runs in another process: look for its approvals."""
        while True:
            await asyncio.sleep(self.settings.pairing_poll_s)
            try:
                await self.replies.welcome(self.auth.pairing)
            except Exception as exc:  # a broken file must not end the watch
                log.warning("could not read pairing approvals: %s", exc)

    # -- background work ------------------------------------------------------------------

    def _track(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        """A background task ended: one that failed is logged when it fails, not only if it
        is still running when the gateway stops."""
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            during = "while stopping" if self.intake.closing else "while running"
            _failed(f"background task {task.get_name()}", exc, during)

    async def _await_tasks(self, timeout_s: float) -> None:
        """Let background work finish (bounded; typing and the watchers need not), cancel
        what is left; each task that failed is logged by ``_finished``."""
        waited = {t for t in self._tasks if not t.get_name().startswith(("typing:", "watch:"))}
        if waited:
            _done, left = await asyncio.wait(waited, timeout=timeout_s)
            for task in left:
                task.cancel()
        tasks = waited | self._tasks  # the finished ones have left self._tasks
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task  # a failure was logged when it happened (``_finished``)

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


def _failed(part: str, exc: BaseException, during: str = "while stopping") -> None:
    """What ``part`` raised, as a warning: its type and its text, credential-shaped parts
    redacted (``gateway.logs.redact``) even where the log has no redactor of its own
    (``mnemo chat``, tests). Never a traceback: the part's name says where to look."""
    log.warning("%s: %s %s: %s", part, type(exc).__name__, during, redact(str(exc)))
