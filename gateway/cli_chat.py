"""``mnemo chat``: the console adapter — the whole agent on a terminal, no platform token.

On a terminal it is an interactive REPL; when stdin is not a terminal it reads one message
per line and prints each reply (so it can be scripted). The person is ``console-<os user>``;
the same loop, archive, review and memory serve it as the chat bots. ``--session NAME``
resumes a named session; ``/new``, ``/memory``, ``/search QUERY`` and ``/quit`` work as
commands. ``--dry-run`` answers with an echo model instead of calling an endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import re
import sys
import threading
from typing import Any

from agent_core.agent import Agent, Conversation
from agent_core.models import Model
from agent_core.models.openai import OpenAIModel
from agent_core.models.scripted import ScriptedModel, echo
from agent_core.review import ReviewOutcome
from gateway.app import build_agent
from gateway.cli_memory import UsageError
from gateway.config import Config, Paths
from gateway.terminal import visible
from memory import FILE_NAMES, TARGETS
from memory.archive import Archive, SessionSpec, new_session_id
from memory.search import SearchTool

__all__ = ["console_person", "register"]

HELP = "Commands: /new (fresh session), /memory, /search QUERY, /quit."


def register(commands: Any) -> None:
    chat = commands.add_parser("chat", help="talk to the agent on this terminal")
    chat.add_argument("--session", help="resume (or start) the session with this name")
    chat.add_argument("--dry-run", action="store_true", help="echo model: no endpoint needed")
    chat.set_defaults(handler=_chat)


def console_person(user: str | None = None) -> str:
    name = (user or getpass.getuser() or "user").lower()
    return "console-" + (re.sub(r"[^a-z0-9._-]", "_", name).strip("._-") or "user")


def build_model(config: Config, *, dry_run: bool, environ: dict[str, str] | None = None) -> Model:
    if dry_run:
        return ScriptedModel(respond=echo, name="dry-run")
    env = os.environ if environ is None else environ
    key = env.get(config.model.api_key_env)
    if not key and config.model.base_url is None:
        raise UsageError(
            f"{config.model.api_key_env} is not set (needed to reach {config.model.name});"
            " set it, point model.base_url at a local server, or try `mnemo chat --dry-run`"
        )
    return OpenAIModel(
        name=config.model.name,
        base_url=config.model.base_url,
        api_key=key,
        timeout_s=config.model.timeout_s,
        max_retries=config.model.max_retries,
    )


def _chat(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    model = build_model(config, dry_run=args.dry_run)
    try:
        return asyncio.run(_run(model, paths, config, args.session))
    except KeyboardInterrupt:  # Ctrl-C at the prompt: the session is saved, leave quietly
        print(file=sys.stderr)
        return 130


async def _run(model: Model, paths: Paths, config: Config, name: str | None) -> int:
    person = console_person()
    key = f"console:dm:{person}" + (f":{name}" if name else "")
    interactive = sys.stdin.isatty()
    async with await Archive.open(paths.state_db) as archive:
        agent = build_agent(paths=paths, config=config, archive=archive, model=model)
        try:
            conversation = await agent.resume(key, person=person, admin=True) or await _new(
                agent, key, person
            )
            if interactive:
                print(f"mnemo chat — {person}, session {conversation.id}. {HELP}")
            while True:
                line = await _read_line(interactive)
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    outcome = await _command(text, agent, conversation, key, person)
                    if outcome is None:
                        break
                    conversation, answer = outcome
                    print(visible(answer), flush=True)
                    continue
                result = await agent.turn(conversation, text)
                print(visible(result.reply), flush=True)  # model output drives no terminal
                if result.review is not None and config.memory.notify != "off":
                    result.review.add_done_callback(
                        lambda task: _notify(task, verbose=config.memory.notify == "verbose")
                    )
        finally:
            await agent.aclose()
            close = getattr(model, "close", None)
            if close is not None:
                await close()
    return 0


def _notify(task: asyncio.Task[ReviewOutcome], *, verbose: bool) -> None:
    if task.cancelled() or task.exception() is not None:
        return
    outcome = task.result()
    if outcome.wrote:
        note = outcome.summary() if verbose else "memory updated"
        print(f"({visible(note)})", file=sys.stderr, flush=True)


async def _read_line(interactive: bool) -> str | None:
    """The next line (None at end of input), read on a daemon thread: a blocked ``input()``
    must not keep the process alive after Ctrl-C, as an executor thread would."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            line: str | None = input("you> ") if interactive else sys.stdin.readline() or None
        except EOFError:
            line = None
        except BaseException as exc:
            loop.call_soon_threadsafe(_settle, future, None, exc)
            return
        loop.call_soon_threadsafe(_settle, future, line, None)

    threading.Thread(target=read, name="mnemo-chat-stdin", daemon=True).start()
    return await future


def _settle(
    future: asyncio.Future[str | None], line: str | None, error: BaseException | None
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(line)


async def _new(agent: Agent, key: str, person: str) -> Conversation:
    spec = SessionSpec(new_session_id(), "console", person, "dm", (person,), session_key=key)
    # the console is the operator: their skill writes apply without approval
    return await agent.start(spec, person=person, platform_label="console (terminal)", admin=True)


async def _command(
    text: str, agent: Agent, conversation: Conversation, key: str, person: str
) -> tuple[Conversation, str] | None:
    command, _, rest = text.partition(" ")
    if command in ("/quit", "/exit"):
        return None
    if command == "/new":
        await agent.archive.end_session(conversation.id, "new")
        fresh = await _new(agent, key, person)
        return fresh, f"Started a new session ({fresh.id}) with a fresh memory snapshot."
    if command == "/memory":
        store = agent.stores.for_person(person)
        lines = []
        for target in TARGETS:
            entries = store.entries(target)
            lines.append(f"{FILE_NAMES[target]} [{store.usage(target)}]")
            lines += [f"  {n}. {visible(e)}" for n, e in enumerate(entries, 1)] or ["  (empty)"]
        return conversation, "\n".join(lines)
    if command == "/search":
        if not rest.strip():
            return conversation, "Usage: /search QUERY"
        result = await SearchTool(agent.archive).call({"query": rest, "limit": 5}, viewer=person)
        hits = result.get("results", [])
        if not hits:
            return conversation, result.get("note", "Nothing found.")
        return conversation, "\n".join(
            f"{h['when']} · {h['title']}: {h['snippet'] or h['message']['content'][:120]}"
            for h in hits
        )
    return conversation, f"Unknown command {command}. {HELP}"
