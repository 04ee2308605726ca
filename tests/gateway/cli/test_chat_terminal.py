"""``mnemo chat`` on a real pseudo-terminal: a subprocess with a pty as its terminal, the
real openai SDK against the fake server on loopback, real files. What a person at the
keyboard types (Enter, Ctrl-A, Tab, the Up arrow, Ctrl-C, Ctrl-D) goes through the
kernel's line discipline and readline, as in a shell."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from adapters.console import PROMPT, THINKING
from agent_core.review import REVIEW_INSTRUCTION
from gateway.cli.chat import HISTORY_FILE, console_person
from gateway.commands import HELP
from gateway.service import CANCELLED
from memory import MemoryStores, MemoryTurn
from memory.archive.database import Archive
from tests.fakes.openai_server import Call, Dynamic, FakeOpenAI, Text, ToolCalls
from tests.gateway.cli.terminal import CTRL_A, CTRL_C, CTRL_D, UP, Terminal

pytestmark = pytest.mark.slow
ERASE = "\r\x1b[K"


def said(body: dict[str, Any]) -> str:
    """What the person wrote in the request's last user message (after the time header)."""
    return str(body["messages"][-1]["content"]).partition("\n")[2]


def configure(home: Path, server: FakeOpenAI, extra: str = "") -> None:
    (home / "config.yaml").write_text(
        f"model:\n  base_url: {server.base_url}\n  name: fake-model\n  max_retries: 0\n{extra}",
        encoding="utf-8",
    )


async def test_line_editing_history_and_every_command_with_the_platforms_words(
    home: Path,
) -> None:
    skill = home / "skills" / "rotate-logs"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: rotate-logs\ndescription: Rotate the app's logs\n---\n"
        "1. Move the file, then send SIGHUP.\n",
        encoding="utf-8",
    )
    person = console_person()
    MemoryStores(home / "memories").for_person(person).call(
        {"action": "add", "target": "user", "content": "Name: Ada"}, MemoryTurn()
    )

    async def respond(body: dict[str, Any]) -> Text:
        return Text(f"you wrote: {said(body).splitlines()[-1]}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        configure(home, server, "memory: {review: {enabled: false}}\n")
        async with Terminal(home) as term:
            await term.expect(f"mnemo chat — {person}")
            await term.expect(PROMPT)
            term.type(f"world{CTRL_A}hello \r")  # Ctrl-A: to the start of the line
            await term.expect("you wrote: hello world")
            await term.expect(PROMPT)
            term.type("/help\r")
            for line in HELP.splitlines():  # the text Telegram and Discord give
                await term.expect(line)
            await term.expect("/admin memory PERSON")  # the console's person is the admin
            term.type("/sta\t\r")  # Tab completes a command's name
            await term.expect("Turns: 1")
            await term.expect("USER.md: ")
            await term.expect("Limits: none (you are an admin)")
            term.type("/memory\r")
            await term.expect("1. Name: Ada")
            await term.expect("/forget N forgets entry N.")
            term.type("/skills\r")
            await term.expect("Skills (run one with /NAME followed by your request):")
            await term.expect("rotate-logs — Rotate the app's logs")
            term.type("/rotate-logs the nginx ones\r")
            await term.expect("you wrote: the nginx ones")
            skill_request = server.requests[-1].body["messages"][-1]["content"]
            assert "1. Move the file, then send SIGHUP." in skill_request
            term.type("/forget 1\r")
            await term.expect("Forgot entry 1 of USER.md: «Name: Ada»")
            term.type("/frobnicate\r")
            await term.expect("I don't know the command /frobnicate. /help lists the ones I know.")
            await term.expect(PROMPT)
            term.type(CTRL_D)
            assert await term.exit_code() == 0
        # the next run remembers what was typed: Up twice is /forget 1 again
        history = home / HISTORY_FILE
        assert history.stat().st_mode & 0o777 == 0o600
        assert "hello world" in history.read_text(encoding="utf-8").splitlines()
        async with Terminal(home) as term:
            await term.expect(PROMPT)
            term.type(f"{UP}{UP}\r")
            await term.expect("I remember nothing yet, so there is nothing to forget.")
            await term.expect(PROMPT)
            term.type("/quit\r")
            assert await term.exit_code() == 0
    assert MemoryStores(home / "memories").for_person(person).entries("user") == []


async def test_thinking_while_a_turn_runs_and_ctrl_c_cancels_it_or_leaves(home: Path) -> None:
    asked = asyncio.Event()
    thought = asyncio.Event()
    release = asyncio.Event()

    async def respond(body: dict[str, Any]) -> Text:
        if said(body) == "think hard":
            await thought.wait()  # answers once the test has seen "thinking…"
            return Text("done thinking")
        if said(body) == "a long question":
            asked.set()
            await release.wait()  # the model thinks until the test is over
            return Text("too late")
        return Text(f"you wrote: {said(body)}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        configure(home, server, "memory: {review: {enabled: false}}\n")
        async with Terminal(home) as term:
            await term.expect(PROMPT)
            term.type("think hard\r")
            await term.expect(THINKING)
            thought.set()
            await term.expect(f"{ERASE}done thinking\n")  # the reply replaces the line
            await term.expect(PROMPT)
            term.type("a long question\r")
            await asked.wait()
            await term.expect(THINKING)
            term.type(CTRL_C)
            # the thinking line is erased, the gateway says it stopped, the prompt is back
            await term.expect(f"{ERASE}{CANCELLED}\n")
            await term.expect(PROMPT)
            term.type("still there?\r")
            await term.expect("you wrote: still there?")
            await term.expect(PROMPT)
            term.type(CTRL_C)  # at an empty prompt: leave
            assert await term.exit_code() == 0
            assert "Traceback" not in term.stderr
        release.set()
        # the model was asked again with the cancelled message in the history
        later = [str(m.get("content")) for m in server.requests[-1].body["messages"]]
        assert later[-2].endswith("a long question") and later[-1].endswith("still there?")
    async with await Archive.open(home / "state.db") as archive:
        (session,) = await archive.sessions(viewer=console_person())
        stored = await archive.messages(session.id, viewer=console_person())
    assert [(m.role, m.content.rpartition("\n")[2]) for m in stored] == [
        ("user", "think hard"),
        ("assistant", "done thinking"),
        ("user", "a long question"),
        ("user", "still there?"),
        ("assistant", "you wrote: still there?"),
    ]


async def test_saved_memory_is_a_one_line_notice(home: Path) -> None:
    def respond(body: dict[str, Any]) -> Text | ToolCalls:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Text("saved")
        if REVIEW_INSTRUCTION[:40] in str(last["content"]):
            return ToolCalls(
                [Call("memory", {"action": "add", "target": "user", "content": "Likes tea"})]
            )
        return Text(f"you wrote: {said(body)}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        configure(home, server)  # memory.notify is off by default: the console tells anyway
        async with Terminal(home) as term:
            await term.expect(PROMPT)
            term.type("I like tea\r")
            await term.expect("you wrote: I like tea")
            # the review saves after the reply, while the prompt waits for the next line
            await term.expect("(memory updated)\n")
            await term.expect(PROMPT)
            term.type(CTRL_D)
            assert await term.exit_code() == 0
        notices = [line for line in term.output.splitlines() if "memory" in line]
        assert [re.sub(r".*\x1b\[K", "", line) for line in notices] == ["(memory updated)"]
    store = MemoryStores(home / "memories").for_person(console_person())
    assert store.entries("user") == ["Likes tea"]


async def test_buttons_are_shown_as_the_commands_they_stand_for(home: Path) -> None:
    def respond(body: dict[str, Any]) -> Text | ToolCalls:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Text("staged")
        if REVIEW_INSTRUCTION[:40] in str(last["content"]):
            add = {"action": "add", "target": "user", "content": "Likes tea"}
            return ToolCalls([Call("memory", add)])
        return Text(f"you wrote: {said(body)}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        configure(home, server, "memory: {write_approval: true}\n")
        async with Terminal(home) as term:
            await term.expect(PROMPT)
            term.type("I like tea\r")
            await term.expect("I'd like to remember this. Nothing is saved until you approve it:")
            await term.expect("add to USER.md: «Likes tea»")
            approve = await term.expect(r"✓ Approve → /memory approve \S+", regex=True)
            await term.expect(r"✗ Reject → /memory reject \S+", regex=True)
            await term.expect(PROMPT)
            term.type(approve.partition("→ ")[2] + "\r")  # typed as the button would send it
            await term.expect("✓ Saved to USER.md: «Likes tea»")
            await term.expect(PROMPT)
            term.type(CTRL_D)
            assert await term.exit_code() == 0
    store = MemoryStores(home / "memories").for_person(console_person())
    assert store.entries("user") == ["Likes tea"]


async def test_ctrl_c_while_a_review_finishes_exits_at_once(home: Path) -> None:
    reviewing = asyncio.Event()
    release = asyncio.Event()

    async def respond(body: dict[str, Any]) -> Text:
        if REVIEW_INSTRUCTION[:40] in str(body["messages"][-1]["content"]):
            reviewing.set()
            await release.wait()  # a review that would hold the exit for the whole drain
            return Text("nothing to save")
        return Text(f"you wrote: {said(body)}")

    async with FakeOpenAI(default=Dynamic(respond)) as server:
        configure(home, server)
        async with Terminal(home) as term:
            await term.expect(PROMPT)
            term.type("hello\r")
            await term.expect("you wrote: hello")
            await reviewing.wait()
            await term.expect(PROMPT)
            term.type(CTRL_D)
            await term.expect("\n")  # the input has ended; the gateway waits for the review
            term.type(CTRL_C)
            assert await term.exit_code() == 130
            assert "Traceback" not in term.stderr
        release.set()
