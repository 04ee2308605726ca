"""``mnemo storage check``: the integrity checks of whichever backend ``storage.backend``
names (the archive's own check, the memory scan, the skills check, the outbox's counts),
one line per problem. The move into PostgreSQL is ``gateway.storage_ops``."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.config import Config, Paths, memory_stores
from gateway.ledger import RETENTION_S, Ledger
from gateway.ledger_postgres import PgLedger
from gateway.ledger_postgres import migrate as migrate_ledger
from gateway.storage import open_archive, shared_documents
from memory import FILE_NAMES
from memory.archive import Archive, ArchiveStore
from memory.skills import DocumentTree, SkillStore

__all__ = ["Check", "check_home"]


@dataclass(slots=True)
class Check:
    backend: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was checked, for people


async def check_home(paths: Paths, config: Config, environ: Mapping[str, str]) -> Check:
    """The integrity checks of ``config.storage.backend`` (see the module docstring)."""
    report = Check(config.storage.backend)
    await _check_archive(report, paths, config, environ)
    await asyncio.to_thread(_check_documents, report, paths, config, environ)
    return report


async def _check_archive(
    report: Check, paths: Paths, config: Config, environ: Mapping[str, str]
) -> None:
    if config.storage.backend == "sqlite" and not paths.state_db.exists():
        report.notes.append(f"archive: none yet at {paths.state_db}")
        return
    stale_before = time.time() - RETENTION_S
    async with open_archive(paths, config, environ) as archive:
        report.problems += [f"archive: {problem}" for problem in await archive.check()]
        counts = await archive.counts()
        report.notes.append(
            f"archive: {_plural(counts['sessions'], 'session')},"
            f" {_plural(counts['messages'], 'message')}, {counts['people']} people"
        )
        states, stale = await _ledger_counts(archive, stale_before)
    shown = ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "empty"
    report.notes.append(f"ledger: outbox {shown}")
    if stale:
        report.problems.append(
            f"ledger: {stale} unsent replies are older than {RETENTION_S // 86_400} days"
            " (a platform that never took them?)"
        )


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
    await migrate_ledger(pool)
    old = await pool.fetchval(
        "SELECT count(*) FROM outbox WHERE state = 'pending' AND created_at < $1", stale_before
    )
    return await PgLedger(pool).counts(), int(old)


def _check_documents(
    report: Check, paths: Paths, config: Config, environ: Mapping[str, str]
) -> None:
    shared = shared_documents(config, environ)
    stores = memory_stores(paths if shared is None else shared.memory(), config)
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
    skills = SkillStore(paths.skills if shared is None else DocumentTree(shared.skills()))
    report.problems += [f"skills: {p.path}: {p.reason}" for p in skills.check()]
    report.notes.append(f"skills: {_plural(len(skills.scan()[0]), 'skill')} checked")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
