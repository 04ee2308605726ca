"""A memory provider kept in this process, for testing the agent's side of the contract.

``RecordingProvider`` implements ``memory.providers.Provider``: it records every call with
its subject, answers what the test sets per subject, and can be made slow or broken per hook.
It keeps what it is told per subject key, as a real provider must, so a test can check that
nothing of one person reaches another's answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.providers import Exchange, ProviderTool, SessionEnd, Subject


@dataclass
class RecordingProvider:
    name: str = "recording"
    context_text: dict[str, str] = field(default_factory=dict)  # by subject key
    calls: list[tuple[str, Any]] = field(default_factory=list)
    delay: dict[str, float] = field(default_factory=dict)  # hook -> seconds
    fail: dict[str, Exception] = field(default_factory=dict)  # hook -> raised
    told: dict[str, list[str]] = field(default_factory=dict)  # subject key -> what it heard

    async def _hook(self, hook: str, detail: Any) -> None:
        self.calls.append((hook, detail))
        if hook in self.delay:
            await asyncio.sleep(self.delay[hook])
        if hook in self.fail:
            raise self.fail[hook]

    def hooks(self, name: str) -> list[Any]:
        return [detail for hook, detail in self.calls if hook == name]

    async def context(self, subject: Subject) -> str:
        await self._hook("context", subject)
        return self.context_text.get(subject.key, "")

    async def prefetch(self, subject: Subject, message: str) -> str:
        await self._hook("prefetch", (subject, message))
        heard = self.told.get(subject.key, [])
        return f"earlier, {subject.key} said: {heard[-1]}" if heard else ""

    async def sync_turn(self, exchange: Exchange) -> None:
        await self._hook("sync_turn", exchange)
        self.told.setdefault(exchange.subject.key, []).append(exchange.user)

    async def on_session_end(self, end: SessionEnd) -> None:
        await self._hook("session_end", end)

    async def on_memory_write(self, subject: Subject, action: str, target: str, entry: str) -> None:
        await self._hook("memory_write", (subject, action, target, entry))

    def tools(self, subject: Subject) -> Sequence[ProviderTool]:
        self.calls.append(("tools", subject))

        async def recall(query: str) -> dict[str, Any]:
            """Look up what the memory provider keeps about this person.

            Args:
                query: words to look for
            """
            heard = self.told.get(subject.key, [])
            return {"success": True, "found": [t for t in heard if query.lower() in t.lower()]}

        return [recall]

    async def aclose(self) -> None:
        self.calls.append(("aclose", None))
