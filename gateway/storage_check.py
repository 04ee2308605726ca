"""``mnemo storage check``: the integrity checks of whichever backend ``storage.backend``
names (the archive's own check, the memory scan, the skills check, the outbox's counts),
one line per problem. The move into PostgreSQL is ``gateway.storage_ops``.

A check writes nothing to PostgreSQL: ``schemas`` reads which migrations each part (the
archive, the delivery ledger, the stores of memory, pairing and skills) has recorded, and a
part whose tables are missing or behind is reported as not migrated, never created or
upgraded (``mnemo run`` does that at start; a database a newer mnemo wrote is a problem).
SQLite's ``state.db`` is migrated on open, as by every command."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gateway.config import Config, Paths
from gateway.ledger import RETENTION_S, Ledger
from gateway.ledger_postgres import MIGRATIONS as LEDGER_MIGRATIONS
from gateway.ledger_postgres import PgLedger
from gateway.storage import command_stores, open_archive, reaching
from memory import FILE_NAMES
from memory.archive import Archive, ArchiveStore

if TYPE_CHECKING:
    import asyncpg

__all__ = ["Check", "Schema", "check_home", "schemas"]


@dataclass(slots=True)
class Check:
    backend: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was checked, for people


@dataclass(frozen=True, slots=True)
class Schema:
    """The migrations one part of a PostgreSQL database has recorded, against the ones this
    mnemo knows."""

    part: str
    recorded: frozenset[str]
    known: tuple[str, ...]

    @property
    def pending(self) -> list[str]:
        return [name for name in self.known if name not in self.recorded]

    @property
    def unknown(self) -> list[str]:
        """Recorded by a newer mnemo: this one cannot use the part."""
        return sorted(self.recorded - set(self.known))

    @property
    def current(self) -> bool:
        return not self.pending and not self.unknown

    def state(self) -> str:
        """What is wrong, in words (for a part that is not ``current``)."""
        if self.unknown:
            return (
                f"the database records migrations this mnemo does not know"
                f" ({', '.join(self.unknown)}): a newer mnemo wrote them; upgrade this one"
            )
        if not self.recorded:
            return "not migrated: no tables yet (the first `mnemo run` creates them)"
        return f"not migrated: {', '.join(self.pending)} pending (`mnemo run` applies them)"


async def schemas(pool: asyncpg.Pool) -> dict[str, Schema]:
    """Each part's recorded migrations, by part (``archive``, ``ledger``, ``stores``); read
    only: a missing migrations table is a part with nothing recorded."""
    from memory.archive.postgres import MIGRATIONS as ARCHIVE  # noqa: PLC0415 - extras
    from memory.documents.schema import MIGRATIONS as STORES  # noqa: PLC0415

    parts = {
        "archive": ("archive_migrations", tuple(m.name for m in ARCHIVE)),
        "ledger": ("gateway_migrations", tuple(name for name, _ in LEDGER_MIGRATIONS)),
        "stores": ("store_migrations", tuple(m.name for m in STORES)),
    }
    found = {}
    async with pool.acquire() as db:
        for part, (table, known) in parts.items():
            rows = []
            if await db.fetchval("SELECT to_regclass($1) IS NOT NULL", table):
                rows = await db.fetch(f"SELECT name FROM {table}")  # noqa: S608 (ours, above)
            found[part] = Schema(part, frozenset(str(row[0]) for row in rows), known)
    return found


async def check_home(paths: Paths, config: Config, environ: Mapping[str, str]) -> Check:
    """The integrity checks of ``config.storage.backend`` (see the module docstring)."""
    report = Check(config.storage.backend)
    found = await _check_archive(report, paths, config, environ)
    stores = None if found is None else found["stores"]
    if stores is None or stores.current:
        await asyncio.to_thread(_check_documents, report, paths, config, environ)
    else:
        _not_current(report, "memory, pairing and skills", stores)
    return report


def _not_current(report: Check, what: str, schema: Schema) -> None:
    """A part this check cannot read: a problem when a newer mnemo wrote it, else a note."""
    (report.problems if schema.unknown else report.notes).append(f"{what}: {schema.state()}")


async def _check_archive(
    report: Check, paths: Paths, config: Config, environ: Mapping[str, str]
) -> dict[str, Schema] | None:
    """The archive and the ledger; on PostgreSQL, what ``schemas`` found (None on SQLite)."""
    if config.storage.backend == "sqlite" and not paths.state_db.exists():
        report.notes.append(f"archive: none yet at {paths.state_db}")
        return None
    stale_before = time.time() - RETENTION_S
    found = None
    async with open_archive(paths, config, environ, migrate=False) as archive:
        if config.storage.backend == "postgres":
            with reaching(config.storage.postgres.dsn_env):
                found = await schemas(archive.pool)  # type: ignore[attr-defined]
        if found is None or found["archive"].current:
            report.problems += [f"archive: {problem}" for problem in await archive.check()]
            counts = await archive.counts()
            report.notes.append(
                f"archive: {_plural(counts['sessions'], 'session')},"
                f" {_plural(counts['messages'], 'message')}, {counts['people']} people"
            )
        else:
            _not_current(report, "archive", found["archive"])
        if found is not None and not found["ledger"].current:
            _not_current(report, "ledger", found["ledger"])
            return found
        states, stale = await _ledger_counts(archive, stale_before)
    shown = ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "empty"
    report.notes.append(f"ledger: outbox {shown}")
    if stale:
        report.problems.append(
            f"ledger: {stale} unsent replies are older than {RETENTION_S // 86_400} days"
            " (a platform that never took them?)"
        )
    return found


async def _ledger_counts(archive: ArchiveStore, stale_before: float) -> tuple[dict[str, int], int]:
    """Outbox rows by state, and unsent ones older than the retention window."""
    if isinstance(archive, Archive):

        def stale(db: sqlite3.Connection) -> int:
            row = db.execute(
                "SELECT count(*) FROM outbox WHERE state = 'pending' AND created_at < ?",
                (stale_before,),
            ).fetchone()
            return int(row[0])

        return await Ledger(archive).counts(), await archive.transact(stale)
    pool = archive.pool  # type: ignore[attr-defined]
    old = await pool.fetchval(
        "SELECT count(*) FROM outbox WHERE state = 'pending' AND created_at < $1", stale_before
    )
    return await PgLedger(pool).counts(), int(old)


def _check_documents(
    report: Check, paths: Paths, config: Config, environ: Mapping[str, str]
) -> None:
    named = command_stores(paths, config, environ, migrate=False)  # a check writes nothing
    stores = named.memory
    selected = [stores.for_person("shared")] if stores.scope == "shared" else list(stores)
    for store in selected:
        blocked, drifts = store.check()
        for item in blocked:
            entry = " ".join(item.entry.split())[:80]
            report.problems.append(
                f"memory: {store.person} · {FILE_NAMES[item.target]}: blocked entry"
                f" ({', '.join(item.ids)}): {entry}"
            )
        for drift in drifts:
            report.problems.append(
                f"memory: {store.person} · {FILE_NAMES[drift.target]}: {drift.reason}"
            )
    report.notes.append(f"memory: {_plural(len(selected), 'store')} scanned")
    skills = named.skills
    report.problems += [f"skills: {p.path}: {p.reason}" for p in skills.check()]
    report.notes.append(f"skills: {_plural(len(skills.scan()[0]), 'skill')} checked")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
