#!/usr/bin/env python3
"""The gateway with 1 and 3 replicas (issue 16), through the Telegram emulator in webhook mode.

    .venv/bin/python bench/replicas_bench.py [--setups sqlite:1,postgres:1,postgres:3]
        [--chats 1000] [--messages-per-chat 3] [--concurrency 8] [--solo 200]
        [--dsn DSN] [--redis URL] [--quick]

Each setup is N gateway *processes* (one OS process per replica, as ``mnemo run`` is
deployed: each has its own event loop, which is what scale-out adds; N gateways in this
process would share one loop and one core), each built like ``mnemo run`` builds it
(``open_coordinator``, ``open_storage``, ``build_gateway``) but with the in-process echo
model of ``bench/gateway_bench.py``, Telegram in webhook mode. ``sqlite``: one replica on a
SQLite home, coordination ``local``. ``postgres``: ``storage.backend: postgres`` in a fresh
schema of ``--dsn``'s database and ``coordination.backend: redis`` under a fresh key
namespace of ``--redis``; both removed afterwards. Telegram delivers a bot's updates to one
URL, so this bench plays the load balancer: it posts each update, with the secret, to the
replicas' webhooks round robin. The load, the latency and the correctness checks are
``bench/gateway_bench.py``'s (closed loop per chat; each message answered exactly once, in
order per chat, nothing else sent, checked again after every replica stopped). Only
loopback; the run ends by itself. See bench/README.md, *Replicas*.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

import aiohttp

from bench.gateway_bench import Driver, EchoModel, Result, cpu_check, table
from tests.fakes.telegram_server import FakeBotAPI

REPO = Path(__file__).resolve().parents[1]
SECRET = secrets.token_urlsafe(24)  # the webhooks' secret, new each run
HOOK = "https://bot.example.org/telegram"
DSN = os.environ.get("MNEMO_BENCH_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("MNEMO_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")


# -- one replica: the child process --------------------------------------------------------


async def serve(home: Path) -> int:
    """Run one gateway from ``home/bench.json`` until SIGTERM; print its webhook port."""
    from adapters.telegram.client import TelegramAdapter  # noqa: PLC0415
    from gateway.cli.run import adapters_for  # noqa: PLC0415
    from gateway.config.schema import Config, Paths  # noqa: PLC0415
    from gateway.coordination import open_coordinator  # noqa: PLC0415
    from gateway.storage import open_storage  # noqa: PLC0415
    from gateway.wiring import build_gateway  # noqa: PLC0415

    logging.basicConfig(
        level=os.environ.get("MNEMO_BENCH_LOG_LEVEL", "WARNING"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    config = Config.model_validate(json.loads((home / "bench.json").read_text("utf-8")))
    paths = Paths(home, home / "config.yaml", explicit_config=False)
    environ = dict(os.environ)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump_tasks)
    shared = config.coordination
    async with contextlib.AsyncExitStack() as parts:
        coordinator = await open_coordinator(
            shared.backend, environ=environ, namespace=shared.namespace
        )
        parts.push_async_callback(coordinator.aclose)
        storage = await parts.enter_async_context(open_storage(paths, config, environ))
        adapters = adapters_for(config, environ)
        gateway = build_gateway(
            paths=paths,
            config=config,
            storage=storage,
            model=EchoModel(),
            adapters=adapters,
            coordinator=coordinator,
        )
        await parts.enter_async_context(gateway)
        adapter = adapters["telegram"]
        assert isinstance(adapter, TelegramAdapter)
        print(json.dumps({"port": adapter.webhook_port}), flush=True)
        await stop.wait()
    return 0


def dump_tasks() -> None:
    """SIGUSR1: every task's stack to stderr (the bench asks for it when a pass fails)."""
    tasks = asyncio.all_tasks()
    print(f"--- {len(tasks)} tasks ---", file=sys.stderr)
    for task in tasks:
        task.print_stack(limit=12, file=sys.stderr)
    sys.stderr.flush()


# -- the bench: replicas, the load balancer, the passes ------------------------------------


@dataclass(frozen=True, slots=True)
class Setup:
    backend: str  # sqlite | postgres
    replicas: int
    sticky: bool = False  # each chat always to the same replica (chat id mod N)

    @property
    def label(self) -> str:
        store = "sqlite" if self.backend == "sqlite" else "postgres+redis"
        return f"{store} x{self.replicas}" + (" sticky" if self.sticky else "")


@dataclass
class Outcome:
    setup: Setup
    loaded: Result
    solo: Result | None
    calls: Counter[str]
    cpu: dict[str, float]  # CPU seconds during the passes, by part

    @property
    def turns(self) -> int:
        return self.loaded.replies + (self.solo.replies if self.solo else 0)


@dataclass
class Balancer(Driver):
    """The driver of ``gateway_bench`` that posts each update to the next replica's webhook,
    round robin, as a load balancer in front of the replicas would."""

    urls: list[str] = field(default_factory=list)
    http: aiohttp.ClientSession | None = None
    sticky: bool = False
    posts: set[asyncio.Task[None]] = field(default_factory=set)
    turn: int = 0

    def deliver(self, update: dict[str, Any]) -> None:
        at = update["message"]["chat"]["id"] if self.sticky else self.turn
        url = self.urls[at % len(self.urls)]
        self.turn += 1
        task = asyncio.create_task(self._post(url, update))
        self.posts.add(task)
        task.add_done_callback(self.posts.discard)

    async def _post(self, url: str, update: dict[str, Any]) -> None:
        assert self.http is not None
        headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
        try:
            async with self.http.post(url, json=update, headers=headers) as answer:
                if answer.status == 200:
                    return
                problem = f"HTTP {answer.status}"
        except (aiohttp.ClientError, OSError) as exc:
            problem = type(exc).__name__
        self.errors.append(f"webhook {url}: {problem}")
        self.done.set()  # the reply will never come: end the pass, the check fails


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds used by each part of a setup between ``start`` and ``stop``: the replica
    processes, their PostgreSQL backends (by ``application_name``), Redis (``INFO cpu``:
    the whole server) and this process (the emulator and the balancer)."""

    def __init__(self, replicas: Sequence[Replica], env: dict[str, str]) -> None:
        self.replicas, self.env = replicas, env
        self.tag = env.get("MNEMO_BENCH_NAMESPACE", "").rstrip(":")
        self.began: dict[str, float] = {}
        self.backends: dict[int, float] = {}

    async def _backend_pids(self) -> list[int]:
        import asyncpg  # noqa: PLC0415

        admin = await asyncpg.connect(self.env["MNEMO_BENCH_ADMIN_DSN"])
        try:
            rows = await admin.fetch(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1", self.tag
            )
        finally:
            await admin.close()
        return [r["pid"] for r in rows]

    async def _redis_cpu(self) -> float:
        from redis.asyncio import Redis  # noqa: PLC0415

        client = Redis.from_url(self.env["MNEMO_REDIS_URL"])
        try:
            info = await client.info("cpu")
        finally:
            await client.aclose()
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    async def _now(self) -> dict[str, float]:
        parts = {
            "replicas": sum(cpu_of(r.proc.pid) for r in self.replicas),
            "bench process": time.process_time(),
        }
        if self.tag:
            parts["Redis"] = await self._redis_cpu()
        return parts

    async def start(self) -> None:
        self.began = await self._now()
        if self.tag:
            self.backends = {pid: cpu_of(pid) for pid in await self._backend_pids()}

    async def stop(self) -> dict[str, float]:
        end = await self._now()
        used = {part: end[part] - self.began[part] for part in end}
        if self.tag:  # a backend that connected during the passes started from nothing
            pids = await self._backend_pids()
            used["PostgreSQL"] = sum(cpu_of(pid) - self.backends.get(pid, 0.0) for pid in pids)
        return used


class Replica:
    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc, self.log, self.port = proc, log, 0

    def tail(self) -> str:
        return self.log.read_text("utf-8", "replace")[-2000:]

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 40)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


def replica_config(setup: Setup, api: FakeBotAPI, args: argparse.Namespace, ns: str) -> Any:
    config: dict[str, Any] = {
        "platforms": {
            "telegram": {
                "enabled": True,
                "allowed_users": ["*"],
                "base_url": api.base_url,
                "mode": "webhook",
                "webhook_url": HOOK,
                "webhook_listen": "127.0.0.1",
                "webhook_port": 0,
                "webhook_secret_env": "TELEGRAM_WEBHOOK_SECRET",
            }
        },
        "memory": {"review": {"enabled": False}},
        "compression": {"enabled": False},
        "gateway": {"max_concurrent_turns": args.concurrency},
    }
    if setup.backend == "postgres":
        config["storage"] = {"backend": "postgres"}
        config["coordination"] = {"backend": "redis", "namespace": ns}
    return config


def make_home(home: Path, config: Any) -> Path:
    """The replica's home with its config; returns where its stderr goes."""
    home.mkdir()
    (home / "bench.json").write_text(json.dumps(config), "utf-8")
    return home / "stderr.log"


async def start_replica(home: Path, config: Any, env: dict[str, str]) -> Replica:
    log = make_home(home, config)
    with log.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--serve", str(home),
            stdout=asyncio.subprocess.PIPE, stderr=err, cwd=REPO, env=env,
        )  # fmt: skip
    replica = Replica(proc, log)
    assert proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 90)
        replica.port = int(json.loads(line)["port"])
    except (TimeoutError, ValueError, KeyError):
        await replica.stop()
        raise SystemExit(f"a replica did not start:\n{replica.tail()}") from None
    return replica


@contextlib.asynccontextmanager
async def shared_state(setup: Setup, args: argparse.Namespace) -> AsyncIterator[dict[str, str]]:
    """The environment of the setup's replicas: for postgres, a fresh schema and a fresh
    Redis namespace, both removed afterwards."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TELEGRAM_WEBHOOK_SECRET": SECRET}
    if setup.backend != "postgres":
        yield env
        return
    import asyncpg  # noqa: PLC0415
    from redis.asyncio import Redis  # noqa: PLC0415

    tag = f"mnemo_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(args.dsn)
    redis = Redis.from_url(args.redis)
    await admin.execute(f'CREATE SCHEMA "{tag}"')
    separator = "&" if "?" in args.dsn else "?"
    env["MNEMO_POSTGRES_DSN"] = (
        f"{args.dsn}{separator}options={quote(f'-c search_path={tag},public')}"
        f"&application_name={tag}"
    )
    env["MNEMO_REDIS_URL"] = args.redis
    env["MNEMO_BENCH_ADMIN_DSN"] = args.dsn
    env["MNEMO_BENCH_NAMESPACE"] = f"{tag}:"
    try:
        yield env
    finally:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND application_name = $1",
            tag,
        )
        await admin.execute(f'DROP SCHEMA IF EXISTS "{tag}" CASCADE')
        await admin.close()
        keys = [key async for key in redis.scan_iter(match=f"{tag}:*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()


async def print_sessions(dsn: str, tag: str) -> None:
    """The replicas' PostgreSQL sessions that are not idle: what each waits on."""
    import asyncpg  # noqa: PLC0415

    admin = await asyncpg.connect(dsn)
    try:
        rows = await admin.fetch(
            "SELECT pid, state, wait_event_type, wait_event, now() - xact_start AS age, "
            "pg_blocking_pids(pid) AS blockers, left(query, 160) AS query "
            "FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'",
            tag,
        )
    finally:
        await admin.close()
    print(f"{len(rows)} PostgreSQL sessions not idle:", file=sys.stderr)
    for row in rows:
        print("  " + " | ".join(str(v) for v in row.values()), file=sys.stderr)


async def run_setup(setup: Setup, args: argparse.Namespace) -> Outcome:
    log = f"{setup.label}: {args.chats} chats x {args.messages_per_chat}"
    print(f"[{time.strftime('%H:%M:%S')}] {log} ...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="mnemo-replicas-bench-") as tmp:
        async with (
            FakeBotAPI() as api,
            shared_state(setup, args) as env,
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as http,
        ):
            env["TELEGRAM_BOT_TOKEN"] = api.token
            config = replica_config(setup, api, args, env.get("MNEMO_BENCH_NAMESPACE", ""))
            replicas: list[Replica] = []
            try:
                # the first alone: it makes the schema; then the others, at once
                replicas.append(await start_replica(Path(tmp) / "r0", config, env))
                replicas += await asyncio.gather(
                    *(
                        start_replica(Path(tmp) / f"r{i}", config, env)
                        for i in range(1, setup.replicas)
                    )
                )
                urls = [f"http://127.0.0.1:{r.port}/telegram" for r in replicas]
                driver = Balancer(api, urls=urls, http=http, sticky=setup.sticky)
                before, meter = len(api.calls), CpuMeter(replicas, env)
                await meter.start()
                chats = range(1, args.chats + 1)
                loaded = await driver.run(chats, args.messages_per_chat, args.window, args.timeout)
                solo = None
                if args.solo and not driver.errors:
                    solo = await driver.run(chats[: args.solo], 1, 1, args.timeout)
                await asyncio.sleep(0.2)  # a late duplicate would land here
                calls = Counter(c.method for c in api.calls[before:])
                cpu = await meter.stop()
            except BaseException:
                for r in replicas:  # each one's tasks, to see what a lost turn waits on
                    if r.proc.returncode is None:
                        r.proc.send_signal(signal.SIGUSR1)
                if env.get("MNEMO_BENCH_NAMESPACE"):
                    await print_sessions(args.dsn, env["MNEMO_BENCH_NAMESPACE"].rstrip(":"))
                await asyncio.sleep(1)
                keep = Path(tempfile.mkdtemp(prefix="mnemo-replicas-failed-"))
                for i, r in enumerate(replicas):
                    shutil.copy(r.log, keep / f"replica-{i}.log")
                print(f"the replicas' logs: {keep}", file=sys.stderr)
                raise
            finally:
                await asyncio.gather(*(r.stop() for r in replicas))
            driver.check()  # again after every replica stopped: nothing sent twice
            return Outcome(setup, loaded, solo, calls, cpu)


def render(args: argparse.Namespace, outcomes: Sequence[Outcome], cpu: tuple[float, float]) -> str:
    def pcts(label: str, pick: str) -> list[list[str]]:
        rows = []
        for q in (50, 95, 99):
            cells = []
            for o in outcomes:
                result: Result | None = getattr(o, pick)
                cells.append("—" if result is None else f"{result.pct(q / 100):,.1f}")
            rows.append([f"latency p{q} ms, {label}", *cells])
        return rows

    rows = [[f"turns/s, {args.window} in flight", *(f"{o.loaded.rate:,.0f}" for o in outcomes)]]
    rows += pcts(f"{args.window} in flight", "loaded")
    if args.solo:
        rows += pcts("one at a time", "solo")
    for method in ("sendMessage", "getUpdates"):
        rows.append(
            [f"{method} requests per turn", *(f"{o.calls[method] / o.turns:.2f}" for o in outcomes)]
        )
    for part in ("replicas", "PostgreSQL", "Redis", "bench process"):
        cells = [f"{1000 * o.cpu[part] / o.turns:.1f}" if part in o.cpu else "—" for o in outcomes]
        rows.append([f"CPU ms per turn: {part}", *cells])
    header = ["metric", *(o.setup.label for o in outcomes)]
    ratios = []
    by = {o.setup: o for o in outcomes}
    for a, b in (
        (Setup("postgres", 1), Setup("sqlite", 1)),
        (Setup("postgres", 3), Setup("postgres", 1)),
        (Setup("postgres", 3, sticky=True), Setup("postgres", 3)),
    ):
        if a in by and b in by:
            x, y = by[a], by[b]
            ratios.append(
                f"{a.label} / {b.label}: throughput {x.loaded.rate / y.loaded.rate:.2f},"
                f" p50 in flight {x.loaded.pct(0.5) / y.loaded.pct(0.5):.2f}"
                + (
                    f", p50 one at a time {x.solo.pct(0.5) / y.solo.pct(0.5):.2f}"
                    if x.solo and y.solo
                    else ""
                )
            )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"mnemo replicas benchmark — {args.chats:,} chats x {args.messages_per_chat} messages,"
        f" closed loop, window {args.window}; solo pass {args.solo}; max_concurrent_turns"
        f" {args.concurrency} per replica; webhook, updates posted round robin (sticky: by chat)\n"
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average"
        f" (1, 5, 15 min) at the end {load}\n\n"
        + table(header, rows)
        + "\n\n"
        + "\n".join(ratios)
        + ("\n" if ratios else "")
        + "Every message answered exactly once, in order per chat (checked after stop too).\n"
        + f"CPU check (1M-step Python loop): {cpu[0]:.0f} ms before, {cpu[1]:.0f} ms after."
    )


def parse_setups(text: str) -> list[Setup]:
    setups = []
    for item in text.split(","):
        backend, _, n = item.partition(":")
        n, _, route = n.partition(":")
        if (
            backend not in ("sqlite", "postgres")
            or not n.isdigit()
            or int(n) < 1
            or route not in ("", "sticky")
        ):
            raise argparse.ArgumentTypeError(f"{item!r}: sqlite:1 or postgres:N[:sticky]")
        if backend == "sqlite" and int(n) != 1:
            raise argparse.ArgumentTypeError("sqlite keeps its state in one home: sqlite:1 only")
        setups.append(Setup(backend, int(n), route == "sticky"))
    return setups


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--setups",
        type=parse_setups,
        default=parse_setups("sqlite:1,postgres:1,postgres:3"),
        help="backend:replicas[:sticky], in order (default sqlite:1,postgres:1,postgres:3);"
        " sticky posts each chat to one replica (chat id mod N) instead of round robin",
    )
    parser.add_argument("--replicas", type=int, help="shorthand: --setups BACKEND:N")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), help="with --replicas")
    parser.add_argument("--chats", type=int, default=1000, help="private chats (user ids 1..N)")
    parser.add_argument("--messages-per-chat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8, help="max_concurrent_turns each")
    parser.add_argument("--window", type=int, default=64, help="outstanding at once (64)")
    parser.add_argument("--solo", type=int, default=200, help="unloaded pass (0 skips it)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a pass may take")
    parser.add_argument("--dsn", default=DSN, help="PostgreSQL database (a schema is made)")
    parser.add_argument("--redis", default=REDIS, help="Redis URL (a key namespace is used)")
    parser.add_argument("--quick", action="store_true", help="100 chats, solo 50 (smoke run)")
    args = parser.parse_args(argv)
    if args.replicas is not None or args.backend is not None:
        try:
            args.setups = parse_setups(f"{args.backend or 'postgres'}:{args.replicas or 1}")
        except argparse.ArgumentTypeError as exc:
            parser.error(str(exc))
    if args.quick:
        args.chats, args.solo = 100, min(args.solo, 50)
    args.solo = min(args.solo, args.chats)
    args.window = min(args.window, args.chats)
    return args


async def run(args: argparse.Namespace) -> list[Outcome]:
    return [await run_setup(setup, args) for setup in args.setups]


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--serve"]:
        return asyncio.run(serve(Path(argv[1])))
    args = parse_args(argv)
    before = cpu_check()
    outcomes = asyncio.run(run(args))
    print(render(args, outcomes, (before, cpu_check())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
