"""``mnemo sessions …``: operators browse, search, import, export and check the archive.

``--person P`` shows exactly what P could see (the sessions P took part in, scoped in SQL by
``memory.archive.database``); without it an operator sees everything. A session that exists but is
not P's is reported exactly like one that does not exist. Reading commands never create
``<home>/state.db``; ``import`` does.

Progress lines go to stderr, and only when stderr is a terminal, so pipes stay clean.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from gateway.cli.memory import UsageError
from gateway.config import Config, Paths
from gateway.people import person_option
from gateway.terminal import visible
from memory.archive import (
    Archive,
    ArchiveError,
    ImportFormatError,
    ImportReport,
    Message,
    MigrationError,
    SearchTool,
    Session,
    message_json,
    session_json,
)

__all__ = ["read_import_lines", "register"]

T = TypeVar("T")
Handler = Callable[[argparse.Namespace, Paths, Config], int]

LIST_LIMIT = 20
SEARCH_LIMIT = 10  # the session_search tool returns at most 10 results
EXPORT_PROGRESS_EVERY = 1000


def register(commands: Any) -> None:
    sessions = commands.add_parser("sessions", help="browse, search, import and check the archive")
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
    p.set_defaults(handler=_guarded(_list))

    p = sub.add_parser("show", help="one session's metadata and all its messages")
    p.add_argument("id", metavar="ID")
    person(p)
    as_json(p)
    p.set_defaults(handler=_guarded(_show))

    p = sub.add_parser("search", help="ranked full-text search (as the session_search tool)")
    p.add_argument("query", metavar="QUERY")
    person(p)
    p.add_argument("--limit", type=_positive, default=SEARCH_LIMIT, metavar="N", help="at most 10")
    as_json(p)
    p.set_defaults(handler=_guarded(_search))

    p = sub.add_parser("import", help="import JSONL message records ('-' reads stdin)")
    p.add_argument("file", metavar="FILE.jsonl")
    as_json(p)
    p.set_defaults(handler=_guarded(_import))

    p = sub.add_parser("export", help="user and assistant messages as JSONL on stdout")
    person(p)
    p.set_defaults(handler=_guarded(_export))

    p = sub.add_parser("check", help="integrity and search-index check (exit 1 on a problem)")
    p.add_argument("--repair", action="store_true", help="rebuild the search indexes first")
    as_json(p)
    p.set_defaults(handler=_guarded(_check))


# -- plumbing -----------------------------------------------------------------------------


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _call_line(call: Mapping[str, Any], width: int = 300) -> str:
    """``memory({"action": "add", …})``: a tool call as the model made it, one line."""
    function = call.get("function") or {}
    name = str(function.get("name") or call.get("name") or "?")
    arguments = str(function.get("arguments") or "")
    try:  # compact and one line, whatever spacing the model used
        arguments = json.dumps(json.loads(arguments), ensure_ascii=False)
    except ValueError:
        arguments = " ".join(arguments.split())
    if len(arguments) > width:
        arguments = arguments[: width - 1] + "…"
    return f"{name}({arguments})"


def _viewer(args: argparse.Namespace) -> str | None:
    """``--person``, already a valid person id (``people.person_option``)."""
    person: str | None = args.person
    return person


def _guarded(handler: Handler) -> Handler:
    """An archive that cannot be opened or read is a problem (exit 1), not a traceback."""

    def run(args: argparse.Namespace, paths: Paths, config: Config) -> int:
        try:
            return handler(args, paths, config)
        except (ArchiveError, MigrationError, sqlite3.Error) as exc:
            print(f"mnemo: archive {paths.state_db}: {exc}", file=sys.stderr)
            return 1

    return run


def _query(
    paths: Paths, work: Callable[[Archive], Awaitable[T]], *, create: bool = False
) -> T | None:
    """Run ``work`` on the archive; None when there is no archive yet and ``create`` is off."""
    if not create and not paths.state_db.exists():
        return None

    async def go() -> T:
        try:
            archive = await Archive.open(paths.state_db)
        except OSError as exc:
            raise ArchiveError(f"cannot open: {exc}") from None
        async with archive:
            return await work(archive)

    return asyncio.run(go())


def _progress_enabled() -> bool:
    return sys.stderr.isatty()


class _Progress:
    """``\\r``-rewritten progress line on stderr; ``finish`` ends it with a newline."""

    def __init__(self, verb: str) -> None:
        self.verb = verb
        self.shown = False

    def __call__(self, done: int, total: int | None = None) -> None:
        count = f"{done:,}" if total is None else f"{done:,}/{total:,}"
        print(f"\r{self.verb} {count} records", end="", file=sys.stderr, flush=True)
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            print(file=sys.stderr, flush=True)


def _utc(timestamp: float, *, seconds: bool = False) -> str:
    shape = "%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC"
    return datetime.fromtimestamp(timestamp, UTC).strftime(shape)


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _session_json(session: Session) -> dict[str, Any]:
    data = session_json(session)
    data["chat_id"] = session.chat_id
    data["people"] = list(session.people)
    if session.ended_at is not None:
        data["ended_at"] = session.ended_at
        data["end_reason"] = session.end_reason
    return data


def _not_found(session_id: str, viewer: str | None) -> int:
    # The same words for "does not exist" and "exists, but not this person's".
    whose = f" in the history of {viewer}" if viewer is not None else ""
    print(f"mnemo: no session {visible(repr(session_id))}{whose}", file=sys.stderr)
    return 1


# -- import helpers -------------------------------------------------------------------------


def read_import_lines(file: str) -> list[str]:
    """The lines of FILE (``-``: stdin), decoded one by one so a bad byte names its line.

    Lines are split on ``\\n`` only (JSON strings may hold U+2028 and friends), numbered as
    ``Archive.import_records`` numbers them.
    """
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")
    lines: list[str] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ImportFormatError(number, f"not valid UTF-8 (byte {exc.start + 1})") from None
    return lines


# -- handlers -----------------------------------------------------------------------------


def _list(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = _viewer(args)

    async def work(archive: Archive) -> list[Session]:
        found = await archive.sessions(viewer=viewer, limit=args.limit)
        # Archive.sessions leaves ``people`` empty; get_session fills it in.
        full = [await archive.get_session(s.id, viewer=viewer) for s in found]
        return [s for s in full if s is not None]

    sessions = _query(paths, work) or []
    if args.json:
        _print_json([_session_json(s) for s in sessions])
        return 0
    if not sessions:
        print("No sessions archived yet." if viewer is None else f"No sessions with {viewer}.")
    for s in sessions:
        print(f"{s.id}  {visible(s.title or '(untitled)')}")
        people = ", ".join(s.people) or "nobody"
        print(
            f"    {visible(s.platform)} · {visible(s.chat_type)} · {people}"
            f" · {_plural(s.message_count, 'message')}"
        )
        print(f"    started {_utc(s.started_at)} · last active {_utc(s.last_active_at)}")
    return 0


def _show(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = _viewer(args)

    async def work(archive: Archive) -> tuple[Session, list[Message]] | None:
        session = await archive.get_session(args.id, viewer=viewer)
        if session is None:
            return None
        return session, await archive.messages(args.id, viewer=viewer)

    found = _query(paths, work)
    if found is None:
        return _not_found(args.id, viewer)
    session, messages = found
    if args.json:
        _print_json(
            {
                "session": _session_json(session),
                "messages": [message_json(m, limit=len(m.content)) for m in messages],
            }
        )
        return 0
    print(f"Session {session.id}: {visible(session.title or '(untitled)')}")
    print(
        f"  platform {visible(session.platform)} · chat {visible(session.chat_id)}"
        f" ({visible(session.chat_type)}) · people {', '.join(session.people) or 'nobody'}"
    )
    print(
        f"  started {_utc(session.started_at)} · last active {_utc(session.last_active_at)}"
        f" · {_plural(session.message_count, 'message')}"
    )
    if session.parent_id:
        print(f"  continues {session.parent_id}")
    if session.ended_at is not None:
        print(f"  ended {_utc(session.ended_at)} ({visible(session.end_reason or 'no reason')})")
    for m in messages:
        head = [_utc(m.created_at, seconds=True), m.role]
        if m.speaker:
            head.append(visible(m.speaker))
        if m.tool_name:
            head.append(f"tool {visible(m.tool_name)}")
        if m.external_id:
            head.append(f"external_id {visible(m.external_id)}")
        print()
        print(f"[{m.id}] " + " · ".join(head))
        for call in m.tool_calls or []:
            print(f"    → {visible(_call_line(call))}")
        for line in visible(m.content).split("\n"):
            print(f"    {line}")
    return 0


def _search(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = _viewer(args)
    if not args.query.strip():
        raise UsageError("QUERY is empty (use `mnemo sessions list` to browse)")

    async def work(archive: Archive) -> dict[str, Any]:
        tool = SearchTool(archive)
        return await tool.call({"query": args.query, "limit": args.limit}, viewer=viewer)

    result = _query(paths, work)
    if result is None:
        result = {"success": True, "results": [], "note": "No sessions archived yet."}
    if not result.get("success"):  # pragma: no cover - arguments are validated above
        print(f"mnemo: {result.get('error')}", file=sys.stderr)
        return 1
    rows: list[dict[str, Any]] = []
    for rank, item in enumerate(result["results"], 1):
        message = item["message"]
        row = {
            "rank": rank,
            "session_id": item["session_id"],
            "title": item["title"],
            "platform": item["platform"],
            "chat_type": item["chat_type"],
            "message_id": message["id"],
            "role": message["role"],
            "created_at": message["created_at"],
            "when": message["when"],
            "snippet": item["snippet"],
        }
        for key in ("speaker", "external_id"):
            if key in message:
                row[key] = message[key]
        rows.append(row)
    if args.json:
        data: dict[str, Any] = {"query": args.query, "results": rows}
        if result.get("note"):
            data["note"] = result["note"]
        _print_json(data)
        return 0
    if result.get("note"):
        print(visible(result["note"]))
    for row in rows:
        print(f"{row['rank']}. {row['session_id']}  {visible(row['title'])}")
        who = row["role"] + (f" {visible(row['speaker'])}" if "speaker" in row else "")
        detail = f"   {row['when']} · message {row['message_id']} ({who})"
        if "external_id" in row:
            detail += f" · external_id {visible(row['external_id'])}"
        print(detail)
        print(f"   {visible(' '.join(row['snippet'].split()))}")
    return 0


def _import(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    try:
        lines = read_import_lines(args.file)
    except ImportFormatError as exc:
        raise UsageError(f"{name}: {exc}; nothing was imported") from None
    progress = _Progress("importing") if _progress_enabled() else None

    async def work(archive: Archive) -> ImportReport:
        try:
            return await archive.import_records(lines, progress=progress)
        except ImportFormatError as exc:
            raise UsageError(f"{name}: {exc}; nothing was imported") from None

    try:
        report = _query(paths, work, create=True)
    finally:
        if progress is not None:
            progress.finish()
    assert report is not None
    summary = {
        "read": report.read,
        "imported": report.imported,
        "skipped_duplicates": report.skipped_duplicates,
        "sessions": len(report.sessions),
        "session_ids": sorted(report.sessions),
    }
    if args.json:
        _print_json(summary)
    else:
        print(
            f"Read {_plural(report.read, 'record')}: imported {report.imported:,},"
            f" skipped {report.skipped_duplicates:,} already archived (same external_id),"
            f" in {_plural(len(report.sessions), 'session')}."
        )
    return 0


def _export(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = _viewer(args)
    progress = _Progress("exported") if _progress_enabled() else None

    async def work(archive: Archive) -> int:
        count = 0
        # export_records is an async generator: close it (and its reader) even on EPIPE.
        records = archive.export_records(viewer=viewer)
        async with contextlib.aclosing(records):
            async for record in records:
                sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += 1
                if progress is not None and count % EXPORT_PROGRESS_EVERY == 0:
                    progress(count)
        return count

    try:
        count = _query(paths, work) or 0
        sys.stdout.flush()
        if progress is not None:
            progress(count)
    finally:
        if progress is not None:
            progress.finish()
    return 0


def _check(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    async def work(archive: Archive) -> tuple[list[str], list[str] | None, dict[str, int]]:
        before = await archive.check()
        after = None
        if args.repair:
            await archive.repair()
            after = await archive.check()
        return before, after, await archive.counts()

    found = _query(paths, work)
    if found is None:
        if args.json:
            _print_json({"database": str(paths.state_db), "exists": False, "problems": []})
        else:
            print(f"No archive at {paths.state_db} yet; nothing to check.")
        return 0
    before, after, counts = found
    problems = before if after is None else after
    if args.json:
        data: dict[str, Any] = {
            "database": str(paths.state_db),
            "exists": True,
            "problems": problems,
            **counts,
        }
        if after is not None:
            data["repaired"] = True
            data["problems_before_repair"] = before
        _print_json(data)
        return 1 if problems else 0
    if after is not None:
        for problem in before:
            print(f"FOUND   {problem}")
        print("Rebuilt the search indexes.")
    for problem in problems:
        print(f"PROBLEM {problem}")
    if problems:
        hint = "" if after is not None else "; `mnemo sessions check --repair` rebuilds the indexes"
        print(f"{_plural(len(problems), 'problem')} in {paths.state_db}{hint}.")
        return 1
    print(
        f"No problems in {paths.state_db} ({_plural(counts['sessions'], 'session')},"
        f" {_plural(counts['messages'], 'message')})."
    )
    return 0
