"""The doctor's rows about where the state lives: home, storage, archive, memory, skills.

The archive, memory and skills rows check what the gateway of this config uses
(``gateway.storage``): ``state.db``, ``memories/`` and ``skills/`` in the home, or with
``storage.backend: postgres`` the shared database. There the doctor writes nothing: it reads
which migrations each part recorded (``gateway.storage_check.schemas``); a part with no
tables yet is fine (the first ``mnemo run`` creates them), one behind is a warning, one a
newer mnemo wrote a failure, and a part that is not current is not read (its rows are
skipped). A database that does not answer is one failed storage row, naming the variable,
never the connection string; the rows that need it are skipped.

Opening an existing ``state.db`` applies pending migrations, as every other command does;
nothing else is written, and a missing home or archive is never created.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import stat
import tempfile
import time
from collections.abc import Mapping

from gateway.cli.doctor.rows import Check, counted, elapsed_ms, error_text, guard, late
from gateway.config import Config, ConfigError, Paths
from gateway.storage import command_stores, open_archive, reaching
from gateway.storage_check import Schema, schemas
from memory.archive import Archive, ArchiveStore
from memory.curated import MemoryStores
from memory.skills import SkillStore

__all__ = ["check_home", "check_memory", "check_skills", "check_storage"]


def check_home(paths: Paths) -> list[Check]:
    home = paths.home
    if not home.exists():
        return [Check("home", "fail", f"{home} does not exist; run `mnemo init`")]
    if not home.is_dir():
        return [Check("home", "fail", f"{home} is not a directory")]
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=home)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return [Check("home", "fail", f"{home} is not writable: {exc.strerror or exc}")]
    mode = stat.S_IMODE(home.stat().st_mode)
    if mode & 0o077:
        detail = (
            f"{home} is writable but mode {mode:o} lets others in;"
            f" run `chmod 700 {shlex.quote(str(home))}`"
        )
        rows = [Check("home", "warn", detail)]
    else:
        rows = [Check("home", "ok", f"{home} is writable")]
    memories = paths.memories
    try:
        info = memories.stat()
    except OSError:  # missing: nothing remembered yet
        return rows
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode) and mode & 0o077:
        detail = (
            f"{memories} has mode {mode:o}: other users can see who talks to the bot;"
            f" run `chmod 700 {shlex.quote(str(memories))}`"
        )
        rows.append(Check("home", "warn", detail))
    return rows


async def check_storage(
    paths: Paths, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    """The storage row, then the archive, memory and skills rows, of the backend that
    ``storage.backend`` names (see the module docstring)."""
    if config.storage.backend == "postgres":
        return await _check_postgres(paths, config, environ, timeout_s)
    stores = command_stores(paths, config, environ)  # the home's files: no I/O yet
    groups = await asyncio.gather(
        guard("archive", check_archive(paths)),
        guard("memory", asyncio.to_thread(check_memory, stores.memory)),
        guard("skills", asyncio.to_thread(check_skills, stores.skills)),
    )
    head = Check("storage", "ok", f"sqlite: state.db and files in {paths.home}")
    return [head, *(row for group in groups for row in group)]


async def _check_postgres(
    paths: Paths, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    variable = config.storage.postgres.dsn_env
    where = f"postgres at {variable}"
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as opened:
        try:
            async with asyncio.timeout(timeout_s):
                archive = await opened.enter_async_context(
                    open_archive(paths, config, environ, migrate=False)
                )
                with reaching(variable):
                    found = await schemas(archive.pool)  # type: ignore[attr-defined]
        except (TimeoutError, ConfigError) as exc:  # unset, refused, too slow: one row
            why = late(timeout_s) if isinstance(exc, TimeoutError) else "; ".join(exc.lines)
            skipped = "not checked: the database did not answer (see the storage row)"
            return [
                Check("storage", "fail", f"{where}: {why.removeprefix('storage: ')}"),
                *(Check(name, "skip", skipped) for name in ("archive", "memory", "skills")),
            ]
        head = _schema_rows(where, found, elapsed_ms(started))
        archive_rows = guard("archive", _archive_rows(archive, found["archive"]))
        documents = found["stores"]
        if documents.current:
            opening = asyncio.to_thread(
                functools.partial(command_stores, paths, config, environ, migrate=False)
            )
            try:
                async with asyncio.timeout(timeout_s):
                    stores = await opening
            except Exception as exc:  # psycopg's own connection: refused, too slow
                why = late(timeout_s) if isinstance(exc, TimeoutError) else error_text(exc)
                failed = f"the stores could not be opened: {why}"
                groups = [
                    await archive_rows,
                    [Check("memory", "fail", failed)],
                    [Check("skills", "fail", failed)],
                ]
            else:
                groups = list(
                    await asyncio.gather(
                        archive_rows,
                        guard("memory", asyncio.to_thread(check_memory, stores.memory)),
                        guard("skills", asyncio.to_thread(check_skills, stores.skills)),
                    )
                )
        else:
            groups = [
                await archive_rows,
                [_unread("memory", documents, "no memory stored in PostgreSQL yet")],
                [_unread("skills", documents, "no skills in PostgreSQL yet")],
            ]
    return [*head, *(row for group in groups for row in group)]


def _schema_rows(where: str, found: Mapping[str, Schema], answered_in: str) -> list[Check]:
    """One row per part a newer mnemo wrote (fail) or behind this one (warn), else one ok
    row; parts with no tables yet are named, as the first ``mnemo run`` creates them."""
    rows = [
        Check("storage", "fail" if schema.unknown else "warn", f"{where}: {part}: {schema.state()}")
        for part, schema in found.items()
        if schema.recorded and not schema.current
    ]
    if rows:
        return rows
    detail = f"{where} answered in {answered_in}; migrations current"
    empty = [part for part, schema in found.items() if not schema.recorded]
    if empty:
        detail += f" (no tables yet for {', '.join(empty)}: the first `mnemo run` creates them)"
    return [Check("storage", "ok", detail)]


def _unread(name: str, schema: Schema, empty: str) -> Check:
    """The row of a part whose schema is not current: empty, or not read."""
    if not schema.recorded:
        return Check(name, "ok", empty)
    return Check(name, "skip", "not checked: its tables are not current (see the storage row)")


async def check_archive(paths: Paths) -> list[Check]:
    db = paths.state_db
    if not db.exists():
        return [Check("archive", "ok", f"{db.name} not created yet")]
    try:
        archive = await Archive.open(db)
    except Exception as exc:  # sqlite3.DatabaseError "file is not a database", OSError
        return [Check("archive", "fail", f"cannot open {db}: {error_text(exc)}")]
    async with archive:
        return await _archive_rows(archive)


async def _archive_rows(archive: ArchiveStore, schema: Schema | None = None) -> list[Check]:
    """The integrity check and the counts of an open archive (on PostgreSQL, only when
    its ``schema`` is current)."""
    if schema is not None and not schema.current:
        return [_unread("archive", schema, "no archive in PostgreSQL yet")]
    problems = await archive.check()
    counts = await archive.counts() if not problems else {}
    if problems:
        hint = "; see `mnemo sessions check` (--repair rebuilds the search indexes)"
        return [Check("archive", "fail", f"{problem}{hint}") for problem in problems]
    sessions, messages = counts.get("sessions", 0), counts.get("messages", 0)
    detail = f"integrity ok: {counted(sessions, 'session')}, {counted(messages, 'message')}"
    return [Check("archive", "ok", detail)]


def check_memory(memory: MemoryStores) -> list[Check]:
    rows: list[Check] = []
    stores = 0
    for store in memory:
        stores += 1
        blocked, drifts = store.check()
        found = []
        if blocked:
            found.append(counted(len(blocked), "blocked entry", "blocked entries"))
        if drifts:
            found.append(counted(len(drifts), "drifted file"))
        if found:
            detail = f"{store.person}: {', '.join(found)}; run `mnemo memory scan`"
            rows.append(Check("memory", "warn", detail))
    return rows or [
        Check("memory", "ok", f"{counted(stores, 'store')}, nothing blocked or drifted")
    ]


def check_skills(store: SkillStore) -> list[Check]:
    problems = store.check()
    if problems:
        first = problems[0]
        detail = (
            f"{counted(len(problems), 'problem')} (first: {first.path}: {first.reason});"
            " run `mnemo skills check`"
        )
        return [Check("skills", "warn", detail)]
    return [Check("skills", "ok", f"{counted(len(store.scan()[0]), 'skill')}, no problems")]
