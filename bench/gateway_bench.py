#!/usr/bin/env python3
"""End-to-end benchmark of the gateway through the Telegram emulator, zero-latency model.

    .venv/bin/python bench/gateway_bench.py [--chats 1000] [--messages-per-chat 3]
                                             [--concurrency 8] [--solo 200] [--quick]

Two systems face the same emulator (``tests.fakes.telegram_server.FakeBotAPI`` on
127.0.0.1) and the same load, one after the other: the *floor*, a minimal client on the
real PTB ``Bot`` (same HTTPX stack and pool sizes as the adapter) that long-polls and
answers each update with one sendMessage, at most ``--concurrency`` sends at once; and the
*gateway*: ``build_gateway`` + ``TelegramAdapter`` + an in-process echo model, review and
compression off (one model call per turn), ``max_concurrent_turns = --concurrency``.

Load is a closed loop per chat: chats 1..N send M messages each, the next one pushed when
the emulator records the reply to the previous one, at most ``--window`` outstanding
(default: every chat). Latency = the emulator's monotonic time of the sendMessage minus
the push time of the update it answers; at full load that is mostly queueing, so an
unloaded pass (``--solo`` messages, one at a time) follows. Each message must get exactly
one reply, the expected text, in order per chat, nothing else sent (checked again after
stop); anything else fails the run. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import html
import os
import platform
import pstats
import resource
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes lives in the repo

from telegram import Bot, Update
from telegram.request import HTTPXRequest

from adapters.telegram.client import TelegramAdapter
from agent_core.models import ChatMessage, ModelReply, ToolSpec
from agent_core.models.scripted import echo
from gateway.config.schema import Config, Paths
from gateway.wiring import build_gateway
from memory.archive.database import Archive
from tests.fakes.telegram_server import FakeBotAPI, SentMessage

POLL = timedelta(seconds=10)
HTTP_TIMEOUT = 10.0  # the adapter's request_timeout default


class EchoModel:
    """``scripted.echo`` at once. Not ``ScriptedModel``: it deep-copies every request for
    tests to inspect, a cost (CPU, ~20 MB at 3,000 turns) that is not the gateway's."""

    name = "echo"

    async def complete(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], **_: Any
    ) -> ModelReply:
        return echo(messages, tools)


def reply_to(text: str) -> str:
    return f"(dry run) you said: {text}"  # what echo answers


class _Sent(list[SentMessage]):
    """``FakeBotAPI.sent`` that calls ``hook`` as each sendMessage is recorded."""

    def __init__(self, hook: Callable[[SentMessage], None]) -> None:
        super().__init__()
        self.hook = hook

    def append(self, item: SentMessage) -> None:
        super().append(item)
        self.hook(item)


@dataclass
class Result:
    replies: int
    seconds: float
    latencies: list[float]

    @property
    def rate(self) -> float:
        return self.replies / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Driver:
    """Pushes messages; matches every recorded sendMessage to the update it answers."""

    api: FakeBotAPI
    expected: dict[int, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    outstanding: dict[int, tuple[str, float]] = field(default_factory=dict)
    ready: deque[int] = field(default_factory=deque)
    left: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    window: int = 1

    def __post_init__(self) -> None:
        self.api.sent = _Sent(self.on_sent)

    async def run(self, chats: Sequence[int], per_chat: int, window: int, limit: float) -> Result:
        self.ready, self.window, self.latencies = deque(chats), window, []
        self.left = dict.fromkeys(chats, per_chat)
        self.done.clear()
        began = time.perf_counter()
        self.fill()
        try:
            await asyncio.wait_for(self.done.wait(), limit)
        except TimeoutError:
            missing = sum(self.left.values()) + len(self.outstanding)
            waiting = ", ".join(
                f"chat {c}: {t!r}" for c, (t, _) in list(self.outstanding.items())[:5]
            )
            raise SystemExit(
                f"timed out after {limit:.0f}s; {missing} replies missing ({waiting})"
            ) from None
        return Result(len(self.latencies), time.perf_counter() - began, self.latencies)

    def fill(self) -> None:
        while self.ready and len(self.outstanding) < self.window:
            chat = self.ready.popleft()
            self.left[chat] -= 1
            sent_before = self.expected.setdefault(chat, [])
            text = f"c{chat} m{len(sent_before) + 1}"
            sent_before.append(reply_to(text))
            update = self.api.push_text(chat, chat, text)
            self.outstanding[chat] = (reply_to(text), time.monotonic())
            self.deliver(update)
        if not self.outstanding and not self.ready:
            self.done.set()

    def deliver(self, update: dict[str, Any]) -> None:
        """Polling: the emulator queues the update for getUpdates, nothing more to do.
        (``bench/replicas_bench.py`` posts it to a replica's webhook instead.)"""

    def on_sent(self, sent: SentMessage) -> None:
        entry = self.outstanding.pop(sent.chat_id, None)
        if entry is None:
            self.errors.append(f"chat {sent.chat_id}: reply {sent.text!r} to nothing outstanding")
            return
        if sent.text != entry[0]:
            self.errors.append(f"chat {sent.chat_id}: got {sent.text!r}, expected {entry[0]!r}")
        self.latencies.append(sent.time - entry[1])
        if self.left.get(sent.chat_id, 0) > 0:
            self.ready.append(sent.chat_id)
        self.fill()

    def check(self) -> None:
        """Every message answered exactly once, in order; nothing else sent."""
        got: dict[int, list[str]] = {}
        for sent in self.api.sent:
            got.setdefault(sent.chat_id, []).append(sent.text)
        bad = sorted(
            c for c in got.keys() | self.expected.keys() if got.get(c) != self.expected.get(c)
        )
        self.errors += [f"chat {c}: sent {got.get(c)} != {self.expected.get(c)}" for c in bad[:5]]
        if self.errors:
            raise SystemExit("correctness check failed:\n  " + "\n  ".join(self.errors[:20]))


@dataclass
class Report:
    loaded: Result
    solo: Result | None
    calls: Counter[str]  # requests the emulator received during the passes, by method
    transactions: int  # archive write transactions during the passes (gateway only)
    rss_mb: float  # peak RSS of the process after the phase

    @property
    def turns(self) -> int:
        return self.loaded.replies + (self.solo.replies if self.solo else 0)


async def passes(driver: Driver, args: argparse.Namespace) -> tuple[Result, Result | None]:
    chats = range(1, args.chats + 1)
    loaded = await driver.run(chats, args.messages_per_chat, args.window, args.timeout)
    solo = await driver.run(chats[: args.solo], 1, 1, args.timeout) if args.solo else None
    await asyncio.sleep(0.2)  # a late duplicate would land here
    return loaded, solo


def report(driver: Driver, results: tuple[Result, Result | None], calls: int, runs: int) -> Report:
    seen = Counter(c.method for c in driver.api.calls[calls:])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return Report(*results, seen, runs, peak)


async def run_floor(args: argparse.Namespace) -> Report:
    async with FakeBotAPI() as api:
        driver, slots = Driver(api), asyncio.Semaphore(args.concurrency)
        tasks: set[asyncio.Task[None]] = set()
        request = HTTPXRequest(256, HTTP_TIMEOUT, HTTP_TIMEOUT, HTTP_TIMEOUT, HTTP_TIMEOUT)
        polls = HTTPXRequest(1, HTTP_TIMEOUT, HTTP_TIMEOUT, HTTP_TIMEOUT, HTTP_TIMEOUT)
        bot = Bot(api.token, base_url=api.base_url, request=request, get_updates_request=polls)

        async def answer(update: Update) -> None:
            message = update.effective_message
            assert message is not None and message.text is not None
            async with slots:
                text = html.escape(reply_to(message.text), quote=False)
                await bot.send_message(message.chat_id, text, parse_mode="HTML")

        async def poll() -> None:
            offset: int | None = None
            while True:
                updates = await bot.get_updates(
                    offset=offset, timeout=POLL, allowed_updates=["message", "callback_query"]
                )
                for update in updates:
                    offset = update.update_id + 1
                    task = asyncio.create_task(answer(update))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

        async with bot:
            poller, before = asyncio.create_task(poll()), len(api.calls)
            try:
                results = await passes(driver, args)
            finally:
                poller.cancel()
                await asyncio.gather(poller, *tasks, return_exceptions=True)
        driver.check()
        return report(driver, results, before, 0)


class CountingWriter:
    """Wraps the archive's writer to count its transactions (an instrument, not a change)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.runs = inner, 0

    async def run(self, work: Any, *, transaction: bool = True) -> Any:
        self.runs += 1
        return await self.inner.run(work, transaction=transaction)

    async def close(self) -> None:
        await self.inner.close()


async def run_gateway(args: argparse.Namespace) -> Report:
    config = Config.model_validate(
        {
            "platforms": {"telegram": {"enabled": True, "allowed_users": ["*"]}},
            "memory": {"review": {"enabled": False}},
            "compression": {"enabled": False},
            "gateway": {"max_concurrent_turns": args.concurrency},
        }
    )
    with tempfile.TemporaryDirectory(prefix="mnemo-gateway-bench-") as tmp:
        home = Path(tmp)
        async with FakeBotAPI() as api, await Archive.open(home / "state.db") as archive:
            driver = Driver(api)
            writer = archive._writer = CountingWriter(archive._writer)  # type: ignore[assignment]
            adapter = TelegramAdapter(api.token, base_url=api.base_url, poll_timeout=POLL.seconds)
            gateway = build_gateway(
                paths=Paths(home, home / "config.yaml", explicit_config=False),
                config=config,
                archive=archive,
                model=EchoModel(),
                adapters={"telegram": adapter},
            )
            await gateway.start()
            runs, before, profile = writer.runs, len(api.calls), cProfile.Profile()
            try:
                if args.profile:
                    profile.enable()
                results = await passes(driver, args)
                profile.disable()
            finally:
                await gateway.stop()
            if args.profile:
                pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(40)
            driver.check()  # again after stop: the outbox flush must not send anything twice
            return report(driver, results, before, writer.runs - runs)


def cpu_check() -> float:
    """ms for a fixed pure-Python loop: on a shared VM it shows whether the CPU held steady."""
    began, total = time.perf_counter(), 0
    for i in range(1_000_000):
        total += i
    return 1000 * (time.perf_counter() - began)


async def run(args: argparse.Namespace) -> tuple[Report, Report]:
    """The floor, then the gateway. Raises SystemExit when a check fails or a pass times out."""
    print(f"floor: {args.chats} chats x {args.messages_per_chat} ...", file=sys.stderr)
    floor = await run_floor(args)
    print(f"gateway: {args.chats} chats x {args.messages_per_chat} ...", file=sys.stderr)
    return floor, await run_gateway(args)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return " | ".join(c.rjust(n) if i else c.ljust(n) for i, (c, n) in pairs)

    return "\n".join([line(header), "-+-".join("-" * n for n in widths), *map(line, rows)])


def render(args: argparse.Namespace, floor: Report, gw: Report) -> str:
    def row(name: str, f: float, g: float, digits: int = 1) -> list[str]:
        return [name, f"{f:,.{digits}f}", f"{g:,.{digits}f}", f"{g / f:.2f}" if f else "—"]

    def pcts(label: str, f: Result, g: Result, digits: int) -> list[list[str]]:
        return [row(f"latency p{q} ms, {label}", f.pct(q / 100), g.pct(q / 100), digits)
                for q in (50, 95, 99)]  # fmt: skip

    w = args.window
    rows = [row(f"turns/s, {w} in flight", floor.loaded.rate, gw.loaded.rate, 0)]
    rows += pcts(f"{w} in flight", floor.loaded, gw.loaded, 1)
    if floor.solo and gw.solo:
        rows += pcts("one at a time", floor.solo, gw.solo, 2)
    for method in ("getUpdates", "sendMessage", "sendChatAction"):
        f, g = (r.calls[method] / r.turns for r in (floor, gw))
        rows.append(row(f"{method} requests per turn", f, g, 2))
    rows.append(
        ["archive write transactions per turn", "—", f"{gw.transactions / gw.turns:.2f}", ""]
    )
    rows.append(row("peak RSS MB (process, after the phase)", floor.rss_mb, gw.rss_mb, 0))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"mnemo gateway benchmark — {args.chats:,} chats x {args.messages_per_chat} messages,"
        f" closed loop, window {w}; solo pass {args.solo}; max_concurrent_turns = floor sends"
        f" = {args.concurrency}\nPython {platform.python_version()}, {os.cpu_count()} CPUs,"
        f" load average (1, 5, 15 min) at the end {load}\n\n"
        + table(["metric", "floor", "gateway", "gateway/floor"], rows)
        + "\n\nEvery message answered exactly once, in order per chat (checked after stop too)."
    )


FLAGS: tuple[tuple[str, Any, Any, str], ...] = (
    ("--chats", int, 1000, "distinct private chats (user ids 1..N)"),
    ("--messages-per-chat", int, 3, "messages each chat sends, each awaiting its reply"),
    ("--concurrency", int, 8, "gateway.max_concurrent_turns = the floor's concurrent sends"),
    ("--window", int, None, "messages outstanding at once (default: one per chat)"),
    ("--solo", int, 200, "messages in the unloaded pass, one at a time (0 skips it)"),
    ("--timeout", float, 600.0, "seconds each pass may take before the run fails"),
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for flag, kind, default, text in FLAGS:
        parser.add_argument(flag, type=kind, default=default, help=text)
    parser.add_argument("--profile", action="store_true", help="cProfile the gateway passes")
    parser.add_argument("--quick", action="store_true", help="100 chats, solo 50 (smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.chats, args.solo = 100, min(args.solo, 50)
    args.solo = min(args.solo, args.chats)
    args.window = args.window or args.chats
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    before = cpu_check()
    floor, gateway = asyncio.run(run(args))
    print(render(args, floor, gateway))
    print(f"CPU check (1M-step Python loop): {before:.0f} ms before, {cpu_check():.0f} ms after.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
