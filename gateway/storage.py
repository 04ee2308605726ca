"""Where a gateway's state lives, opened once for a process (``storage.backend``).

``sqlite`` (the default): the archive and the delivery ledger in ``<home>/state.db``,
curated memory under ``memories/``, skills under ``skills/``, pairing in ``pairing.json``:
one home folder, one ``mnemo run``.

``postgres``: all of it in the database that ``storage.postgres.dsn_env`` names, so that
several replicas serve the same bots: the archive and the ledger on one asyncpg pool (the
archive's own; the ledger's rows know their replica, ``gateway.ledger_postgres``), curated
memory, pairing and skills on a psycopg pool (``memory.documents.postgres``: those stores
are synchronous and run in worker threads). The connection string comes from the
environment and is never logged; a database that does not answer stops the command with
one line that names the variable, not its value.

``open_storage`` is an async context manager: what it opened is closed in reverse order
however the block ends. The operator's commands of one short process take the synchronous
stores from ``command_stores`` and the archive from ``open_archive``, so that every command
reads the state a running gateway of the same config reads.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gateway.config import Config, ConfigError, Paths, memory_stores
from gateway.pairing import PairingStore
from memory.curated import MemoryStores
from memory.skills import DocumentTree, SkillStore

if TYPE_CHECKING:  # the archive and the ledger load only where a command opens them
    from gateway.ledger import DeliveryLedger
    from memory.archive import ArchiveStore
    from memory.documents.postgres import PgStores

__all__ = [
    "Storage",
    "Stores",
    "command_stores",
    "open_archive",
    "open_storage",
    "postgres_dsn",
    "reaching",
    "shared_documents",
]


@dataclass(slots=True)
class Storage:
    backend: Literal["sqlite", "postgres"]
    archive: ArchiveStore
    stores: MemoryStores
    pairing: PairingStore
    skills: SkillStore | None  # None: skills are off
    ledger: DeliveryLedger | None = None  # None: the archive's own (SQLite)


def postgres_dsn(
    config: Config, environ: Mapping[str, str], *, wanted_by: str = "storage.backend is postgres"
) -> tuple[str, str]:
    """(the variable, the connection string) of ``storage.postgres``; ``ConfigError`` when
    the variable is unset, saying what wanted it (``wanted_by``)."""
    variable = config.storage.postgres.dsn_env
    dsn = environ.get(variable, "").strip()
    if not dsn:
        raise ConfigError([f"{wanted_by} but {variable} is not set"])
    return variable, dsn


@contextlib.contextmanager
def reaching(variable: str) -> Iterator[None]:
    """A failure to reach PostgreSQL inside as one ``ConfigError`` line that names the
    variable and the failure's kind: the driver's own message may quote the DSN."""
    try:
        yield
    except Exception as exc:
        raise ConfigError(
            [f"storage: PostgreSQL at {variable} did not answer ({type(exc).__name__})"]
        ) from None


@contextlib.asynccontextmanager
async def open_storage(
    paths: Paths,
    config: Config,
    environ: Mapping[str, str],
    *,
    clock: Callable[[], float] = time.time,
    serves: Collection[str] | None = None,
) -> AsyncIterator[Storage]:
    """Open every store ``config.storage`` names; ``ConfigError`` when PostgreSQL cannot be
    reached (one line, without the connection string). ``serves``: the platforms this
    process runs adapters for; on PostgreSQL its ledger takes over only their orphans (None:
    every platform's): a ``mnemo run`` replica serves the platforms it has adapters for, so
    it never takes a reply it cannot send."""
    if config.storage.backend == "sqlite":
        from memory.archive import Archive  # noqa: PLC0415

        async with await Archive.open(paths.state_db) as archive:
            yield Storage(
                "sqlite",
                archive,
                memory_stores(paths, config),
                PairingStore(paths.home / "pairing.json", clock=clock),
                SkillStore(paths.skills) if config.skills.enabled else None,
            )
        return
    async with contextlib.AsyncExitStack() as opened:
        yield await _postgres(opened, config, environ, clock, serves)


async def _postgres(
    opened: contextlib.AsyncExitStack,
    config: Config,
    environ: Mapping[str, str],
    clock: Callable[[], float],
    serves: Collection[str] | None,
) -> Storage:
    # the drivers are an extra: a SQLite gateway never imports them
    from gateway.ledger_postgres import PgLedger  # noqa: PLC0415
    from memory.archive.postgres import PgArchive  # noqa: PLC0415
    from memory.documents.postgres import PgStores, open_pool  # noqa: PLC0415

    section = config.storage.postgres
    variable, dsn = postgres_dsn(config, environ)
    with reaching(variable):
        archive = await PgArchive.open(dsn, max_size=section.pool_size)
    opened.push_async_callback(archive.close)
    ledger = await PgLedger(
        archive.pool, dead_after_s=section.dead_after_s, platforms=serves
    ).open()
    with reaching(variable):
        pool = await asyncio.to_thread(open_pool, dsn, max_size=section.pool_size)
    opened.callback(pool.close)
    stores = await asyncio.to_thread(PgStores, pool)
    memory = memory_stores(stores.memory(), config)
    skills = SkillStore(DocumentTree(stores.skills())) if config.skills.enabled else None
    return Storage(
        "postgres", archive, memory, PairingStore(stores.pairing(), clock=clock), skills, ledger
    )


# -- the operator's commands --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stores:
    """The synchronous stores ``storage.backend`` names (no I/O until used)."""

    memory: MemoryStores
    skills: SkillStore  # whether or not skills are enabled: the operator reads them anyway
    pairing: PairingStore


def command_stores(
    paths: Paths,
    config: Config,
    environ: Mapping[str, str],
    *,
    clock: Callable[[], float] = time.time,
    migrate: bool = True,
) -> Stores:
    """Curated memory, skills and pairing for a command of one short process (``mnemo
    memory``, ``pairing``, ``skills``, ``doctor``, ``storage check``): the home folder's
    files on SQLite, the PostgreSQL documents (``shared_documents``) on postgres, the same
    ones the gateway of this config uses. ``migrate=False``: the checks, which write
    nothing (they read the schema's state first). ``ConfigError`` names the variable when
    the database cannot be reached."""
    shared = shared_documents(config, environ, migrate=migrate)
    if shared is None:
        return Stores(
            memory_stores(paths, config),
            SkillStore(paths.skills),
            PairingStore(paths.home / "pairing.json", clock=clock),
        )
    return Stores(
        memory_stores(shared.memory(), config),
        SkillStore(DocumentTree(shared.skills())),
        PairingStore(shared.pairing(), clock=clock),
    )


def shared_documents(
    config: Config, environ: Mapping[str, str], *, migrate: bool = True
) -> PgStores | None:
    """For a command of one short process (``command_stores``): the PostgreSQL stores when
    ``storage.backend`` is postgres, opened once and closed at exit (``migrate``: their
    migrations run first); None on SQLite (the home folder's files). ``ConfigError`` names
    the variable when the database cannot be reached."""
    if config.storage.backend != "postgres":
        return None
    return _documents(*postgres_dsn(config, environ), migrate)


@functools.cache
def _documents(variable: str, dsn: str, migrate: bool) -> PgStores:
    import psycopg  # noqa: PLC0415

    from memory.documents.postgres import PgStores, open_pool  # noqa: PLC0415

    with reaching(variable):
        psycopg.connect(dsn, connect_timeout=5).close()  # a refusal fails at once, not in 5 s
        pool = open_pool(dsn, max_size=2, timeout_s=5)
    atexit.register(pool.close)
    return PgStores(pool, run_migrations=migrate)


@contextlib.asynccontextmanager
async def open_archive(
    paths: Paths, config: Config, environ: Mapping[str, str], *, migrate: bool = True
) -> AsyncIterator[ArchiveStore]:
    """The archive alone, on the configured backend (``mnemo sessions``). ``migrate=False``
    (the checks, which must not write): on PostgreSQL the schema is left as it is and the
    pool connects on first use, so the caller reads ``schemas`` first, inside ``reaching``;
    SQLite's ``state.db`` is migrated on open whatever it says, as every command does."""
    if config.storage.backend == "sqlite":
        from memory.archive import Archive  # noqa: PLC0415

        async with await Archive.open(paths.state_db) as archive:
            yield archive
        return
    from memory.archive.postgres import PgArchive  # noqa: PLC0415

    variable, dsn = postgres_dsn(config, environ)
    with reaching(variable):
        if migrate:
            pg = await PgArchive.open(dsn, max_size=2)
        else:
            import asyncpg  # noqa: PLC0415

            pg = PgArchive(await asyncpg.create_pool(dsn, min_size=0, max_size=2))
    async with pg:
        yield pg
