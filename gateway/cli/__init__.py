"""The ``mnemo`` command line.

Exit status: 0 success, 1 the command ran and found or caused a problem, 2 bad usage or
an unusable configuration (one line per problem on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gateway.cli import chat as cli_chat
from gateway.cli import doctor as cli_doctor
from gateway.cli import memory as cli_memory
from gateway.cli import pairing as cli_pairing
from gateway.cli import run as cli_run
from gateway.cli import sessions as cli_sessions
from gateway.cli import setup as cli_setup
from gateway.cli import skills as cli_skills
from gateway.config import ConfigError, load_config, resolve_paths

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mnemo", description="Chat gateway with a self-curating memory.")
    parser.add_argument("--home", help="state directory (default: $MNEMO_HOME or ~/.mnemo)")
    parser.add_argument("--config", help="config file (default: <home>/config.yaml)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    cli_memory.register(commands)
    cli_sessions.register(commands)
    cli_chat.register(commands)
    cli_run.register(commands)
    cli_pairing.register(commands)
    cli_skills.register(commands)
    cli_doctor.register(commands)
    cli_setup.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else 2
    paths = resolve_paths(args.home, args.config)
    try:
        config = load_config(paths)
    except ConfigError as exc:
        for line in exc.lines:
            print(f"mnemo: config error: {line}", file=sys.stderr)
        return 2
    try:
        code: int = args.handler(args, paths, config)
    except cli_memory.UsageError as exc:
        print(f"mnemo: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `mnemo ... | head`
        return 0
    return code
