"""Moving a home's state into PostgreSQL, and checking either backend (``mnemo storage``).

``migrate_home`` copies what one SQLite home holds into the database a replica set shares:

* the archive, session by session with every id kept (``memory.archive.postgres.restore``:
  the JSONL export leaves out tool messages, token counts, the frozen system prompts and the
  sessions' keys, so the copy goes through the typed reads instead);
* curated memory (every document of every person's folder: ``MEMORY.md``, ``USER.md``,
  ``PENDING.json``), the skills (every file under ``skills/``, the staged changes in
  ``.pending.json`` too) and ``pairing.json``, byte for byte through the ``Documents`` seam;
* the delivery ledger's unsent replies (``gateway.ledger_postgres.adopt_pending``), owned by
  no live replica, so the first one to start sends them. The inbound dedup keys stay behind:
  they only stop a platform redelivering an update to the process that already took it, and
  the updates the old process accepted are confirmed to the platform already (Telegram's
  offset, Discord's resume); a replica set starts its own. An update the old process had
  queued but never answered is not carried over either: it was interrupted there.

It is idempotent (what the target holds already is skipped; a second run copies nothing),
and it never overwrites: a document or skill file the target holds with other bytes, or
message ids it holds for other sessions' messages, stop the move (``Refused``) before
anything is written. (A message id held in the same session for another text is found only
while copying that session: the sessions before it stay copied, which a later run skips.)
Every count is then verified: each kind's source items must all be in the target (the
target may hold more: replicas may already have written there).

``check_home`` runs the integrity checks on the configured backend: the archive's
``check``, the curated-memory scan (what ``mnemo memory scan`` reports), the skills check,
and a ledger count. The connection string is read from the environment and never printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.config import Config, Paths
from gateway.ledger import Ledger
from gateway.ledger_postgres import adopt_pending, missing_pending
from gateway.storage import postgres_dsn, reaching
from memory.archive import Archive
from memory.documents import Documents, DocumentsError, FileDocuments, FileFolders
from memory.skills import FileTree

if TYPE_CHECKING:
    import asyncpg

    from gateway.ledger import OutboxRow
    from memory.archive import Message, Session
    from memory.archive.postgres import Present
    from memory.documents.postgres import PgStores

__all__ = ["Move", "Refused", "Tally", "migrate_home"]

KINDS = (
    "sessions",
    "messages",
    "people",
    "memory documents",
    "skill files",
    "pairing entries",
    "pending outbox rows",
)


class Refused(Exception):
    """The move cannot go on without overwriting something, or cannot start (one line)."""


@dataclass(slots=True)
class Tally:
    kind: str
    source: int = 0
    target: int = 0  # everything of this kind the target holds
    found: int = 0  # the source's items the target holds (verified, or before a dry run)
    copied: int = 0  # written now (a dry run: would be)


@dataclass(slots=True)
class Move:
    dry_run: bool
    tallies: dict[str, Tally] = field(default_factory=lambda: {k: Tally(k) for k in KINDS})
    problems: list[str] = field(default_factory=list)  # source items that cannot be copied

    @property
    def missing(self) -> list[Tally]:
        """Kinds of which the target lacks some of the source's items (after a real run)."""
        return [t for t in self.tallies.values() if t.found < t.source]


# -- the source ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Doc:
    kind: str  # memory, skills, pairing
    folder: str
    name: str
    raw: bytes

    @property
    def label(self) -> str:
        return "/".join(part for part in (self.kind, self.folder, self.name) if part)


def _memory_docs(paths: Paths) -> list[_Doc]:
    folders = FileFolders(paths.memories)
    return [
        _Doc("memory", person, name, raw)
        for person in folders.names()
        for name in folders.folder(person).names()
        if (raw := folders.folder(person).read(name).raw) is not None
    ]


def _skill_docs(root: Path, problems: list[str]) -> list[_Doc]:
    """Every regular file under ``skills/`` through ``FileTree`` (dot entries skipped but the
    root's ``.pending.json``: the staged changes); links and the like are reported."""
    tree = FileTree(root)
    found: list[_Doc] = []
    if tree.kind("") != "dir":
        return found
    pending = FileDocuments(root).read(".pending.json").raw
    if pending is not None:
        found.append(_Doc("skills", "", ".pending.json", pending))

    def visit(rel: str) -> None:
        for name in tree.entries(rel):
            path = f"{rel}/{name}" if rel else name
            kind = tree.kind(path)
            if kind == "dir":
                visit(path)
            elif kind == "file":
                found.append(_Doc("skills", "", path, (root / path).read_bytes()))
            else:
                problems.append(f"skills/{path}: a {kind}, not a regular file; not copied")

    visit("")
    return found


def _pairing_entries(raw: bytes | None) -> int:
    """Codes waiting, people approved and people blocked in a ``pairing.json``."""
    if raw is None:
        return 0
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return 0
    if not isinstance(data, dict):
        return 0
    return sum(len(data.get(key) or ()) for key in ("pending", "approved", "blocked"))


def _ordered(sessions: list[Session]) -> list[Session]:
    """Parents before their continuations (the target's foreign key wants them first)."""
    by_id = {s.id: s for s in sessions}
    done: set[str] = set()
    ordered: list[Session] = []

    def add(session: Session) -> None:
        if session.id in done:
            return
        done.add(session.id)
        parent = by_id.get(session.parent_id or "")
        if parent is not None:
            add(parent)
        ordered.append(session)

    for session in sorted(sessions, key=lambda s: (s.started_at, s.id)):
        add(session)
    return ordered


# -- the target ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _target(
    variable: str, dsn: str, *, migrate: bool
) -> AsyncIterator[tuple[asyncpg.Pool, PgStores]]:
    """An asyncpg pool (archive, ledger) and the document stores (their tables made only if
    ``migrate``: a dry run creates nothing)."""
    import asyncpg  # noqa: PLC0415  (a driver: only a move loads it)

    from memory.documents.postgres import PgStores, open_pool  # noqa: PLC0415

    with reaching(variable):
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2, timeout=10)
        try:
            docs = await asyncio.to_thread(open_pool, dsn, max_size=2, timeout_s=10)
        except BaseException:
            await pool.close()
            raise
    try:
        stores = await asyncio.to_thread(PgStores, docs, run_migrations=migrate)
        yield pool, stores
    finally:
        docs.close()
        await pool.close()


def _target_docs(stores: PgStores, doc: _Doc) -> Documents:
    if doc.kind == "memory":
        return stores.memory().folder(doc.folder)
    return stores.documents(doc.kind)


def _documents_table(stores: PgStores) -> bool:
    with stores.connection() as conn:
        row = conn.execute("SELECT to_regclass('store_documents') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _count_docs(stores: PgStores, kind: str) -> int:
    with stores.connection() as conn:
        row = conn.execute("SELECT count(*) FROM store_documents WHERE kind = %s", (kind,))
        found = row.fetchone()
    return int(found[0]) if found else 0


# -- migrate ------------------------------------------------------------------------------


async def migrate_home(
    paths: Paths,
    config: Config,
    environ: Mapping[str, str],
    *,
    dry_run: bool = False,
) -> Move:
    """Copy the SQLite home of ``paths`` into the database ``storage.postgres.dsn_env``
    names (see the module docstring); ``Refused`` when that would overwrite something."""
    move = Move(dry_run)
    tallies = move.tallies
    docs = _memory_docs(paths)
    docs += _skill_docs(paths.skills, move.problems)
    pairing = FileDocuments(paths.home).read("pairing.json").raw
    if pairing is not None:
        docs.append(_Doc("pairing", "", "pairing.json", pairing))
    variable, dsn = postgres_dsn(config, environ, wanted_by="moving a home to PostgreSQL")
    async with _target(variable, dsn, migrate=not dry_run) as (pool, stores):
        # every refusal before the first write
        held = await asyncio.to_thread(_held, stores, docs)
        source = await _archive_source(paths, pool)
        await asyncio.to_thread(_documents, move, stores, docs, pairing, held)
        if source is not None:
            await _archive(move, paths, pool, source)
        await _archive_totals(tallies, pool)
    _kind_totals(tallies, docs, pairing)
    return move


def _held(stores: PgStores, docs: list[_Doc]) -> dict[str, bytes | None]:
    """What the target holds for each of ``docs``; ``Refused`` if any differs."""
    exists = _documents_table(stores)
    held: dict[str, bytes | None] = {}
    for doc in docs:
        held[doc.label] = _target_docs(stores, doc).read(doc.name).raw if exists else None
    differ = [d for d in docs if held[d.label] not in (None, d.raw)]
    if differ:
        first = differ[0]
        more = f" (and {len(differ) - 1} more)" if len(differ) > 1 else ""
        where = f"kind = '{first.kind}' AND folder = '{first.folder}' AND name = '{first.name}'"
        raise Refused(
            f"the target already holds a different postgres:{first.label}{more}; nothing of"  # noqa: S608 (words for a person)
            " memory, skills or pairing was copied. Keep the version you want in the home"
            f" folder, delete the target's row (DELETE FROM store_documents WHERE {where}),"
            " and run the move again"
        )
    return held


def _documents(
    move: Move,
    stores: PgStores,
    docs: list[_Doc],
    pairing: bytes | None,
    held: dict[str, bytes | None],
) -> None:
    """Write the documents the target lacks."""
    tallies = move.tallies
    for doc in docs:
        kind = _doc_kind(doc)
        if held[doc.label] is not None:
            _found(tallies[kind], doc, pairing)
            continue
        if move.dry_run:
            tallies[kind].copied += _weight(doc, pairing)
            continue
        try:
            _target_docs(stores, doc).write(doc.name, doc.raw, expected=None)
        except DocumentsError as exc:  # not UTF-8 text, a NUL, or written meanwhile
            move.problems.append(f"{doc.label}: not copied ({exc})")
            continue
        tallies[kind].copied += _weight(doc, pairing)
        _found(tallies[kind], doc, pairing)
    if _documents_table(stores):
        tallies["memory documents"].target = _count_docs(stores, "memory")
        tallies["skill files"].target = _count_docs(stores, "skills")
        raw = stores.pairing().read("pairing.json").raw
        tallies["pairing entries"].target = _pairing_entries(raw)


def _doc_kind(doc: _Doc) -> str:
    return {"memory": "memory documents", "skills": "skill files"}.get(doc.kind, "pairing entries")


def _weight(doc: _Doc, pairing: bytes | None) -> int:
    return _pairing_entries(pairing) if doc.kind == "pairing" else 1


def _found(tally: Tally, doc: _Doc, pairing: bytes | None) -> None:
    tally.found += _weight(doc, pairing)


def _kind_totals(tallies: dict[str, Tally], docs: list[_Doc], pairing: bytes | None) -> None:
    tallies["memory documents"].source = sum(d.kind == "memory" for d in docs)
    tallies["skill files"].source = sum(d.kind == "skills" for d in docs)
    tallies["pairing entries"].source = _pairing_entries(pairing)


@dataclass(frozen=True, slots=True)
class _Source:
    """What the SQLite archive and ledger hold, and how much of it the target has."""

    sessions: list[Session]
    pairs: list[tuple[int, str]]  # (message id, session id)
    people: list[str]
    outbox: list[OutboxRow]
    before: Present
    waiting: int  # pending outbox rows the target lacks


async def _archive_source(paths: Paths, pool: asyncpg.Pool) -> _Source | None:
    """None when the home has no archive (never create one: it would move nothing);
    ``Refused`` when the target holds this archive's message ids for other messages."""
    from memory.archive.postgres import present  # noqa: PLC0415

    if not paths.state_db.exists():
        return None
    async with await Archive.open(paths.state_db) as archive:
        sessions = await _sessions(archive)
        pairs: list[tuple[int, str]] = []
        for session in sessions:
            messages = await archive.messages(session.id, viewer=None)
            pairs += [(m.id, session.id) for m in messages]
        people = await archive.people()
        outbox = await Ledger(archive).pending()
    async with pool.acquire() as db:
        before = await present(db, [s.id for s in sessions], pairs, people)
    if before.conflicts:
        raise Refused(
            f"the target holds {before.conflicts} of this archive's message ids for other"
            " messages: it holds another archive; nothing was copied. Move into an empty"
            " database (or schema)"
        )
    waiting = len(await missing_pending(pool, outbox))
    return _Source(sessions, pairs, people, outbox, before, waiting)


async def _archive(move: Move, paths: Paths, pool: asyncpg.Pool, source: _Source) -> None:
    from memory.archive.postgres import RestoreConflict, migrate, present  # noqa: PLC0415

    tallies = move.tallies
    before, after, waiting = source.before, source.before, source.waiting
    outbox = tallies["pending outbox rows"]
    if move.dry_run:
        outbox.copied = waiting
    else:
        async with pool.acquire() as db:
            await migrate(db)
        async with await Archive.open(paths.state_db) as archive:
            try:
                for session in source.sessions:
                    tallies["messages"].copied += await _restore(archive, pool, session)
            except RestoreConflict as exc:
                raise Refused(f"{exc}; the sessions before it were copied") from None
        outbox.copied = await adopt_pending(pool, source.outbox)
        waiting = len(await missing_pending(pool, source.outbox))
        async with pool.acquire() as db:
            ids = [s.id for s in source.sessions]
            after = await present(db, ids, source.pairs, source.people)
    for kind, count, held, was in (
        ("sessions", len(source.sessions), after.sessions, before.sessions),
        ("messages", len(source.pairs), after.messages, before.messages),
        ("people", len(source.people), after.people, before.people),
    ):
        tallies[kind].source, tallies[kind].found = count, held
        if move.dry_run:
            tallies[kind].copied = count - was
        elif kind != "messages":  # messages: as many as restore_session wrote
            tallies[kind].copied = held - was
    outbox.source = len(source.outbox)
    outbox.found = len(source.outbox) - waiting


async def _sessions(archive: Archive) -> list[Session]:
    total = (await archive.counts())["sessions"]
    return _ordered(await archive.sessions(viewer=None, limit=max(1, total)))


async def _restore(archive: Archive, pool: asyncpg.Pool, session: Session) -> int:
    from memory.archive.postgres import restore_session  # noqa: PLC0415

    messages: list[Message] = await archive.messages(session.id, viewer=None)
    prompt = await archive.system_prompt(session.id)
    async with pool.acquire() as db, db.transaction():
        return await restore_session(db, session, prompt, messages)


async def _archive_totals(tallies: dict[str, Tally], pool: asyncpg.Pool) -> None:
    async with pool.acquire() as db:
        if not await db.fetchval("SELECT to_regclass('messages') IS NOT NULL"):
            return
        row = await db.fetchrow(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),"
            " (SELECT count(DISTINCT person) FROM session_people)"
        )
        assert row is not None
        tallies["sessions"].target, tallies["messages"].target = int(row[0]), int(row[1])
        tallies["people"].target = int(row[2])
        if await db.fetchval("SELECT to_regclass('outbox') IS NOT NULL"):
            pending = await db.fetchval("SELECT count(*) FROM outbox WHERE state = 'pending'")
            tallies["pending outbox rows"].target = int(pending)
