"""``mnemo pairing …``: the shell's twin of ``/pair``, on ``<home>/pairing.json``.

The running gateway notices what is done here within a couple of seconds (an approval is
announced to the person; a block or a revocation holds from their next message), since
both processes share the file under its lock.

``list`` prints a header row, then one row per waiting code (who, the code, how long it
has left, what the person calls themselves), per approved and per blocked person; ``--json``
gives the same as one object. Everything the person chose (their name) goes through
``label`` first, so an escape code or a newline in it prints as one inert line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from typing import Any

from adapters.messages import label
from gateway.cli.common import UsageError, add_command
from gateway.config import Config, Paths
from gateway.pairing import Listing, qualified_id, time_left

__all__ = ["register"]

HEADER = ("STATE", "WHO", "CODE", "EXPIRES", "NAME (what they call themselves)")


def register(commands: Any) -> None:
    pairing = add_command(commands, "pairing")
    actions = pairing.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="waiting codes, approved and blocked people")
    listing.add_argument("--json", action="store_true", help="machine-readable JSON output")
    for name, text in (
        ("approve", "let the person holding CODE talk to the bot"),
        ("deny", "drop a waiting code (they may ask again, within the daily cap)"),
    ):
        p = actions.add_parser(name, help=text)
        p.add_argument("code")
    for name, text in (
        ("revoke", "take an approval back (PLATFORM:ID)"),
        ("block", "ignore someone silently everywhere (PLATFORM:ID); drops their approval"),
        ("unblock", "stop ignoring someone (PLATFORM:ID)"),
    ):
        p = actions.add_parser(name, help=text)
        p.add_argument("who", metavar="PLATFORM:ID")
    pairing.set_defaults(handler=_pairing)


def _pairing(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    from gateway.storage import command_stores

    store = command_stores(paths, config, os.environ).pairing
    if args.action == "list":
        listing = store.listing()
        if args.json:
            print(json.dumps(_as_json(listing, store.now), ensure_ascii=False, indent=2))
        else:
            _print_table(listing, store.now)
        return 0
    if args.action in ("approve", "deny"):
        code = args.code.strip().upper()
        who = (store.approve if args.action == "approve" else store.deny)(code)
        if who is None:
            print(f"mnemo: no waiting pairing code {label(code)!r}", file=sys.stderr)
            return 1
        print(f"approved {who}" if args.action == "approve" else f"denied {code} of {who}")
        return 0
    who = qualified_id(args.who)
    if who is None:
        raise UsageError(f"{label(args.who)!r} is not PLATFORM:ID (e.g. telegram:123)")
    if args.action == "block" and who in config.gateway.admins:
        print(f"mnemo: {who} is an admin (gateway.admins); not blocked", file=sys.stderr)
        return 1
    action, done, refused = {
        "revoke": (store.revoke, "revoked", "was not approved by pairing"),
        "block": (store.block, "blocked", "was blocked already"),
        "unblock": (store.unblock, "unblocked", "was not blocked"),
    }[args.action]
    if not action(who):
        print(f"mnemo: {who} {refused}", file=sys.stderr)
        return 1
    print(f"{done} {who}")
    return 0


def _rows(listing: Listing, now: float) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [
        ("pending", label(p.who), p.code, f"in {time_left(p.expires_at - now)}", label(p.name))
        for p in listing.pending
    ]
    rows += [("approved", label(who), "-", "-", "") for who in listing.approved]
    rows += [("blocked", label(who), "-", "-", "") for who in listing.blocked]
    return rows


def _print_table(listing: Listing, now: float) -> None:
    rows = _rows(listing, now)
    if not rows:
        print("No pairings: no codes waiting, nobody approved or blocked.")
        return
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER) - 1)]
    for row in [HEADER, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())


def _as_json(listing: Listing, now: float) -> dict[str, Any]:
    return {
        "pending": [
            {
                "code": p.code,
                "who": label(p.who),
                "name": label(p.name),
                "expires_at": datetime.fromtimestamp(int(p.expires_at), UTC).isoformat(),
                "expires_in_s": max(0, int(p.expires_at - now)),
            }
            for p in listing.pending
        ],
        "approved": [label(who) for who in listing.approved],
        "blocked": [label(who) for who in listing.blocked],
    }
