"""What every ``mnemo sessions`` action shares: the archive opened (or not) for one piece of
work, archive errors as exit status 1, and the output's small formats."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from gateway.config import Config, Paths
from memory.archive import ArchiveError, ArchiveStore, MigrationError

__all__ = [
    "Handler",
    "archive_name",
    "guarded",
    "plural",
    "print_json",
    "query",
    "utc",
    "viewer_of",
]

T = TypeVar("T")
Handler = Callable[[argparse.Namespace, Paths, Config], int]


def viewer_of(args: argparse.Namespace) -> str | None:
    """``--person``, already a valid person id (``people.person_option``)."""
    person: str | None = args.person
    return person


def archive_name(paths: Paths, config: Config) -> str:
    """Where the archive is, for people: ``state.db``'s path, or the variable that names the
    PostgreSQL database (never its connection string)."""
    if config.storage.backend == "postgres":
        return f"PostgreSQL at {config.storage.postgres.dsn_env}"
    return str(paths.state_db)


def guarded(handler: Handler) -> Handler:
    """An archive that cannot be opened or read is a problem (exit 1), not a traceback."""

    def run(args: argparse.Namespace, paths: Paths, config: Config) -> int:
        try:
            return handler(args, paths, config)
        except (ArchiveError, MigrationError, sqlite3.Error) as exc:
            print(f"mnemo: archive {archive_name(paths, config)}: {exc}", file=sys.stderr)
            return 1

    return run


def query(
    paths: Paths,
    config: Config,
    work: Callable[[ArchiveStore], Awaitable[T]],
    *,
    create: bool = False,
) -> T | None:
    """Run ``work`` on the archive of ``storage.backend``; None when a SQLite home has no
    archive yet and ``create`` is off."""
    if config.storage.backend == "sqlite" and not create and not paths.state_db.exists():
        return None

    async def go() -> T:
        from gateway.storage import open_archive

        try:
            async with open_archive(paths, config, os.environ) as archive:
                return await work(archive)
        except OSError as exc:
            raise ArchiveError(f"cannot open: {exc}") from None

    return asyncio.run(go())


def utc(timestamp: float, *, seconds: bool = False) -> str:
    shape = "%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC"
    return datetime.fromtimestamp(timestamp, UTC).strftime(shape)


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))
