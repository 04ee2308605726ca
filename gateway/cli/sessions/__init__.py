"""``mnemo sessions …``: operators browse, search, import, export and check the archive.

``--person P`` shows exactly what P could see (the sessions P took part in, scoped in SQL by
``memory.archive.database``); without it an operator sees everything. A session that exists but is
not P's is reported exactly like one that does not exist. Reading commands never create
``<home>/state.db``; ``import`` does.

``browse`` holds the reading actions (list, show, search), ``maintain`` the others (import,
export, check), ``common`` what they share.
"""

from __future__ import annotations

import argparse
from typing import Any

from gateway.cli.common import add_command
from gateway.cli.sessions.browse import list_sessions, search_sessions, show_session
from gateway.cli.sessions.common import guarded
from gateway.cli.sessions.maintain import (
    check_archive,
    export_records,
    import_records,
    read_import_lines,
)
from gateway.people import person_option

__all__ = ["read_import_lines", "register"]

LIST_LIMIT = 20
SEARCH_LIMIT = 10  # the session_search tool returns at most 10 results


def register(commands: Any) -> None:
    sessions = add_command(commands, "sessions")
    sub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)

    def person(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--person",
            type=person_option,
            help="telegram:12345 or telegram-12345: only what they took part in (else all)",
        )

    def as_json(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="machine-readable JSON output")

    p = sub.add_parser("list", help="recent sessions, most recent first")
    person(p)
    p.add_argument("--limit", type=_positive, default=LIST_LIMIT, metavar="N")
    as_json(p)
    p.set_defaults(handler=guarded(list_sessions))

    p = sub.add_parser("show", help="one session's metadata and all its messages")
    p.add_argument("id", metavar="ID")
    person(p)
    as_json(p)
    p.set_defaults(handler=guarded(show_session))

    p = sub.add_parser("search", help="ranked full-text search (as the session_search tool)")
    p.add_argument("query", metavar="QUERY")
    person(p)
    p.add_argument("--limit", type=_positive, default=SEARCH_LIMIT, metavar="N", help="at most 10")
    as_json(p)
    p.set_defaults(handler=guarded(search_sessions))

    p = sub.add_parser("import", help="import JSONL message records ('-' reads stdin)")
    p.add_argument("file", metavar="FILE.jsonl")
    as_json(p)
    p.set_defaults(handler=guarded(import_records))

    p = sub.add_parser("export", help="user and assistant messages as JSONL on stdout")
    person(p)
    p.set_defaults(handler=guarded(export_records))

    p = sub.add_parser("check", help="integrity and search-index check (exit 1 on a problem)")
    p.add_argument("--repair", action="store_true", help="rebuild the search indexes first")
    as_json(p)
    p.set_defaults(handler=guarded(check_archive))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
