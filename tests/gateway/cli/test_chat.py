"""``mnemo chat`` scripted through a pipe: a real subprocess, the real openai SDK, the fake
server on loopback, real files. (On a pseudo-terminal: test_cli_chat_terminal.py.)"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from agent_core.models.scripted import ScriptedModel, echo
from gateway.cli import main
from gateway.cli.chat import console_person
from gateway.config.schema import Config, Paths
from gateway.wiring import build_agent
from memory.archive.database import Archive, SessionSpec, new_session_id
from tests import REPO_ROOT
from tests.fakes.openai_server import Call, Dynamic, FakeOpenAI, Raw, Text, ToolCalls


def echo_model() -> ScriptedModel:
    return ScriptedModel(respond=echo, name="dry-run")


ROOT = REPO_ROOT


async def chat(
    home: Path, lines: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "--home", str(home), "chat", *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(lines.encode()), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.slow
async def test_a_piped_conversation_with_memory_commands_and_resume(home: Path) -> None:
    def respond(body: dict[str, object]) -> Text | ToolCalls:
        messages = body["messages"]
        assert isinstance(messages, list)
        last = messages[-1]
        if last["role"] == "user" and "my name is" in last["content"]:
            return ToolCalls(
                [Call("memory", {"action": "add", "target": "user", "content": "Name: Ada"})]
            )
        if last["role"] == "tool":
            return Text("Nice to meet you, Ada.")
        if "Memory review" in str(last["content"]):
            return Text("nothing to save")
        return Text(f"reply {len(messages)}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  name: fake-model\n", encoding="utf-8"
        )
        code, out, err = await chat(home, "my name is Ada\n/memory\n/search Ada\nhow are you?\n")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0] == "Nice to meet you, Ada."
        assert "USER.md [" in out and "1. Name: Ada" in out
        assert any("my name is Ada" in line for line in lines)  # /search found the first turn
        assert lines[-1].startswith("reply ")
        requests = len(server.requests)
        # the next run resumes the same session, with the same system prompt; then /new
        # starts a fresh session whose prompt carries the saved profile, in the words every
        # platform uses
        code, out, err = await chat(home, "and again\n/new\nhello\n")
        assert code == 0, err
        first, later = (
            server.requests[0].body["messages"],
            server.requests[requests].body["messages"],
        )
        assert later[0] == first[0]
        assert any("my name is Ada" in str(m.get("content")) for m in later)
        resumed, fresh = out.split("Fresh start (session ", 1)
        assert resumed.startswith("reply ") and fresh.rstrip().endswith("reply 2")
        assert "Name: Ada" in server.requests[-1].body["messages"][0]["content"]
        assert "Name: Ada" not in first[0]["content"]  # it was saved after that prompt
    async with await Archive.open(home / "state.db") as archive:
        sessions = await archive.sessions(viewer=console_person())
        assert len(sessions) == 2 and sessions[1].title == "my name is Ada"


@pytest.mark.slow
async def test_dry_run_needs_no_endpoint_and_a_named_session_resumes(home: Path) -> None:
    code, out, _ = await chat(home, "ping\n", "--dry-run")
    assert code == 0 and out == "(dry run) you said: ping\n"
    # a named session is its own session, resumed by name
    await chat(home, "in the garden\n", "--dry-run", "--session", "garden")
    await chat(home, "still the garden\n", "--dry-run", "--session", "garden")
    async with await Archive.open(home / "state.db") as archive:
        titles = sorted(
            (s.title, s.message_count) for s in await archive.sessions(viewer=console_person())
        )
    assert titles == [("in the garden", 4), ("ping", 2)]


def test_without_a_key_chat_is_one_clear_line(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this process: it stops before reading a line. (What a real process prints around
    such an error, nothing: the exact stderr of tests/gateway/cli/test_memory.py and
    test_sessions.py.)"""
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert main(["--home", str(home), "chat"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().startswith("mnemo: error: OPENAI_API_KEY is not set")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
async def test_model_output_cannot_drive_the_terminal(home: Path) -> None:
    hostile = "fine\x1b[2J\x1b]0;pwned\x07 \u202eexe.txt"
    async with FakeOpenAI(default=Text(hostile)) as server:
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  name: fake-model\n"
            "memory: {review: {enabled: false}}\n",
            encoding="utf-8",
        )
        code, out, err = await chat(home, "hi\n")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert out.startswith("fine<U+001B>[2J")


@pytest.mark.slow
async def test_lines_are_answered_one_at_a_time_in_order(home: Path) -> None:
    """The gateway merges messages that arrive during a turn; a piped script must not be
    merged: the console hands over a line only once the one before is answered."""

    async def respond(body: dict[str, object]) -> Text:
        messages = body["messages"]
        assert isinstance(messages, list)
        said = str(messages[-1]["content"]).partition("\n")[2]
        if said == "first":
            await asyncio.sleep(0.5)  # long enough for the next lines to queue up behind it
        return Text(f"re: {said}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  name: fake-model\n"
            "memory: {review: {enabled: false}}\n",
            encoding="utf-8",
        )
        code, out, err = await chat(home, "first\nsecond\n/status\nthird\n/quit\nnever sent\n")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["re: first", "re: second"] and lines[-1] == "re: third"
    assert "Turns: 2" in lines  # /status ran between the second and the third turn
    assert len(server.requests) == 3


@pytest.mark.slow
async def test_a_broken_endpoint_is_one_line_and_the_console_keeps_reading(home: Path) -> None:
    page = "<!doctype html>\n<html><body>\x1b[2JSign in to the proxy</body></html>"
    async with FakeOpenAI(default=Text("back again")) as server:
        server.script(Raw(page, "text/html"))
        (home / "config.yaml").write_text(
            f"model:\n  base_url: {server.base_url}\n  name: fake-model\n  max_retries: 0\n"
            "memory: {review: {enabled: false}}\n",
            encoding="utf-8",
        )
        code, out, err = await chat(home, "hello?\nare you there?\n")
    assert code == 0, err
    assert out.splitlines() == [
        "Sorry — I can't reach my language model right now, so I couldn't answer. Your message"
        " is saved; please try again in a minute.",
        "back again",
    ]
    assert "Traceback" not in err and "\x1b" not in err
    [why] = err.splitlines()  # the operator's one line: what the endpoint sent
    assert "(invalid_response)" in why and "(got text/html: <!doctype html> <html>" in why
    assert "hello?" in str(server.requests[-1].body["messages"])


@pytest.mark.slow
async def test_sessions_the_old_console_started_resume(home: Path) -> None:
    """Before the console was an adapter it keyed sessions ``console:dm:<person>[:<name>]``
    with the person as the chat: the same key now, so they carry on."""
    person = console_person()
    paths = Paths(home, home / "config.yaml", explicit_config=False)
    async with await Archive.open(home / "state.db") as archive:
        agent = build_agent(paths=paths, config=Config(), archive=archive, model=echo_model())
        key = f"console:dm:{person}:garden"
        spec = SessionSpec(new_session_id(), "console", person, "dm", (person,), session_key=key)
        old = await agent.start(spec, person=person, platform_label="console (terminal)")
        await agent.turn(old, "in the garden")
        await agent.aclose()
    code, out, err = await chat(home, "still the garden\n", "--dry-run", "--session", "garden")
    assert code == 0 and out == "(dry run) you said: still the garden\n", err
    async with await Archive.open(home / "state.db") as archive:
        (session,) = await archive.sessions(viewer=person)
        prompt = await archive.system_prompt(session.id)
    assert session.id == old.id and session.message_count == 4
    assert prompt == old.system["content"]


def test_console_person_ids_are_safe() -> None:
    assert console_person("Ada Lovelace") == "console-ada_lovelace"
    assert console_person("../../root") == "console-root"


async def test_on_postgres_chat_refuses_in_one_line_and_touches_nothing(home: Path) -> None:
    """The replicas' state is shared with people on Telegram and Discord, and the console's
    person is the OS user's (one person for every operator called root): it is not used."""
    (home / "config.yaml").write_text(
        "model: {base_url: 'http://127.0.0.1:9/v1', name: m}\nstorage: {backend: postgres}\n",
        encoding="utf-8",
    )
    env = {"MNEMO_POSTGRES_DSN": "postgresql://mnemo:hunter2@127.0.0.1:1/x"}
    code, out, err = await chat(home, "hello\n", env=env)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "storage.backend is postgres" in err
    assert "mnemo --home DIR chat" in err and "hunter2" not in err
    assert sorted(os.listdir(home)) == ["config.yaml"]  # no state.db, no memories/
