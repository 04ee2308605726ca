"""What only PostgreSQL's documents have (memory/documents/postgres.py, schema.py): migrations
under an advisory lock, a section as one transaction, and rows changed behind a store's back.
Real PostgreSQL, a schema of the test's own; several pools stand for several replicas."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from memory.documents.postgres import PgStores
from memory.documents.schema import MIGRATIONS, SchemaError, migrate

Opener = Callable[[], PgStores]


@pytest.fixture
def postgres_dsn(fresh_postgres_dsn: str) -> str:
    """These tests watch a database's first start and its migrations: a new schema each."""
    return fresh_postgres_dsn


def recorded(stores: PgStores) -> list[str]:
    with stores.pool.connection() as conn:
        return [str(row[0]) for row in conn.execute("SELECT name FROM store_migrations")]


def test_replicas_starting_at_once_migrate_once(pg_stores_factory: Opener) -> None:
    ready = threading.Barrier(3)
    opened: list[PgStores] = []

    def start() -> None:
        ready.wait(10)
        opened.append(pg_stores_factory())

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(opened) == 3
    assert recorded(opened[0]) == [m.name for m in MIGRATIONS]
    with opened[0].pool.connection() as conn:
        assert migrate(conn) == []  # up to date: nothing runs again


def test_a_schema_from_a_newer_mnemo_is_refused(pg_stores_factory: Opener) -> None:
    stores = pg_stores_factory()
    with stores.pool.connection() as conn:
        conn.execute("INSERT INTO store_migrations (name) VALUES ('m999_from_the_future')")
    with pytest.raises(SchemaError, match="m999_from_the_future"):
        pg_stores_factory()


def test_a_section_commits_all_or_nothing_but_a_backup_stays(pg_stores_factory: Opener) -> None:
    docs = pg_stores_factory().documents("test", "p")
    kept: list[str] = []

    def fail_after_both_writes() -> None:
        with docs.exclusive("PENDING.json"):
            docs.write("PENDING.json", b"{}", expected=None)
            with docs.exclusive("MEMORY.md"):
                docs.write("MEMORY.md", b"entry", expected=None)
                kept.append(docs.backup("MEMORY.md", b"what was there", now=1_700_000_000))
            raise RuntimeError("the caller fails after both writes")

    with pytest.raises(RuntimeError):
        fail_after_both_writes()
    other = pg_stores_factory().documents("test", "p")
    assert other.names() == []  # both writes rolled back together
    with other.stores.pool.connection() as conn:
        row = conn.execute("SELECT id, body FROM store_backups").fetchone()
    assert row is not None and bytes(row[1]) == b"what was there"
    assert kept[0].endswith(f"(store_backups id {row[0]})")


def test_a_row_changed_behind_the_stores_back_reads_as_foreign(pg_stores_factory: Opener) -> None:
    mine, theirs = pg_stores_factory(), pg_stores_factory()
    docs = mine.documents("memory", "telegram-1")
    docs.write("MEMORY.md", b"alpha", expected=None)
    other = theirs.documents("memory", "telegram-1")
    other.write("MEMORY.md", b"alpha\n\xc2\xa7\nbeta", expected=other.version("MEMORY.md"))
    assert not docs.read("MEMORY.md").foreign  # another replica's write went through a store
    with theirs.pool.connection() as conn:
        conn.execute("UPDATE store_documents SET body = body || ' (typed in psql)'")
    edited = docs.read("MEMORY.md")
    assert edited.foreign and edited.raw == "alpha\n§\nbeta (typed in psql)".encode()
    docs.write("MEMORY.md", b"alpha", expected=edited.version)
    assert not docs.read("MEMORY.md").foreign  # a store's write stamps it again


def test_text_a_row_cannot_hold_is_refused_not_mangled(pg_stores_factory: Opener) -> None:
    from memory.documents import DocumentsError

    docs = pg_stores_factory().documents("test", "p")
    for data in (b"caf\xe9", b"nul \x00 byte"):
        with pytest.raises(DocumentsError):
            docs.write("x.md", data, expected=None)
    assert docs.names() == []


def test_a_backup_needs_no_second_pooled_connection(postgres_dsn: str) -> None:
    """A refusal's backup inside a section, with the pool's one connection held by it."""
    from psycopg_pool import ConnectionPool

    from memory import MemoryStore, MemoryTurn
    from memory.curated import Refused

    with ConnectionPool(postgres_dsn, min_size=1, max_size=1, timeout=5) as pool:
        stores = PgStores(pool)
        store = MemoryStore(stores.memory().folder("telegram-1"), person="telegram-1")
        assert store.call({"action": "add", "content": "alpha"}, MemoryTurn()).ok
        with pool.connection() as conn:
            conn.execute("UPDATE store_documents SET body = 'alpha\n\n\nby hand'")
        refused = store.call({"action": "remove", "old_text": "alpha"}, MemoryTurn())
        assert isinstance(refused, Refused) and "store_backups id" in (refused.drift_backup or "")
