"""Recalled memory started when a message arrives, not when its turn begins.

A message can wait in its chat's lane while an earlier turn of that chat runs; the memory
provider's ``prefetch`` for it runs in the meantime. ``EarlyRecall.start`` (called by the
intake as it queues a plain message) starts it for the subject and the text the turn will
use; ``take`` (called by the turn) hands it over when the turn answers exactly that one
message, and cancels it otherwise (a merged batch, a skill's rewrite: the agent then asks
anew, with the text it really sends). The agent checks subject and text again before it
uses one, so a prefetch can never serve another person's turn. Prefetches that no turn takes
(a cancelled lane, a stop) are cancelled after ``keep_s`` or at ``close``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from adapters.messages import InboundMessage
from agent_core.recall import Prefetch, Recall
from gateway.sessions import SessionKey, Sessions, person_names
from gateway.turn_text import merged_text
from memory.providers import Subject

__all__ = ["EarlyRecall"]


class EarlyRecall:
    def __init__(
        self,
        recall: Recall,
        sessions: Sessions,
        *,
        keep_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.recall = recall
        self.sessions = sessions
        self.keep_s = keep_s
        self._clock = clock
        self._started: dict[str, tuple[float, Prefetch]] = {}

    def __len__(self) -> int:
        return len(self._started)

    def start(self, key: SessionKey, message: InboundMessage) -> None:
        """Start the prefetch for a plain message that was just queued."""
        if message.is_command or message.is_callback or not message.text.strip():
            return
        self._prune()
        shared = key.user_id is None and message.chat_type != "dm"
        person = self.sessions.person_for(message, key)
        subject = Subject(person, message.chat_type != "dm", person_names(message, person))
        prefetch = self.recall.start(subject, merged_text([message], shared=shared))
        self._started[message.dedup_key] = (self._clock(), prefetch)

    def take(self, messages: Sequence[InboundMessage]) -> Prefetch | None:
        """The prefetch of a turn that answers one message; the others are cancelled."""
        found = [self._started.pop(m.dedup_key, None) for m in messages]
        kept = found[0][1] if len(found) == 1 and found[0] is not None else None
        for item in found:
            if item is not None and item[1] is not kept:
                item[1].task.cancel()
        return kept

    def _prune(self) -> None:
        cutoff = self._clock() - self.keep_s
        for dedup_key, (started, prefetch) in list(self._started.items()):
            if started < cutoff:
                prefetch.task.cancel()
                del self._started[dedup_key]

    def close(self) -> None:
        for _, prefetch in self._started.values():
            prefetch.task.cancel()
        self._started.clear()
