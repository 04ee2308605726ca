"""The ``mnemo`` command line.

Exit status: 0 success, 1 the command ran and found or caused a problem, 2 bad usage or
an unusable configuration (one line per problem on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gateway.cli.common import COMMANDS, UsageError

__all__ = ["UsageError", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (None: none yet, e.g. ``mnemo --help``)."""
    words = iter(argv)
    for word in words:
        if word in ("--home", "--config"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with every command registered in full, or (``argv`` given) only the one
    ``argv`` runs: the others are listed by name and help alone, and their modules (the model
    SDK, platform libraries, the archive) are not imported."""
    parser = _Parser(prog="mnemo", description="Chat gateway with a self-curating memory.")
    parser.add_argument("--home", help="state directory (default: $MNEMO_HOME or ~/.mnemo)")
    parser.add_argument("--config", help="config file (default: <home>/config.yaml)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    chosen = None if argv is None else _command_of(argv)
    wanted = COMMANDS[chosen][0] if chosen in COMMANDS else None
    registered: set[str] = set()
    for name, (module, text) in COMMANDS.items():
        if argv is None or module == wanted:
            if module not in registered:  # one module may register several commands
                registered.add(module)
                importlib.import_module(module).register(commands)
        else:
            commands.add_parser(name, help=text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return exc.code if isinstance(exc.code, int) else 2
    from gateway.config import ConfigError, load_config, resolve_paths

    paths = resolve_paths(args.home, args.config)
    try:
        config = load_config(paths)
    except ConfigError as exc:
        for line in exc.lines:
            print(f"mnemo: config error: {line}", file=sys.stderr)
        return 2
    try:
        code: int = args.handler(args, paths, config)
    except UsageError as exc:
        print(f"mnemo: error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:  # what the config asks of the environment (wiring.build_model)
        for line in exc.lines:
            print(f"mnemo: error: {line}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `mnemo ... | head`
        return 0
    return code
