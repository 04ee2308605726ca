"""``mnemo sessions import``, ``export`` and ``check``: the archive's records in and out,
and its integrity.

Progress lines go to stderr, and only when stderr is a terminal, so pipes stay clean.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from gateway.cli.common import UsageError
from gateway.cli.sessions.common import archive_name, plural, print_json, query, viewer_of
from gateway.config import Config, Paths
from memory.archive import ArchiveStore, ImportFormatError, ImportReport

__all__ = ["check_archive", "export_records", "import_records", "read_import_lines"]

EXPORT_PROGRESS_EVERY = 1000


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


def import_records(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    try:
        lines = read_import_lines(args.file)
    except ImportFormatError as exc:
        raise UsageError(f"{name}: {exc}; nothing was imported") from None
    progress = _Progress("importing") if _progress_enabled() else None

    async def work(archive: ArchiveStore) -> ImportReport:
        try:
            return await archive.import_records(lines, progress=progress)
        except ImportFormatError as exc:
            raise UsageError(f"{name}: {exc}; nothing was imported") from None

    try:
        report = query(paths, config, work, create=True)
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
        print_json(summary)
    else:
        print(
            f"Read {plural(report.read, 'record')}: imported {report.imported:,},"
            f" skipped {report.skipped_duplicates:,} already archived (same external_id),"
            f" in {plural(len(report.sessions), 'session')}."
        )
    return 0


def export_records(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    viewer = viewer_of(args)
    progress = _Progress("exported") if _progress_enabled() else None

    async def work(archive: ArchiveStore) -> int:
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
        count = query(paths, config, work) or 0
        sys.stdout.flush()
        if progress is not None:
            progress(count)
    finally:
        if progress is not None:
            progress.finish()
    return 0


def check_archive(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    async def work(archive: ArchiveStore) -> tuple[list[str], list[str] | None, dict[str, int]]:
        before = await archive.check()
        after = None
        if args.repair:
            await archive.repair()
            after = await archive.check()
        return before, after, await archive.counts()

    found = query(paths, config, work)
    where = archive_name(paths, config)
    if found is None:
        if args.json:
            print_json({"database": where, "exists": False, "problems": []})
        else:
            print(f"No archive at {where} yet; nothing to check.")
        return 0
    before, after, counts = found
    problems = before if after is None else after
    if args.json:
        data: dict[str, Any] = {
            "database": where,
            "exists": True,
            "problems": problems,
            **counts,
        }
        if after is not None:
            data["repaired"] = True
            data["problems_before_repair"] = before
        print_json(data)
        return 1 if problems else 0
    if after is not None:
        for problem in before:
            print(f"FOUND   {problem}")
        print("Rebuilt the search indexes.")
    for problem in problems:
        print(f"PROBLEM {problem}")
    if problems:
        hint = "" if after is not None else "; `mnemo sessions check --repair` rebuilds the indexes"
        print(f"{plural(len(problems), 'problem')} in {where}{hint}.")
        return 1
    print(
        f"No problems in {where} ({plural(counts['sessions'], 'session')},"
        f" {plural(counts['messages'], 'message')})."
    )
    return 0


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
