"""``mnemo run`` as a real OS process: it serves, drains a running turn on SIGTERM, exits 0,
and its logs never carry the bot token or the API key."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e.stack import ADMIN, ALICE, Driver
from tests.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-secret-api-key-0123456789"


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_sigterm_drains_a_running_turn_and_logs_no_secrets(
    home: Path, driver: Driver, openai: FakeOpenAI, log_format: str
) -> None:
    config = {
        "model": {"base_url": openai.base_url, "name": "fake-model", "max_retries": 0},
        "memory": {"review": {"enabled": False}},
        "platforms": {driver.platform: driver.config()},
        "gateway": {"admins": [f"{driver.platform}:{ADMIN}"], "drain_timeout_s": 20},
        "ops": {"log_format": log_format},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": API_KEY,
        f"{driver.platform.upper()}_BOT_TOKEN": driver.token,
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "--home", str(home), "run",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        head = b""
        while b"mnemo is running" not in head:
            line = await asyncio.wait_for(proc.stderr.readline(), 30)
            assert line, f"mnemo run exited before it was ready: {head.decode()}"
            head += line
        await driver.dm(ALICE, "slow: 1.5")
        for _ in range(200):
            if openai.requests:
                break
            await asyncio.sleep(0.05)
        assert openai.requests, "the turn never reached the model"
        proc.send_signal(signal.SIGTERM)
        _out, rest = await asyncio.wait_for(proc.communicate(), 40)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    logs = head.decode() + rest.decode()
    assert proc.returncode == 0, logs
    assert await driver.replies(driver.dm_chat(ALICE), 1, within=1) == ["slow answer"]
    assert "stopped cleanly" in logs
    assert driver.token not in logs and API_KEY not in logs
    assert driver.token.split(":")[-1] not in logs
    if log_format == "json":
        lines = [json.loads(line) for line in logs.splitlines() if line.strip()]
        assert {"ts", "level", "logger", "message"} <= set(lines[0])
        assert any("stopped cleanly" in line["message"] for line in lines)
