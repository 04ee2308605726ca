"""``mnemo run`` as a real OS process: it serves, drains a running turn on SIGTERM, exits 0,
reloads allowlists on SIGHUP, says each start-up fact once, and its logs never carry the bot
token or the API key. Each start costs about 2 s of CPU, so each process checks several
of these."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from tests import REPO_ROOT
from tests.e2e.stack import ADMIN, ALICE, BOB, Driver
from tests.fakes.openai_server import Dynamic, FakeOpenAI, Text
from tests.services import RedisTarget

ROOT = REPO_ROOT
API_KEY = "sk-test-secret-api-key-0123456789"
pytestmark = pytest.mark.slow  # every test starts mnemo run as a process


def write_config(home: Path, driver: Driver, openai: FakeOpenAI, **changes: Any) -> None:
    platform = {**driver.config(), **changes.pop("platform", {})}
    config = {
        "model": {"base_url": openai.base_url, "name": "fake-model", "max_retries": 0},
        "memory": {"review": {"enabled": False}},
        "platforms": {driver.platform: platform},
        "gateway": {"admins": [f"{driver.platform}:{ADMIN}"], "drain_timeout_s": 20},
        **changes,
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


class Process:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.log = b""

    async def wait_log(self, marker: str, within: float = 30) -> None:
        assert self.proc.stderr is not None
        while marker.encode() not in self.log:
            line = await asyncio.wait_for(self.proc.stderr.readline(), within)
            assert line, f"mnemo run exited before logging {marker!r}: {self.log.decode()}"
            self.log += line

    async def finish(self, within: float = 40) -> str:
        _out, rest = await asyncio.wait_for(self.proc.communicate(), within)
        self.log += rest
        return self.log.decode()


@asynccontextmanager
async def mnemo_run(
    home: Path, driver: Driver, extra_env: dict[str, str] | None = None
) -> AsyncIterator[Process]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": API_KEY,
        f"{driver.platform.upper()}_BOT_TOKEN": driver.token,
        **(extra_env or {}),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "--home", str(home), "run",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        running = Process(proc)
        await running.wait_log("mnemo is running")
        yield running
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


#: a text log line: "<time> LEVEL logger: message"
TEXT_LINE = re.compile(r"^\S+(?: \S+)? ([A-Z]+) (\S+): (.*)$")

#: every pair of (platform, log format, level) values once: four processes instead of six
PAIRWISE = [
    ("telegram", "text", "info"),
    ("telegram", "json", "debug"),
    ("discord", "text", "debug"),
    ("discord", "json", "info"),
]


@pytest.mark.parametrize(
    ("driver", "log_format", "level"),
    PAIRWISE,
    ids=["-".join(case) for case in PAIRWISE],
    indirect=["driver"],
)
async def test_sigterm_drains_a_running_turn_and_the_log_says_each_fact_once_without_secrets(
    home: Path, driver: Driver, openai: FakeOpenAI, log_format: str, level: str
) -> None:
    """SIGTERM drains the turn that is running and the process exits 0; the log never
    carries the bot token or the API key, at DEBUG either.

    Issue 12 §6, start-up: one line for the ops endpoint (it used to be two), no line per
    HTTP request at INFO (PTB polls through httpx, the openai SDK's client logs each call),
    the libraries' own start/stop lines only at DEBUG, and no discord.py voice warnings.
    (One process checks both: each start costs about 2 s of CPU.)"""
    ops = {"log_format": log_format, "log_level": level, "http": {"listen": "127.0.0.1:0"}}
    write_config(home, driver, openai, ops=ops)
    chat = driver.dm_chat(ALICE)
    asked, answer = asyncio.Event(), asyncio.Event()

    async def thinking(body: dict[str, Any]) -> Text:
        asked.set()
        await answer.wait()  # the model answers once the process is draining
        return Text("slow answer")

    try:
        async with mnemo_run(home, driver) as running:
            await driver.dm(ALICE, "hello")
            assert await driver.replies(chat, 1) == ["echo: hello"]
            openai.script(Dynamic(thinking))
            await driver.dm(ALICE, "a question that takes a while")
            await asyncio.wait_for(asked.wait(), 30)  # the turn reached the model
            running.proc.send_signal(signal.SIGTERM)
            await running.wait_log("stopping: draining running turns")
            answer.set()
            logs = await running.finish()
    finally:
        answer.set()
    assert running.proc.returncode == 0, logs
    assert await driver.replies(chat, 2, within=1) == ["echo: hello", "slow answer"]
    assert "stopped cleanly" in logs
    assert driver.token not in logs and API_KEY not in logs
    assert driver.token.split(":")[-1] not in logs
    lines = logs.splitlines()
    if log_format == "json":
        records = [json.loads(line) for line in lines if line.strip()]
        assert {"ts", "level", "logger", "message"} <= set(records[0])
        assert any("stopped cleanly" in record["message"] for record in records)
        said = [(r["level"].upper(), r["logger"], r["message"]) for r in records]
    else:
        said = [(m[1], m[2], m[3]) for m in map(TEXT_LINE.match, lines) if m]
    [ops_line] = [line for line in lines if "health and metrics on" in line]
    address = re.search(r"http://(127\.0\.0\.1:\d+)/", ops_line)
    assert address is not None
    assert [line for line in lines if address[1] in line] == [ops_line]
    assert "ops endpoint" not in logs
    assert "voice will NOT be supported" not in logs
    requests = [(lvl, name) for lvl, name, text in said if "HTTP Request: POST" in text]
    library = ("Application started", "Application.stop() complete", "Shard ID None has connected")
    if level == "info":
        assert requests == []
        assert not [line for line in lines if any(text in line for text in library)]
    else:  # demoted, not lost
        assert requests
        assert all(lvl == "DEBUG" and re.fullmatch(r"httpx2?|openai\S*", n) for lvl, n in requests)
        assert any(
            lvl == "DEBUG" and re.match(r"httpx2?$", name) and "/chat/completions" in text
            for lvl, name, text in said
        )
        started = library[0] if driver.platform == "telegram" else library[2]
        assert any(lvl == "DEBUG" and started in text for lvl, _name, text in said)


async def test_sighup_reloads_the_allowlist_and_refuses_a_pasted_token_without_logging_it(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    """SIGHUP reloads the allowlist without dropping sessions. A later SIGHUP with a token
    pasted into token_env is refused, logged (JSON) without the token, and what was loaded
    before stays in force. (One process for both: each start costs about 2 s of CPU.)

    The pasted token is not the bot's own (that one the redactor knows) and not shaped like
    a Telegram token the redactor's pattern knows: only the loader keeps it out of the log."""
    pasted = "987654321:XYZdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    both = [str(ALICE), str(BOB)]
    json_logs = {"log_format": "json"}
    write_config(home, driver, openai, ops=json_logs, platform={"allowed_users": [str(ALICE)]})
    async with mnemo_run(home, driver) as running:
        await driver.dm(ALICE, "before")
        await driver.replies(driver.dm_chat(ALICE), 1)
        await driver.dm(BOB, "let me in")
        [offer] = await driver.replies(driver.dm_chat(BOB), 1)
        assert "pairing code" in offer
        write_config(home, driver, openai, ops=json_logs, platform={"allowed_users": both})
        running.proc.send_signal(signal.SIGHUP)
        await running.wait_log("reloaded allowlists")
        await driver.dm(BOB, "and now?")
        await driver.dm(ALICE, "after")
        assert (await driver.replies(driver.dm_chat(BOB), 2))[1] == "echo: and now?"
        assert (await driver.replies(driver.dm_chat(ALICE), 2))[1] == "echo: after"
        refused_file = {"allowed_users": [str(ALICE)], "token_env": pasted}  # Bob out again
        write_config(home, driver, openai, ops=json_logs, platform=refused_file)
        running.proc.send_signal(signal.SIGHUP)
        await running.wait_log("reload refused")
        await driver.dm(BOB, "still in?")  # nothing of the refused file was applied
        assert (await driver.replies(driver.dm_chat(BOB), 3))[2] == "echo: still in?"
        running.proc.send_signal(signal.SIGTERM)
        logs = await running.finish()
    assert running.proc.returncode == 0, logs
    # Alice's session went on: both of her turns are in one session
    alice = [r.body["messages"] for r in openai.requests if "after" in str(r.body)]
    assert "before" in str(alice[-1])
    [refused] = [
        json.loads(line)["message"] for line in logs.splitlines() if "reload refused" in line
    ]
    assert refused.endswith(
        "token_env: this looks like a token itself: put the NAME of an environment variable here"
    )
    assert f"platforms.{driver.platform}.token_env" in refused
    assert "XYZdqTcv" not in logs


@pytest.mark.parametrize("driver", ["telegram"], indirect=True)
async def test_run_on_redis_coordination_serves_and_reports_the_backend(
    home: Path, driver: Driver, openai: FakeOpenAI, redis_target: RedisTarget
) -> None:
    """With coordination.backend redis the process says once that it coordinates (naming
    the variable, never the URL), serves, and /healthz names the backend."""
    ops = {"http": {"listen": "127.0.0.1:0"}}
    shared = {"backend": "redis", "namespace": redis_target.prefix, "lease_ttl_s": 5}
    write_config(home, driver, openai, ops=ops, coordination=shared)
    env = {"MNEMO_REDIS_URL": redis_target.url}
    async with mnemo_run(home, driver, env) as running:
        await driver.dm(ALICE, "hello")
        assert await driver.replies(driver.dm_chat(ALICE), 1) == ["echo: hello"]
        address = re.search(
            r"health and metrics on http://(127\.0\.0\.1:\d+)/", running.log.decode()
        )
        assert address is not None
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://{address[1]}/healthz") as response:
                assert (response.status, await response.text()) == (
                    200,
                    "ok\nstorage: sqlite\ncoordination: redis\n",
                )
            async with http.get(f"http://{address[1]}/metrics") as response:
                metrics = await response.text()
        running.proc.send_signal(signal.SIGTERM)
        logs = await running.finish()
    assert running.proc.returncode == 0, logs
    assert logs.count("coordinating with other replicas through the Redis at MNEMO_REDIS_URL") == 1
    assert redis_target.url not in logs
    assert "mnemo_lease_wait_seconds_count 1.0" in metrics
    assert 'mnemo_coordination_up{backend="redis"} 1.0' in metrics
