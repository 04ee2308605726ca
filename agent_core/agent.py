"""The agent: sessions with a frozen prompt, turns that archive their exchange, reviews.

``Agent.start`` builds a session's system prompt once from the person's memory snapshot and
records it with the session, so ``Agent.resume`` (after a restart) continues with the same
bytes. ``Agent.turn`` runs the bounded loop with the person-bound tools, appends the whole
exchange to the archive in one transaction, hands the reply back, and only then starts the
review as a named background task (never awaited by the turn). A turn that fails at the
model, or is cancelled, still archives the person's message. ``Agent.aclose`` awaits the
reviews still running (bounded) at shutdown. A session's state and the conversion of its
messages to and from archive rows: ``agent_core.conversation``.

With a memory provider (``recall``, ``agent_core.recall``): its context joins the frozen
prompt when a session starts and its tools the session's tools; each turn waits at most
``prefetch_timeout_ms`` for recalled text, which goes into that user message only (the
archive keeps the message as the person wrote it); the exchange, applied memory writes and
the end of a session reach it in the background, like the review.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from agent_core.compress import (
    CompressionSettings,
    continuation,
    message_tokens,
    split_history,
    summarise,
)
from agent_core.conversation import (
    REJECTED,
    UNAVAILABLE,
    AgentSettings,
    Conversation,
    TurnOutcome,
    archived_rows,
    chat_message,
    user_message,
)
from agent_core.loop import run_turn
from agent_core.models import Model, ModelError, ModelRejected, Usage
from agent_core.prompt import SystemPrompt, build_system_prompt, read_soul
from agent_core.recall import Prefetch, Recall, beside, said_in
from agent_core.review import ReviewOutcome, review
from agent_core.tools import (
    SearchTool,
    SkillPolicy,
    Toolbox,
    memory_tool,
    session_search_tool,
    skill_tools,
)
from memory import MemoryStores, MemoryTurn
from memory.archive import ArchiveStore, NewMessage, SessionSpec
from memory.providers import Exchange, SessionEnd, Subject
from memory.scan import scan
from memory.skills import SkillStore

__all__ = ["Agent", "AgentSettings", "Conversation", "TurnOutcome"]

log = logging.getLogger(__name__)
T = TypeVar("T")
MIN_GAIN = 0.05  # compress only when the middle holds at least this share of the window


class Agent:
    def __init__(
        self,
        *,
        model: Model,
        archive: ArchiveStore,
        stores: MemoryStores,
        home: Path,
        settings: AgentSettings | None = None,
        skills: SkillStore | None = None,
        recall: Recall | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.model = model
        self.archive = archive
        self.stores = stores
        self.home = home
        self.settings = settings or AgentSettings()
        self.skills = skills
        self.recall = recall
        self._now = now
        # with a provider that ranks by meaning (local), discover fuses it in
        self._search = SearchTool(archive, semantic=None if recall is None else recall.ranker())
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- sessions -------------------------------------------------------------------------

    def _toolbox(
        self,
        conversation: Conversation,
        turn: Callable[[], MemoryTurn],
        *,
        from_review: bool = False,
    ) -> Toolbox:
        """The session's tools; ``turn`` gives the consolidation counter they count into.

        Built from the same functions every time, so every toolbox of a session has the
        same ``specs`` (the tools list is part of the cached prefix); a review's
        ``skill_manage`` only stages what it writes."""
        tools = [
            memory_tool(
                self.stores.for_person(conversation.person),
                turn,
                on_write=lambda action, target, entry: self._mirror_write(
                    conversation, action, target, entry
                ),
            ),
            session_search_tool(
                self._search,
                person=conversation.person,
                current_session=lambda: conversation.id,
                names=lambda: conversation.names,
            ),
        ]
        if self.skills is not None:
            policy = SkillPolicy(
                self.settings.skill_approval, conversation.admin, conversation.person
            )
            tools += skill_tools(self.skills, policy, from_review=from_review)
        return Toolbox([*tools, *beside(tools, conversation.provider_tools)])

    def _conversation(  # noqa: PLR0917 - one session's facts, built in one place
        self,
        session_id: str,
        person: str,
        platform: str,
        system_text: str,
        admin: bool,
        group: bool,
        names: tuple[str, ...],
    ) -> Conversation:
        conversation = Conversation(
            id=session_id,
            person=person,
            platform=platform,
            system={"role": "system", "content": system_text},
            toolbox=Toolbox([]),
            admin=admin,
            group=group,
            names=names,
        )
        if self.recall is not None:
            conversation.provider_tools = tuple(self.recall.tools(conversation.subject))
        conversation.toolbox = self._toolbox(conversation, lambda: conversation.memory_turn)
        return conversation

    async def start(
        self,
        spec: SessionSpec,
        *,
        person: str,
        platform_label: str,
        admin: bool = False,
        names: tuple[str, ...] = (),
    ) -> Conversation:
        """A new session: the prompt is built now, from the memory and skills as they are."""
        group = spec.chat_type != "dm"
        prompt = await self._prompt(Subject(person, group, names), platform_label)
        await self.archive.start_session(replace(spec, system_prompt=prompt.text))
        return self._conversation(spec.id, person, platform_label, prompt.text, admin, group, names)

    async def _prompt(self, subject: Subject, platform: str, summary: str = "") -> SystemPrompt:
        """A session's frozen prompt: SOUL.md, the skills index, the subject's memory
        snapshot and the memory provider's context, as they are now."""
        identity, blocked = await asyncio.to_thread(read_soul, self.home / "SOUL.md")
        snapshot = await asyncio.to_thread(self.stores.for_person(subject.key).snapshot)
        return build_system_prompt(
            identity=identity,
            snapshot=snapshot,
            platform=platform,
            today=self._now().date(),
            skills_index=await self._skills_index(),
            soul_blocked=blocked,
            summary=summary,
            provider_context="" if self.recall is None else await self.recall.context(subject),
        )

    async def _skills_index(self) -> str:
        if self.skills is None:
            return ""
        return await asyncio.to_thread(self.skills.index)

    async def resume(
        self, session_key: str, *, person: str, admin: bool = False, names: tuple[str, ...] = ()
    ) -> Conversation | None:
        """The open session of ``session_key``, continued with its recorded prompt."""
        session = await self.archive.latest_session(session_key)
        if session is None or person not in (await self._people(session.id)):
            return None
        text = await self.archive.system_prompt(session.id)
        if text is None:
            return None
        conversation = self._conversation(
            session.id, person, session.platform, text, admin, session.chat_type != "dm", names
        )
        messages = await self.archive.messages(session.id, viewer=None)
        conversation.history = [chat_message(m) for m in messages]
        conversation.turns = sum(1 for m in messages if m.role == "user")
        conversation.archived = len(messages)
        return conversation

    async def _people(self, session_id: str) -> tuple[str, ...]:
        session = await self.archive.get_session(session_id, viewer=None)
        return session.people if session else ()

    # -- turns ----------------------------------------------------------------------------

    async def turn(
        self,
        conversation: Conversation,
        text: str,
        *,
        speaker: str | None = None,
        author: str | None = None,
        prefetched: Prefetch | None = None,
    ) -> TurnOutcome:
        """One turn. ``speaker`` names the writer in the user message's header (groups);
        ``author`` is the person id the archived user message is recorded as spoken by
        (what per-person budgets count), by default the session's person. ``prefetched``:
        the memory provider's prefetch for ``text``, started when the message arrived."""
        if conversation.compressing is not None:
            # the previous reply did not wait for it; this request needs its result
            with contextlib.suppress(Exception):
                await conversation.compressing
            conversation.compressing = None
        conversation.memory_turn = MemoryTurn()
        from_flush, conversation.unannounced = tuple(conversation.unannounced), []
        user = user_message(text, speaker, self._now())
        author = author or conversation.person
        sent = user  # what the model reads: with recalled memory, if any came in time
        if self.recall is not None:
            recalled = await self.recall.recalled(conversation.subject, text, prefetched)
            if recalled:
                sent = {"role": "user", "content": f"{user['content']}\n\n{recalled}"}
        try:
            result = await run_turn(
                self.model,
                system=conversation.system,
                history=conversation.history,
                user=sent,
                toolbox=conversation.toolbox,
                max_iterations=self.settings.max_tool_iterations,
            )
        except ModelError as exc:  # unavailable, not a chat completion, or refused
            log.warning("turn in session %s failed (%s): %s", conversation.id, exc.kind, exc)
            await self._keep_message(conversation, user, sent, author)
            return TurnOutcome(
                REJECTED if isinstance(exc, ModelRejected) else UNAVAILABLE,
                Usage(),
                error=str(exc),
                error_kind=exc.kind,
                retries=max(0, exc.attempts - 1),
                staged=(*from_flush, *conversation.memory_turn.staged),
            )
        except asyncio.CancelledError:
            # cancelled (the person pressed Ctrl-C, or a drain ran out of time): what they
            # wrote was acknowledged, so it stays in the archive and the history; what the
            # model had half-done in this turn is dropped
            conversation.unannounced[:0] = from_flush  # still to be shown
            await self._keep_message(conversation, user, sent, author)
            raise
        # the archive keeps the person's message as written; the history what was sent
        rows = archived_rows([user, *result.messages[1:]], author, result.usage_at)
        await self.archive.append_exchange(conversation.id, rows, people=[conversation.person])
        conversation.archived += len(rows)
        conversation.history.extend(result.messages)
        conversation.turns += 1
        conversation.usage += result.usage
        if self.recall is not None:
            exchange = Exchange(
                conversation.subject, conversation.id, text, result.reply, time.time()
            )
            self._track(self.recall.sync_turn(exchange), f"provider-sync:{conversation.id}")
        task = self._maybe_review(conversation)
        compression = self.settings.compression
        last_prompt = max((u.prompt_tokens for u in result.usage_at.values()), default=0)
        if compression is not None and compression.due(last_prompt):
            conversation.compressing = self._track(
                self._compress(conversation, compression),
                f"compress:{conversation.id}",
            )
        return TurnOutcome(
            result.reply,
            result.usage,
            review=task,
            retries=result.retries,
            staged=(*from_flush, *conversation.memory_turn.staged),
        )

    async def _keep_message(
        self,
        conversation: Conversation,
        user: dict[str, str],
        sent: dict[str, str],
        author: str,
    ) -> None:
        """A turn that did not finish keeps what the person wrote: archived as written, in
        the history as it was sent."""
        row = NewMessage("user", user["content"], speaker=author)
        await self.archive.append_exchange(conversation.id, [row], people=[conversation.person])
        conversation.archived += 1
        conversation.history.append(sent)

    # -- compression ----------------------------------------------------------------------

    async def _compress(self, conversation: Conversation, settings: CompressionSettings) -> None:
        head, middle, tail = split_history(
            conversation.history,
            keep_head=settings.keep_head,
            tail_tokens=int(settings.tail_share * settings.context_window),
        )
        if sum(map(message_tokens, middle)) < MIN_GAIN * settings.context_window:
            return  # too little to gain: the prompt is mostly system prompt, head and tail
        flush_turn = MemoryTurn()
        toolbox = self._toolbox(conversation, lambda: flush_turn, from_review=True)
        flushed = await review(
            self.model,
            system=conversation.system,
            conversation=[*head, *middle],
            toolbox=toolbox,
            max_iterations=self.settings.review_max_iterations,
            model_name=self.settings.review_model,
        )
        summary, usage = await summarise(
            self.model,
            system=conversation.system,
            messages=[*head, *middle],
            toolbox=toolbox,
            model_name=settings.model,
        )
        conversation.review_usage += flushed.usage + usage
        conversation.unannounced += flushed.staged
        if scan(summary):
            summary = "(the summary was withheld: it matched the injection scanner)"
        parent = await self.archive.get_session(conversation.id, viewer=None)
        if parent is None:
            return
        self.session_ended(conversation, "compression")
        prompt = await self._prompt(conversation.subject, conversation.platform, summary)
        child = continuation(parent, prompt.text)
        await self.archive.start_session(child)
        carried = [*head, *tail]
        # carried rows are history, not turns spoken now: no speaker, so no budget counts them
        rows = archived_rows(carried, None)
        await self.archive.append_exchange(child.id, rows)
        await self.archive.end_session(parent.id, "compressed")
        conversation.id = child.id
        conversation.archived = len(rows)
        conversation.system = prompt.message()
        conversation.history = carried
        conversation.compressions += 1
        log.info(
            "compressed session %s into %s: %d messages summarised, %d kept",
            parent.id,
            child.id,
            len(middle),
            len(carried),
        )

    # -- the memory provider --------------------------------------------------------------

    def session_ended(
        self, conversation: Conversation, reason: Literal["new", "idle", "compression"]
    ) -> None:
        """Tell the memory provider, in the background, that a session ended."""
        if self.recall is not None:
            said = said_in(conversation.history)
            end = SessionEnd(conversation.subject, conversation.id, reason, said)
            self._track(self.recall.session_end(end), f"provider-end:{conversation.id}")

    def _mirror_write(
        self, conversation: Conversation, action: str, target: str, entry: str
    ) -> None:
        """A write the memory tool applied, mirrored to the memory provider (background)."""
        if self.recall is not None:
            work = self.recall.memory_write(conversation.subject, action, target, entry)
            self._track(work, f"provider-write:{conversation.id}")

    # -- review ---------------------------------------------------------------------------

    def _maybe_review(self, conversation: Conversation) -> asyncio.Task[ReviewOutcome] | None:
        settings = self.settings
        if not settings.review_enabled or conversation.turns % settings.review_interval_turns:
            return None
        if conversation.review_task is not None and not conversation.review_task.done():
            return None  # one at a time; the next review sees this turn too
        snapshot = list(conversation.history)

        review_turn = MemoryTurn()  # its own counter: a turn may run alongside it
        toolbox = self._toolbox(conversation, lambda: review_turn, from_review=True)

        async def run() -> ReviewOutcome:
            outcome = await asyncio.wait_for(
                review(
                    self.model,
                    system=conversation.system,
                    conversation=snapshot,
                    toolbox=toolbox,
                    max_iterations=settings.review_max_iterations,
                    model_name=settings.review_model,
                    skills=self.skills is not None,
                ),
                settings.review_timeout_s,
            )
            conversation.review_usage += outcome.usage
            conversation.last_review = outcome
            return outcome

        task = self._track(run(), f"review:{conversation.id}:{conversation.turns}")
        conversation.review_task = task
        return task

    def _track(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        """A named background task, owned by the agent and awaited by ``aclose``."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("background task %s failed: %s", task.get_name(), task.exception())

    async def aclose(self, *, timeout_s: float = 30.0) -> None:
        """Await running reviews (then cancel what is left after ``timeout_s``)."""
        if not self._tasks:
            return
        pending = set(self._tasks)
        _done, left = await asyncio.wait(pending, timeout=timeout_s)
        for task in left:
            task.cancel()
        for task in left:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
