"""First run: ``mnemo init``, ``mnemo config check`` and ``mnemo config example``.

``init`` makes the home (0700) with ``memories/`` and ``skills/`` and writes the commented
``config.yaml`` of ``gateway.config.doc`` (0600, created with ``O_EXCL``, so an existing
file is never replaced: that is exit 1, after the missing folders are made all the same).
It then prints the next steps, naming the variables *this* config reads.

``config check`` runs after the loader (which already turned a broken file into exit 2) and
adds ``gateway.cli.preflight.check_environment``: one ``mnemo: config check: …`` line per problem
on stderr and exit 2, or ``config OK: <file>`` and a one-line summary. Only variable names
are printed, never their values.
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from gateway.cli.common import add_command
from gateway.cli.preflight import check_environment, enabled_platforms
from gateway.config import Config, Paths, commented_config
from memory.files import ensure_private_dir

__all__ = ["check_environment", "register", "summary"]


def register(commands: Any) -> None:
    init = add_command(commands, "init")
    init.set_defaults(handler=_init)
    config = add_command(commands, "config")
    sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate the config and the environment (exit 2)")
    check.set_defaults(handler=_check)
    example = sub.add_parser("example", help="print the commented config with every default")
    example.set_defaults(handler=_example)


def _init(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    try:
        for directory in (paths.home, paths.memories, paths.skills):
            ensure_private_dir(directory)
    except OSError as exc:
        print(f"mnemo: cannot create {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    mode = stat.S_IMODE(paths.home.stat().st_mode)
    if mode & 0o077:
        print(
            f"mnemo: note: {paths.home} is open to other users (mode {mode:o});"
            f" `chmod 700 {shlex.quote(str(paths.home))}` keeps memories private",
            file=sys.stderr,
        )
    try:
        _write_new(paths.config_file, commented_config())
    except FileExistsError:
        print(
            f"mnemo: {paths.config_file} already exists; not overwritten"
            " (`mnemo config example` prints a fresh commented copy to compare)",
            file=sys.stderr,
        )
        return 1
    except OSError as exc:
        print(f"mnemo: cannot write {paths.config_file}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"Created {paths.config_file} (every key, its default and meaning),")
    print(f"with {paths.memories}/ and {paths.skills}/ beside it.")
    print()
    print(_next_steps(args, paths, config))
    return 0


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` with mode 0600, failing with ``FileExistsError`` if it exists."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    path.chmod(0o600)


def _next_steps(args: argparse.Namespace, paths: Paths, config: Config) -> str:
    mnemo = "mnemo"
    if args.home is not None:
        mnemo += f" --home {shlex.quote(str(paths.home))}"
    telegram = config.platforms.telegram.token_env
    discord = config.platforms.discord.token_env
    model = config.model.api_key_env
    width = max(len(telegram), len(discord), len(model))
    return "\n".join(
        [
            "Next steps:",
            "  1. Put secrets in the environment (never in config.yaml):",
            f"       {model:<{width}}  the model API key (or set model.base_url to a local server)",
            f"       {telegram:<{width}}  when platforms.telegram.enabled is true",
            f"       {discord:<{width}}  when platforms.discord.enabled is true",
            f"  2. Edit {paths.config_file}: enable a platform, list allowed_users and"
            " gateway.admins.",
            f"  3. {mnemo} config check      validate the config and the environment",
            f"  4. {mnemo} chat --dry-run    try the agent on this terminal (echo model)",
            f"  5. {mnemo} run               start the bots",
        ]
    )


def _check(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    problems = check_environment(config, os.environ)
    if problems:
        for problem in problems:
            print(f"mnemo: config check: {problem}", file=sys.stderr)
        return 2
    source = "" if paths.config_file.exists() else " (no file: built-in defaults)"
    print(f"config OK: {paths.config_file}{source}")
    print(summary(config))
    return 0


def summary(config: Config) -> str:
    """One line: what ``mnemo run`` would start with this config."""
    platforms = []
    for name in enabled_platforms(config):
        mode = getattr(getattr(config.platforms, name), "mode", None)
        platforms.append(f"{name} ({mode})" if mode else name)
    endpoint = config.model.base_url or "OpenAI"  # the loader refuses one with user:password@
    http = config.ops.http.listen or "off"
    return (
        f"platforms: {', '.join(platforms) or 'none enabled (mnemo chat only)'}; "
        f"model: {config.model.name} at {endpoint}; memory: {config.memory.scope}; "
        f"admins: {len(config.gateway.admins)}; http: {http}"
    )


def _example(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    sys.stdout.write(commented_config())
    return 0
