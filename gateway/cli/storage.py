"""``mnemo storage …``: move a home into PostgreSQL, and check the storage of either backend.

``migrate --to postgres`` copies the SQLite home (``state.db``, ``memories/``, ``skills/``,
``pairing.json``) into the database that ``storage.postgres.dsn_env`` names, whatever
``storage.backend`` says yet (``gateway.storage_ops``): idempotent, never overwriting, and
verified kind by kind. It prints one table, KIND / SOURCE / TARGET / COPIED (``--dry-run``:
what would be copied), then any problem; exit 1 when the target lacks some of the source's
items afterwards, 2 when the move would overwrite something (nothing of that kind is
copied) or the database cannot be reached. ``check`` runs the integrity checks of the
configured backend: one line per problem, exit 1 if any. The connection string is never
printed; everything shown that a chat or a file could have written goes through
``visible``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from dataclasses import asdict
from typing import Any

from gateway.cli.common import add_command
from gateway.config import Config, Paths
from gateway.storage_check import check_home
from gateway.storage_ops import Move, Refused, migrate_home
from gateway.terminal import visible

__all__ = ["register"]

HEADER = ("KIND", "SOURCE", "TARGET", "COPIED")


def register(commands: Any) -> None:
    storage = add_command(commands, "storage")
    sub = storage.add_subparsers(dest="storage_command", metavar="ACTION", required=True)

    p = sub.add_parser("migrate", help="copy this home's state into PostgreSQL and verify it")
    p.add_argument("--to", required=True, choices=("postgres",), help="the target backend")
    p.add_argument("--dry-run", action="store_true", help="count what would be copied")
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.set_defaults(handler=_migrate)

    p = sub.add_parser("check", help="integrity checks of the configured backend (exit 1)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.set_defaults(handler=_check)


def _migrate(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    try:
        move = asyncio.run(migrate_home(paths, config, os.environ, dry_run=args.dry_run))
    except Refused as exc:
        print(f"mnemo: storage migrate refused: {visible(str(exc))}", file=sys.stderr)
        return 2
    missing = [] if move.dry_run else move.missing
    if args.json:
        print(json.dumps(_as_json(move), ensure_ascii=False, indent=2))
    else:
        _print_table(move)
        for problem in move.problems:
            print(f"PROBLEM {visible(problem)}")
        for tally in missing:
            print(
                f"MISSING {tally.kind}: {tally.source - tally.found} of the source's"
                f" {tally.source} are not in the target"
            )
        copied = sum(t.copied for t in move.tallies.values())
        if move.dry_run:
            print("Dry run: nothing was written." if copied else "Nothing new to copy.")
        elif not copied and not missing:
            print("Nothing new to copy: the target already holds all of it.")
        elif not missing:
            print("Copied and verified: the target holds everything this home holds.")
    return 1 if missing or (move.problems and not move.dry_run) else 0


def _print_table(move: Move) -> None:
    rows = [HEADER] + [
        (t.kind, str(t.source), str(t.target), str(t.copied)) for t in move.tallies.values()
    ]
    if move.dry_run:
        rows[0] = (*HEADER[:3], "TO COPY")
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        cells = [
            row[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)),
        ]
        print("  ".join(cells))


def _as_json(move: Move) -> dict[str, Any]:
    return {
        "dry_run": move.dry_run,
        "kinds": [asdict(t) for t in move.tallies.values()],
        "problems": move.problems,
        "missing": [] if move.dry_run else [t.kind for t in move.missing],
    }


def _check(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    report = asyncio.run(check_home(paths, config, os.environ))
    if args.json:
        data = {"backend": report.backend, "problems": report.problems, "checked": report.notes}
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        for problem in report.problems:
            print(f"PROBLEM {visible(problem)}")
        for note in report.notes:
            print(f"checked {visible(note)}")
        count = len(report.problems)
        print(
            f"{count} problem{'s' if count != 1 else ''} on {report.backend}."
            if count
            else f"No problems on {report.backend}."
        )
    return 1 if report.problems else 0
