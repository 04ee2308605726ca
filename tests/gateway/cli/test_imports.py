"""Fast commands (issue 12 §6): the everyday commands load neither the model SDK nor the
platform libraries nor the HTTP stack; `mnemo run` and `mnemo chat` import them when they run.

Each command runs in a fresh interpreter against a home that has something to show (a memory
entry, so `memory show` scans; an archived session, so `sessions list` reads `state.db`),
and reports which top-level packages it imported. No timing here: `make bench-cli` measures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import pytest

from gateway.cli import main

pytestmark = pytest.mark.slow

#: What `mnemo run` and `mnemo chat` need and the everyday commands must not import.
HEAVY = frozenset(
    {"openai", "telegram", "discord", "aiohttp", "prometheus_client"}
    | {"httpx", "httpcore", "httpx2", "httpcore2"}  # the openai SDK's client, either generation
)

PROBE = """
import contextlib, io, json, sys
from gateway.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
loaded = sorted({name.split(".")[0] for name in sys.modules})
ours = sorted(n for n in sys.modules if n.startswith(("gateway.cli.", "memory.")))
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "loaded": loaded,
                  "ours": ours}))
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "OPENAI_"))}
    env.update(MNEMO_HOME=str(home), OPENAI_API_KEY="sk-test-not-used-0123456789")
    return env


class Probe(TypedDict):
    """What PROBE prints: the command's exit code and output, and what it imported."""

    code: int
    out: str
    err: str
    loaded: list[str]  # top-level names
    ours: list[str]  # gateway.cli.* and memory.* modules


def _mnemo(home: Path, *argv: str) -> Probe:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=True,
        env=_env(home),
        timeout=60,
    )
    result: Probe = json.loads(proc.stdout)
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    archive = home / "import.jsonl"
    archive.write_text(
        json.dumps(
            {
                "session": "s1",
                "person": "telegram-1",
                "platform": "telegram",
                "chat": "1",
                "role": "user",
                "content": "how do I rotate the logs?",
                "created_at": "2024-05-01T10:00:00+00:00",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    # made in this process: only the probed commands need a fresh interpreter each
    with pytest.MonkeyPatch.context() as patch:
        env = _env(home)
        for name in set(os.environ) - set(env):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        for argv in (
            ["init"],
            ["memory", "add", "--person", "telegram:1", "Prefers metric units"],
            ["sessions", "import", str(archive)],
        ):
            assert main(argv) == 0, argv
    return home


@pytest.mark.parametrize(
    ("argv", "shows"),
    [
        (["--help"], "usage: mnemo"),
        (["config", "check"], "config OK"),
        (["memory", "show"], "Prefers metric units"),
        (["sessions", "list"], "how do I rotate the logs?"),
    ],
    ids=["help", "config-check", "memory-show", "sessions-list"],
)
def test_everyday_commands_do_not_import_the_sdk_or_the_platforms(
    home: Path, argv: list[str], shows: str
) -> None:
    result = _mnemo(home, *argv)
    assert result["code"] == 0, result["err"]
    assert shows in result["out"]
    assert HEAVY.isdisjoint(result["loaded"])


def test_the_probe_sees_what_a_command_imports(home: Path) -> None:
    """The same probe, on a command that must load the model SDK: `doctor` checks the model
    (it fails fast: the key is fake and the endpoint a closed loopback port)."""
    config = home / "doctor.yaml"
    config.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  max_retries: 0\n")
    result = _mnemo(home, "--config", str(config), "doctor", "--timeout", "2")
    assert "openai" in result["loaded"]


def test_a_command_imports_only_its_own_module(home: Path) -> None:
    """`mnemo --help` lists every command without importing one (nor pydantic: no config is
    read); a command imports its own module, not its neighbours'."""
    helped = _mnemo(home, "--help")
    assert helped["code"] == 0
    for command in ("memory", "sessions", "chat", "run", "doctor", "pairing", "skills"):
        assert command in helped["out"]
    assert {"pydantic", "yaml", "asyncio", "memory"}.isdisjoint(helped["loaded"])
    assert [n for n in helped["ours"] if n != "gateway.cli.common"] == []
    shown = _mnemo(home, "memory", "show")
    modules = set(shown["ours"])
    assert "gateway.cli.memory" in modules
    assert not modules & {"gateway.cli.sessions", "gateway.cli.doctor", "gateway.cli.chat"}
    assert "memory.archive" not in modules  # memory show reads no archive
