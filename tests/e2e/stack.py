"""The whole gateway over the wire: real PTB / discord.py / openai clients, loopback fakes.

A ``Stack`` is one running gateway (``build_gateway``, as ``mnemo run`` builds it) whose
model is the real ``OpenAIModel`` talking to ``FakeOpenAI`` and whose adapter is the real
platform adapter talking to that platform's emulator. A ``Driver`` speaks the platform's
side of the conversation (people writing, the bot's messages arriving), so each scenario is
written once and runs on both platforms.

The fake model (``respond``) reads the last user message:

- ``remember: X`` -> a ``memory`` tool call adding X to USER.md, then "noted";
  ``remember: X | Y`` -> one call per fact, in the same reply;
- ``long: N``    -> a reply of about N characters holding a fenced Python block;
- ``slow: S``    -> answers after S seconds;
- ``search: Q``  -> a ``session_search`` call for Q, then "noted";
- anything else  -> ``echo: <text>``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_core.models.openai import OpenAIModel
from agent_core.review import REVIEW_INSTRUCTION
from gateway.cli.run import adapters_for
from gateway.config.schema import Config, Paths
from gateway.outbox import DeliveryPolicy
from gateway.service import Gateway
from gateway.wiring import build_gateway
from memory.archive.database import Archive
from tests.fakes.openai_server import Call, Dynamic, FakeOpenAI, Text, ToolCalls

ALICE, BOB, ADMIN, STRANGER = 1, 2, 9, 77


def long_reply(size: int) -> str:
    code = "\n".join(f"    total += {i}  # step {i}" for i in range(size // 60))
    prose = "This paragraph explains the loop. " * 8
    return (
        f"{prose}\n\n```python\ndef run():\n    total = 0\n{code}\n    return total\n```\n\nDone."
    )


async def respond(body: dict[str, Any]) -> Text | ToolCalls:
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return Text("noted")
    content = str(last.get("content") or "")
    if REVIEW_INSTRUCTION[:40] in content:
        return Text("nothing to save")
    text = content.partition("\n")[2] if content.startswith("[") else content
    if text.startswith("remember: "):
        facts = text.removeprefix("remember: ").split(" | ")
        return ToolCalls(
            [Call("memory", {"action": "add", "target": "user", "content": f}) for f in facts]
        )
    if text.startswith("long: "):
        return Text(long_reply(int(text.removeprefix("long: "))))
    if text.startswith("search: "):
        return ToolCalls([Call("session_search", {"query": text.removeprefix("search: ")})])
    if text.startswith("slow: "):
        await asyncio.sleep(float(text.removeprefix("slow: ")))
        return Text("slow answer")
    return Text(f"echo: {text}")


class Driver(Protocol):
    """The platform side of a conversation, in the platform's own terms."""

    platform: str
    group_chat: str
    thread_key: str  # "<chat>:<thread>" as session keys spell it
    token: str

    def config(self) -> dict[str, Any]: ...
    def rename(self, user: int, name: str) -> None: ...
    def dm_chat(self, user: int) -> str: ...
    async def dm(self, user: int, text: str) -> Any: ...
    async def group(self, user: int, text: str, *, mention: bool = False) -> Any: ...
    async def thread(self, user: int, text: str) -> Any: ...
    async def thread_replies(self, n: int, *, within: float = 10) -> list[str]: ...
    async def command(self, user: int, text: str, *, group: bool = False) -> Any: ...
    async def typed_in_group(self, user: int, text: str) -> Any: ...
    def close_private_chat(self, user: int) -> None: ...
    async def private_texts(self, user: int, n: int, *, within: float = 10) -> list[str]: ...
    def public_texts(self) -> list[str]: ...
    async def redeliver(self, handle: Any) -> None: ...
    def flood(self, chat: str, seconds: int) -> None: ...
    def unavailable(self, chat: str, times: int) -> None: ...
    async def replies(self, chat: str, n: int, *, within: float = 10) -> list[str]: ...
    def all_replies(self, chat: str) -> list[str]: ...
    def sent_at(self, chat: str) -> list[float]: ...
    def sent_count(self) -> int: ...
    def code_blocks(self, chat: str) -> list[tuple[int, int]]: ...
    def sent_files(self, chat: str) -> list[tuple[str, bytes]]: ...
    def registered_commands(self) -> list[str]: ...
    def typing_shown(self, chat: str) -> int: ...
    async def press(self, user: int, label: str) -> Any:
        """``user`` presses the button ``label`` of the latest message that shows it to
        them now (their private chat, or an answer only they see); the message's handle."""

    async def shown(
        self, user: int, handle: Any, *, edits: int = 0, within: float = 10
    ) -> tuple[str, list[str]]:
        """The text and button labels of message ``handle`` now, once it was edited at
        least ``edits`` times."""

    def presses_acknowledged(self) -> int:
        """How many presses the bot acknowledged (the spinner stopped in time)."""

    def left_thinking(self) -> int:
        """Commands left showing "thinking…" with no answer (Discord; Telegram has none)."""

    async def malformed(self, user: int) -> dict[str, int]: ...


@dataclass
class Stack:
    home: Path
    driver: Driver
    openai: FakeOpenAI
    archive: Archive
    gateway: Gateway
    extra: dict[str, Any] = field(default_factory=dict)


def stack_config(driver: Driver, memory: dict[str, Any] | None = None, **gateway: Any) -> Config:
    return Config.model_validate(
        {
            "model": {"base_url": "http://unused", "name": "fake-model", "max_retries": 0},
            "memory": {"review": {"enabled": False}, **(memory or {})},
            "platforms": {driver.platform: driver.config()},
            "gateway": {"admins": [f"{driver.platform}:{ADMIN}"], **gateway},
        }
    )


@asynccontextmanager
async def running(
    home: Path,
    driver: Driver,
    openai: FakeOpenAI,
    *,
    clock: Callable[[], float] = time.time,
    memory: dict[str, Any] | None = None,
    **gateway: Any,
) -> AsyncIterator[Stack]:
    """One gateway on ``driver``'s emulator; stopped (drained) on the way out. ``gateway``
    is the config's gateway section, ``memory`` settings for its memory section; ``clock``
    the gateway's (pairing, budgets)."""
    config = stack_config(driver, memory, **gateway)
    paths = Paths(home, home / "config.yaml", explicit_config=False)
    model = OpenAIModel(
        name="fake-model", base_url=openai.base_url, api_key="sk-test-key", max_retries=0
    )
    async with await Archive.open(paths.state_db) as archive:
        gw = build_gateway(
            paths=paths,
            config=config,
            archive=archive,
            model=model,
            adapters=adapters_for(config, {token_env(config, driver.platform): driver.token}),
            clock=clock,
        )
        gw.outbox.policy = DeliveryPolicy(backoff_s=0.05, max_attempts=3)
        await gw.start()
        try:
            yield Stack(home, driver, openai, archive, gw)
        finally:
            await gw.stop()
            await model.close()


def token_env(config: Config, platform: str) -> str:
    section = getattr(config.platforms, platform)
    return str(section.token_env)


def user_texts(openai: FakeOpenAI) -> str:
    """Everything the model was ever shown (to prove what never reached it)."""
    return json.dumps([r.body for r in openai.requests], ensure_ascii=False)


def default_model() -> Dynamic:
    return Dynamic(respond)
