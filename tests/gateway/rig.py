"""The gateway wired from a config around an in-process adapter (``ChatAdapter``), a
scripted model and a real archive: what the gateway tests drive."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from agent_core.models import ChatMessage, ModelReply, ToolCall, ToolSpec, Usage
from agent_core.models.scripted import ScriptedModel
from agent_core.recall import FENCE
from agent_core.review import REVIEW_INSTRUCTION
from gateway.config.schema import Config, Paths
from gateway.coordination import Coordinator
from gateway.ledger import DeliveryLedger
from gateway.outbox import DeliveryPolicy
from gateway.service import Gateway
from gateway.storage import Storage
from gateway.wiring import build_gateway
from memory.archive import ArchiveStore
from memory.providers import Provider
from tests.gateway.harness import ChatAdapter

ADMIN = "9"


#: What ``responder`` makes: a ScriptedModel ``respond`` that always awaits.
AsyncResponder = Callable[[Sequence[ChatMessage], Sequence[ToolSpec]], Awaitable[ModelReply]]


def responder(delay: float = 0.0) -> AsyncResponder:
    """Echo; ``remember: X`` saves X to USER.md through the real memory tool, ``search: Q``
    calls session_search."""
    calls = iter(range(10_000))

    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        last = messages[-1]
        if last["role"] == "user" and REVIEW_INSTRUCTION[:40] in str(last["content"]):
            return ModelReply("nothing to save")
        if last["role"] == "tool":
            return ModelReply("saved", usage=Usage(10, 2, 4))
        await asyncio.sleep(delay)
        text = str(last["content"]).partition("\n")[2]
        if text.startswith("remember: "):
            args = {"action": "add", "target": "user", "content": text.removeprefix("remember: ")}
            call = ToolCall(f"c{next(calls)}", "memory", json.dumps(args))
            return ModelReply(None, (call,), usage=Usage(10, 2, 0))
        if text.startswith("search: "):  # the words asked, not a recalled block after them
            args = {"query": text.removeprefix("search: ").split(f"\n\n<{FENCE} ")[0]}
            call = ToolCall(f"c{next(calls)}", "session_search", json.dumps(args))
            return ModelReply(None, (call,), usage=Usage(10, 2, 0))
        return ModelReply(f"echo: {text}", usage=Usage(100, 5, 60))

    return respond


def config(**gateway: Any) -> Config:
    return Config.model_validate(
        {
            "platforms": {
                "telegram": {
                    "enabled": True,
                    "allowed_users": ["1", "2", ADMIN],
                    "allowed_chats": ["-100"],
                    "free_response_chats": ["-200"],
                }
            },
            "gateway": {"admins": [f"telegram:{ADMIN}"], **gateway},
            "memory": {"review": {"enabled": False}},
        }
    )


class Rig:
    def __init__(
        self,
        home: Path,
        archive: ArchiveStore,
        cfg: Config,
        delay: float = 0.0,
        clock: Callable[[], float] = time.time,
        *,
        coordinator: Coordinator | None = None,
        storage: Storage | None = None,
    ) -> None:
        """``coordinator``: shared with other rigs, as replicas of one gateway share it;
        ``storage``: the gateway's state from ``gateway.storage.open_storage`` (either
        backend) instead of ``archive`` and the home folder."""
        self.coordinator = coordinator
        self.home = home
        self.storage = storage
        self.archive: ArchiveStore = archive if storage is None else storage.archive
        self.config = cfg
        self.clock = clock
        self.model = ScriptedModel(respond=responder(delay))
        self.adapter = ChatAdapter()
        self.gateway = self.build()

    def tool_results(self) -> list[str]:
        """Every tool result the model was shown, once each, in order."""
        seen = {
            m["tool_call_id"]: str(m["content"])
            for r in self.model.requests
            for m in r.messages
            if m["role"] == "tool"
        }
        return list(seen.values())

    def build(
        self, provider: Provider | None = None, ledger: DeliveryLedger | None = None
    ) -> Gateway:
        paths = Paths(self.home, self.home / "config.yaml", explicit_config=False)
        gateway = build_gateway(
            paths=paths,
            config=self.config,
            archive=self.archive,
            storage=self.storage,
            model=self.model,
            adapters={"telegram": self.adapter},
            clock=self.clock,
            provider=provider,
            ledger=ledger,
            coordinator=self.coordinator,
        )
        gateway.outbox.policy = DeliveryPolicy(backoff_s=0.01, max_attempts=3)
        return gateway
