"""``mnemo chat``: the agent on this terminal, through the gateway like every platform.

It runs a ``Gateway`` with one adapter, the console (``adapters.console``): every line
passes the same choke point, lanes, commands, replies and reviews as a Telegram or Discord
message, so ``/help``, ``/status``, ``/memory``, ``/forget``, ``/skills``, ``/<skill>``
and the rest answer here with the same words. The person is ``console-<os user>``, an
admin of this local gateway: they own its home and can already change every memory,
pairing and skill from the shell (``mnemo memory``, ``mnemo pairing``, ``mnemo skills``),
so refusing them ``/admin`` or a budget-free turn in chat would protect nothing (the old
console treated them as the operator too). Saved memory is always told, in one line
(``memory.notify: off`` is taken as ``on`` here: the console is where the owner watches).

The session's chat is ``console-<user>`` or, with ``--session NAME``,
``console-<user>:NAME``: its key ``console:dm:<chat>`` is the one the console has always
used, so sessions it started before resume with their recorded prompt. On a terminal it is
a REPL (readline, history in ``<home>/chat_history``, "thinking…", Ctrl-C cancels a turn;
Ctrl-C at the prompt, Ctrl-D or ``/quit`` leave); on a pipe one reply per line, in order.
Either way it exits 0 once the last reply and the reviews are done (``gateway.stop``:
bounded by ``gateway.drain_timeout_s``); a Ctrl-C while it waits for them exits at once
(130).
``--dry-run`` answers with an echo model instead of calling an endpoint.

Its state is the home folder's (SQLite). With ``storage.backend: postgres`` it refuses, in
one line, before opening anything: that state is the replicas', shared with the people on
Telegram and Discord, and the console's person is ``console-<os user>``, the same person for
everyone who runs it as ``root`` on any host; a console there could continue another
operator's session, recall their memory, and (as a replica of the shared ledger) take over
another console's unsent replies and print them. Run it with a home whose config keeps the
default ``storage.backend: sqlite`` (``mnemo --home DIR chat``).

Like every ``gateway.cli`` command module, this one imports the gateway, the agent and the model
SDK inside the functions that use them: ``mnemo --help`` and the other commands load it
to build the parser and should not pay for them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import re
import signal
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gateway.cli.common import add_command
from gateway.config import Config, Paths

if TYPE_CHECKING:
    from agent_core.models import Model
    from gateway.auth import Access
    from gateway.settings import GatewaySettings

__all__ = ["HISTORY_FILE", "console_access", "console_person", "console_settings", "register"]

HISTORY_FILE = "chat_history"
REFUSED_ON_POSTGRES = (
    "mnemo: chat keeps its state in the home folder, but this config's storage.backend is"
    " postgres (the replicas' state, shared with the people on Telegram and Discord); run it"
    " with a home whose storage.backend is sqlite: mnemo --home DIR chat"
)


def register(commands: Any) -> None:
    chat = add_command(commands, "chat")
    chat.add_argument("--session", help="resume (or start) the session with this name")
    chat.add_argument("--dry-run", action="store_true", help="echo model: no endpoint needed")
    chat.set_defaults(handler=_chat)


def console_person(user: str | None = None) -> str:
    name = (user or getpass.getuser() or "user").lower()
    return "console-" + (re.sub(r"[^a-z0-9._-]", "_", name).strip("._-") or "user")


def console_access(config: Config, user_id: str) -> Access:
    """The config's access rules, plus the console person as an admin (see above)."""
    from gateway.wiring import access

    rules = access(config)
    return replace(
        rules,
        allowed_users={**rules.allowed_users, "console": frozenset({user_id})},
        admins=rules.admins | {f"console:{user_id}"},
    )


def console_settings(config: Config) -> GatewaySettings:
    """The config's gateway settings, with saved memory always told."""
    from gateway.wiring import gateway_settings

    settings = gateway_settings(config)
    return replace(settings, notify="on" if settings.notify == "off" else settings.notify)


def _chat(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    from gateway.wiring import build_model

    if config.storage.backend != "sqlite":
        print(REFUSED_ON_POSTGRES, file=sys.stderr)
        return 2

    model = build_model(config, dry_run=args.dry_run)
    try:
        return asyncio.run(_run(model, paths, config, args.session))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C while it finished up
        return 130


async def _run(model: Model, paths: Paths, config: Config, name: str | None) -> int:
    from adapters.console import ConsoleAdapter
    from gateway.provider import open_provider
    from gateway.wiring import build_gateway, close_model
    from memory.archive import Archive

    person = console_person()
    user_id = person.removeprefix("console-")
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    console = ConsoleAdapter(
        user_id=user_id,
        chat_id=person + (f":{name}" if name else ""),
        display_name=_os_user(),
        history_file=paths.home / HISTORY_FILE if terminal else None,
        terminal=terminal,
    )
    loop = asyncio.get_running_loop()
    running = asyncio.current_task()

    def ctrl_c() -> None:
        if not console.closed:
            console.interrupt()  # cancel the turn, or leave at the prompt
        elif running is not None:
            running.cancel()  # while it finishes up (reviews): stop waiting, exit now

    # Left in reverse order however the chat ends (Ctrl-C while it finishes up included):
    # the gateway stops (running turns finish; reviews and notices awaited), the terminal is
    # given back, the archive closes, the signals are ours no more, the model closes.
    async with contextlib.AsyncExitStack() as parts:
        parts.push_async_callback(close_model, model)
        loop.add_signal_handler(signal.SIGINT, ctrl_c)
        loop.add_signal_handler(signal.SIGTERM, console.close)
        parts.callback(loop.remove_signal_handler, signal.SIGTERM)
        parts.callback(loop.remove_signal_handler, signal.SIGINT)
        archive = await parts.enter_async_context(await Archive.open(paths.state_db))
        provider = await parts.enter_async_context(
            open_provider(config, archive=archive, model=model)
        )
        gateway = build_gateway(
            paths=paths,
            config=config,
            archive=archive,
            model=model,
            provider=provider,
            adapters={"console": console},
            rules=console_access(config, user_id),
            settings=console_settings(config),
        )
        console.bind(gateway)
        if terminal:
            session = f", session {name!r}" if name else ""
            print(
                f"mnemo chat — {person}{session}. /help lists the commands; Ctrl-C stops"
                " a reply; Ctrl-D or /quit leaves.",
                flush=True,
            )
        parts.push_async_callback(console.stop)  # even if the gateway's stop is cut short
        await parts.enter_async_context(gateway)
        await console.wait_closed()
    return 0


def _os_user() -> str:
    with contextlib.suppress(Exception):
        return getpass.getuser()
    return "user"
