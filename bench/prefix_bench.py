"""Prefix reuse and turn overhead of the agent, against an in-process zero-latency model.

    .venv/bin/python bench/prefix_bench.py [--turns 20] [--sessions 1000]

1. Prefix reuse: a 20-turn session whose model saves a memory entry every few turns. For
   each request we print the share of its prompt (the JSON of tools + messages, as a
   provider sees it) that equals the previous request's prompt prefix, for mnemo (frozen
   system prompt) beside a baseline that re-renders memory into the system prompt on every
   turn. Target: >= 95% for turns 2-20.
2. Turn overhead: N concurrent sessions, one turn each, against a model that answers at once
   and does no I/O; we print turns/s and the p50/p99 time our code adds per turn (prompt,
   tools, archive transaction). Targets: p99 < 5 ms and >= 500 turns/s on 2 cores.

Everything runs on a temporary home on this machine; nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from agent_core.agent import Agent, AgentSettings
from agent_core.models import ChatMessage, ModelReply, ToolCall, ToolSpec, Usage
from agent_core.models.scripted import ScriptedModel
from agent_core.prompt import DEFAULT_IDENTITY, build_system_prompt
from memory import MemoryLimits, MemoryStores
from memory.archive.database import Archive, SessionSpec, new_session_id


def prompt_text(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> str:
    return json.dumps(list(tools), separators=(",", ":")) + json.dumps(
        list(messages), separators=(",", ":"), ensure_ascii=False
    )


def shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def memory_writer(every: int) -> ScriptedModel:
    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        last = messages[-1]
        text = str(last.get("content", ""))
        if last["role"] == "user" and text.endswith(f"#{every}"):
            args = {"action": "add", "content": f"Fact learned at {text.splitlines()[-1]}"}
            return ModelReply(None, (ToolCall("c", "memory", json.dumps(args)),), Usage())
        return ModelReply("Sure — here is a short answer to that.", usage=Usage())

    return ScriptedModel(respond=respond)


async def prefix_reuse(turns: int, every: int) -> list[tuple[int, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        async with await Archive.open(home / "state.db") as archive:
            stores = MemoryStores(home / "memories", limits=MemoryLimits(4000, 2000))
            model = memory_writer(every)
            agent = Agent(
                model=model,
                archive=archive,
                stores=stores,
                home=home,
                settings=AgentSettings(review_enabled=False),
            )
            spec = SessionSpec(new_session_id(), "telegram", "1", "dm", ("telegram-1",))
            conversation = await agent.start(spec, person="telegram-1", platform_label="telegram")
            store = stores.for_person("telegram-1")
            ours: list[str] = []
            baseline: list[str] = []
            for n in range(1, turns + 1):
                before = len(model.requests)
                tag = f"#{every}" if n % every == 0 else ""
                await agent.turn(conversation, f"turn {n}: tell me something{tag}")
                # baseline: the same requests, with memory re-rendered into the system prompt
                fresh = build_system_prompt(
                    identity=DEFAULT_IDENTITY,
                    snapshot=store.snapshot(),
                    platform="telegram",
                    today=date.today(),
                ).message()
                for request in model.requests[before:]:
                    ours.append(prompt_text(request.messages, request.tools))
                    baseline.append(prompt_text([fresh, *request.messages[1:]], request.tools))
            rows = []
            for i in range(1, len(ours)):
                rows.append(
                    (
                        i + 1,
                        shared_prefix(ours[i - 1], ours[i]) / len(ours[i - 1]),
                        shared_prefix(baseline[i - 1], baseline[i]) / len(baseline[i - 1]),
                    )
                )
            return rows


async def overhead(sessions: int) -> tuple[float, float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        async with await Archive.open(home / "state.db") as archive:
            stores = MemoryStores(home / "memories")
            model = ScriptedModel(respond=lambda m, t: ModelReply("ok", usage=Usage(10, 1, 0)))
            agent = Agent(
                model=model,
                archive=archive,
                stores=stores,
                home=home,
                settings=AgentSettings(review_enabled=False),
            )
            conversations = []
            for n in range(sessions):
                person = f"telegram-{n}"
                spec = SessionSpec(new_session_id(), "telegram", str(n), "dm", (person,))
                conversations.append(
                    await agent.start(spec, person=person, platform_label="telegram")
                )
            latencies: list[float] = []

            async def one(conversation: Any) -> None:
                start = time.perf_counter()
                await agent.turn(conversation, "hello there")
                latencies.append(time.perf_counter() - start)

            began = time.perf_counter()
            await asyncio.gather(*(one(c) for c in conversations))
            elapsed = time.perf_counter() - began
            # sequential turns: the time our code adds to one turn with nothing else running
            solo: list[float] = []
            for conversation in conversations[: min(300, sessions)]:
                start = time.perf_counter()
                await agent.turn(conversation, "and again")
                solo.append(time.perf_counter() - start)
            solo.sort()
            return (
                sessions / elapsed,
                statistics.median(solo) * 1000,
                solo[int(len(solo) * 0.99) - 1] * 1000,
                statistics.median(latencies) * 1000,
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--every", type=int, default=4, help="a memory write every N turns")
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args(argv)
    rows = asyncio.run(prefix_reuse(args.turns, args.every))
    print(f"Prefix reuse: {args.turns} turns, a memory write every {args.every} turns")
    print("request | ours: share of previous prompt reused | baseline (memory re-rendered)")
    print("--------+---------------------------------------+------------------------------")
    for number, ours, base in rows:
        print(f"{number:7d} | {ours:37.1%} | {base:28.1%}")
    ours_min = min(r[1] for r in rows)
    base_min = min(r[2] for r in rows)
    ours_mean = statistics.mean(r[1] for r in rows)
    base_mean = statistics.mean(r[2] for r in rows)
    print(
        f"min     | {ours_min:37.1%} | {base_min:28.1%}\n"
        f"mean    | {ours_mean:37.1%} | {base_mean:28.1%}\n"
        f"target  | >= 95% on every request after the first: {'yes' if ours_min >= 0.95 else 'NO'}"
    )
    rate, p50, p99, concurrent_p50 = asyncio.run(overhead(args.sessions))
    print(f"\nTurn overhead: {args.sessions} sessions, zero-latency in-process model")
    rows2 = [
        (
            "turns/s, all sessions at once",
            f"{rate:.0f}",
            f">= 500 {'yes' if rate >= 500 else 'NO'}",
        ),
        ("our time per turn p50 ms (sequential)", f"{p50:.2f}", ""),
        (
            "our time per turn p99 ms (sequential)",
            f"{p99:.2f}",
            f"< 5 {'yes' if p99 < 5 else 'NO'}",
        ),
        ("turn latency p50 ms inside the burst", f"{concurrent_p50:.2f}", "(queueing)"),
    ]
    print(f"{'metric':38} | {'value':>8} | target")
    print(f"{'-' * 38}-+-{'-' * 8}-+-{'-' * 12}")
    for name, value, target in rows2:
        print(f"{name:38} | {value:>8} | {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
