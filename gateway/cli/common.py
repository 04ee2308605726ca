"""What every ``mnemo`` command shares, kept apart from the command modules so that none of
them imports another (and ``gateway.cli`` can import them all without a cycle)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["COMMANDS", "UsageError", "add_command"]

#: Every top-level command: the module that registers it, and its one-line help. ``mnemo``
#: imports only the module of the command it runs (``--help`` imports none), so start-up
#: pays for what that command needs and nothing else.
COMMANDS: dict[str, tuple[str, str]] = {
    "memory": ("gateway.cli.memory", "inspect and edit curated memory"),
    "sessions": ("gateway.cli.sessions", "browse, search, import and check the archive"),
    "chat": ("gateway.cli.chat", "talk to the agent on this terminal"),
    "run": ("gateway.cli.run", "run the gateway on every enabled platform"),
    "pairing": (
        "gateway.cli.pairing",
        "pairing requests: list, approve, deny, revoke, block, unblock",
    ),
    "skills": ("gateway.cli.skills", "list, show and check skills"),
    "provider": (
        "gateway.cli.provider",
        "the memory provider: status, search, reindex, card",
    ),
    "doctor": (
        "gateway.cli.doctor",
        "check config, model, platform tokens, home, storage, archive and memory",
    ),
    "storage": (
        "gateway.cli.storage",
        "move a home into PostgreSQL, check the storage of either backend",
    ),
    "init": ("gateway.cli.setup", "create the home folder and a commented config"),
    "config": ("gateway.cli.setup", "check the config or print a commented one"),
}


def add_command(commands: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """Add the top-level command ``name`` with its help from ``COMMANDS``."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=COMMANDS[name][1], **options)
    return parser


class UsageError(Exception):
    """Bad arguments found after parsing (exit status 2)."""
