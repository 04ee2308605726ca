"""The README's quick start stays true: its ``mnemo`` command lines run in a temp home.

The first ```` ```sh ```` block after ``## Quick start`` that contains ``mnemo init`` is the
quick start. Each of its lines starting with ``.venv/bin/mnemo`` runs as ``python -m gateway
--home <tmp> <args>``, in order, and must exit 0. The environment has a fake API key and
``OPENAI_BASE_URL`` pointing at the loopback fake model server, so a ``mnemo chat`` without
``--dry-run`` reaches it; ``chat`` reads one line, ``hello``, then end of input.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests import REPO_ROOT
from tests.fakes.openai_server import FakeOpenAI

ROOT = REPO_ROOT
PREFIX = ".venv/bin/mnemo"
SHELL = re.compile(r"[|&;<>()$`\\\"'*?]")
ENV_DROP = re.compile(r"^(MNEMO_|OPENAI_)|_BOT_TOKEN$|_WEBHOOK_SECRET$")


def quick_start_commands(readme: str) -> list[list[str]] | None:
    """The argv (after ``mnemo``) of each quick-start line, or None when there is no block."""
    heading = re.search(r"^## Quick start[^\n]*\n", readme, flags=re.MULTILINE)
    if heading is None:
        return None
    section = re.split(r"^## ", readme[heading.end() :], maxsplit=1, flags=re.MULTILINE)[0]
    for block in re.findall(r"^```sh\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL):
        if "mnemo init" not in block:
            continue
        commands = []
        for line in block.splitlines():
            line = line.strip()
            if not line.startswith(PREFIX + " "):
                continue
            assert not SHELL.search(line), f"keep quick-start lines plain commands: {line!r}"
            commands.append(shlex.split(line)[1:])
        return commands
    return None


def test_the_extractor_reads_the_first_init_block_of_the_section() -> None:
    readme = (
        "# x\n## Quick start\n\n```sh\nmake setup\n```\n\n```sh\n"
        "make setup\n.venv/bin/mnemo init\n  .venv/bin/mnemo config check\n"
        ".venv/bin/mnemo chat --dry-run\n```\n\n```sh\n.venv/bin/mnemo init --x\n```\n"
        "## Next\n```sh\n.venv/bin/mnemo run\n```\n"
    )
    assert quick_start_commands(readme) == [
        ["init"],
        ["config", "check"],
        ["chat", "--dry-run"],
    ]
    assert quick_start_commands("## Quick start\n```sh\nmake\n```\n## B\nmnemo init\n") is None
    with pytest.raises(AssertionError, match="plain commands"):
        quick_start_commands("## Quick start\n```sh\n.venv/bin/mnemo init | cat\n```\n")


async def _mnemo(home: Path, args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "--home", str(home), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=home.parent, env=env,
    )  # fmt: skip
    stdin = b"hello\n" if args[:1] == ["chat"] else b""
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.slow
async def test_readme_quick_start_runs(tmp_path: Path) -> None:
    commands = quick_start_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    if commands is None:
        pytest.fail("README.md has no ```sh block with `mnemo init` under ## Quick start")
    assert commands and commands[0] == ["init"], "the quick start begins with mnemo init"
    home = tmp_path / "home"
    async with FakeOpenAI() as fake:
        env = {k: v for k, v in os.environ.items() if not ENV_DROP.search(k)}
        env |= {
            "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": "sk-test-readme",
            "OPENAI_BASE_URL": fake.base_url,
        }
        for args in commands:
            code, out, err = await _mnemo(home, args, env)
            assert code == 0, f"mnemo {shlex.join(args)} exited {code}:\n{out}{err}"
            if args[0] == "chat":
                assert out.strip(), f"mnemo {shlex.join(args)} answered nothing:\n{err}"
                if "--dry-run" not in args:
                    assert fake.requests, "the chat never reached the fake model server"
    assert (home / "config.yaml").is_file()
