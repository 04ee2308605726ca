"""Documents in PostgreSQL (psycopg 3, sync, pooled): the stores every replica shares.

``PgStores(pool)`` brings the schema up to date (``memory.documents.schema``) and hands out
``PgDocuments`` (one folder: ``documents(kind, folder)``) and ``PgFolders`` (every folder of
a kind: ``folders("memory")``). The stores take them as they take a folder::

    pg = PgStores(open_pool(conninfo))
    MemoryStores(pg.memory(), limits=…, scope=…, write_approval=…)
    PairingStore(pg.pairing(), clock=…)
    SkillStore(DocumentTree(pg.skills()))
 A document is one row of ``store_documents``; its version
counts its writes, and a write is a compare-and-swap on it (``UPDATE … WHERE version = %s``,
or an ``INSERT … ON CONFLICT DO NOTHING`` for a new one).

``exclusive(name)`` is a transaction holding ``pg_advisory_xact_lock`` on the document's
key: a row lock that exists before the row does (the first write of a person's memory needs
it too). Every read and write the thread makes inside the section runs on that transaction,
and a nested section is a savepoint of it, so approving a staged write (``PENDING.json``,
then ``MEMORY.md``) commits both or neither; a section commits when the outermost ends and
rolls back what it wrote if it raises (a nested one back to its savepoint, so the outer one
can still record why). Outside a section each call takes a pooled connection for one
statement.

What "edited by hand" means here: every store write records the SHA-256 of the text it wrote
(``digest``). A row whose text no longer has that digest was changed by something other than
a store — ``psql``, a script, a restore of half a table — and reads as ``foreign``; curated
memory treats that as drift (backed up, guarded changes refused until ``mnemo memory
repair``). A write by another replica goes through a store, records its digest, and is never
drift: the section (or, without one, the compare-and-swap) already serialises it.

``backup`` keeps copies in ``store_backups`` on a connection of its own, opened outside the
pool (backups are rare, and a pool whose connections all hold sections must not make one
wait), so a copy survives the refusal that rolls the caller's section back. ``set_aside``
moves an unreadable document there and deletes it, inside the caller's section. Nothing here
logs a DSN or a document's text.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterator

import psycopg
from psycopg import Connection
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool

from memory.documents.base import Conflict, Document, DocumentsError, Version
from memory.documents.schema import migrate

__all__ = ["PgDocuments", "PgFolders", "PgStores", "open_pool"]

log = logging.getLogger(__name__)
Pool = ConnectionPool[Connection[TupleRow]]


def open_pool(
    conninfo: str, *, max_size: int = 8, name: str = "mnemo-stores", timeout_s: float = 10.0
) -> Pool:
    """A pool for ``PgStores``, open and checked within ``timeout_s`` (else
    ``psycopg_pool.PoolTimeout``, the pool closed); the conninfo is never logged."""
    pool: Pool = ConnectionPool(conninfo, min_size=1, max_size=max_size, name=name, open=True)
    try:
        pool.wait(timeout=timeout_s)
    except BaseException:
        pool.close()
        raise
    return pool


class PgStores:
    """One pool, the schema, and the sections each thread holds."""

    def __init__(self, pool: Pool, *, run_migrations: bool = True) -> None:
        self.pool = pool
        self._local = threading.local()
        if run_migrations:
            with pool.connection() as conn:
                migrate(conn)

    def documents(self, kind: str, folder: str = "") -> PgDocuments:
        return PgDocuments(self, kind, folder)

    def folders(self, kind: str) -> PgFolders:
        return PgFolders(self, kind)

    def memory(self) -> PgFolders:
        """Curated memory: a folder per person (``MemoryStores``)."""
        return self.folders("memory")

    def pairing(self) -> PgDocuments:
        """``pairing.json`` (``PairingStore``)."""
        return self.documents("pairing")

    def skills(self) -> PgDocuments:
        """The skills tree (``SkillStore(DocumentTree(…))``)."""
        return self.documents("skills")

    def close(self) -> None:
        self.pool.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection[TupleRow]]:
        """The thread's section connection, or a pooled one for the duration."""
        held: Connection[TupleRow] | None = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self.pool.connection() as conn:
            yield conn

    @contextlib.contextmanager
    def section(self, key: str) -> Iterator[None]:
        lock = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        held: Connection[TupleRow] | None = getattr(self._local, "conn", None)
        if held is not None:  # nested: a savepoint of the transaction, one more lock
            with held.transaction():
                held.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
                yield
            return
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None


class PgDocuments:
    """The documents of one folder (``kind``/``folder``) in ``store_documents``."""

    def __init__(self, stores: PgStores, kind: str, folder: str) -> None:
        self.stores = stores
        self.kind = kind
        self.folder = folder

    @property
    def where(self) -> str:
        return f"postgres:{self.kind}/{self.folder}" if self.folder else f"postgres:{self.kind}"

    def location(self, name: str) -> str:
        return f"{self.where}/{name}"

    def read(self, name: str) -> Document:
        with self.stores.connection() as conn:
            row = conn.execute(
                "SELECT body, digest, version FROM store_documents"
                " WHERE kind = %s AND folder = %s AND name = %s",
                (self.kind, self.folder, name),
            ).fetchone()
        if row is None:
            return Document(None, None)
        raw = str(row[0]).encode("utf-8")
        foreign = bytes(row[1]) != hashlib.sha256(raw).digest()
        return Document(raw, int(row[2]), foreign)

    def version(self, name: str) -> Version:
        with self.stores.connection() as conn:
            row = conn.execute(
                "SELECT version FROM store_documents WHERE kind = %s AND folder = %s AND name = %s",
                (self.kind, self.folder, name),
            ).fetchone()
        return None if row is None else int(row[0])

    def write(self, name: str, data: bytes, *, expected: Version) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise DocumentsError(f"{self.location(name)}: only UTF-8 text is stored") from None
        if "\x00" in text:
            raise DocumentsError(f"{self.location(name)}: text with NUL cannot be stored")
        digest = hashlib.sha256(data).digest()
        with self.stores.connection() as conn:
            if expected is None:
                cursor = conn.execute(
                    "INSERT INTO store_documents (kind, folder, name, body, digest, version)"
                    " VALUES (%s, %s, %s, %s, %s, 1) ON CONFLICT DO NOTHING",
                    (self.kind, self.folder, name, text, digest),
                )
            else:
                cursor = conn.execute(
                    "UPDATE store_documents SET body = %s, digest = %s, version = version + 1,"
                    " updated_at = now() WHERE kind = %s AND folder = %s AND name = %s"
                    " AND version = %s",
                    (text, digest, self.kind, self.folder, name, expected),
                )
            if cursor.rowcount != 1:
                raise Conflict(self.location(name))

    def delete(self, name: str, *, expected: Version) -> None:
        if expected is None:  # "delete what is not there": only true if nothing is
            if self.version(name) is not None:
                raise Conflict(self.location(name))
            return
        with self.stores.connection() as conn:
            cursor = conn.execute(
                "DELETE FROM store_documents"
                " WHERE kind = %s AND folder = %s AND name = %s AND version = %s",
                (self.kind, self.folder, name, expected),
            )
            if cursor.rowcount != 1:
                raise Conflict(self.location(name))

    def names(self) -> list[str]:
        with self.stores.connection() as conn:
            rows = conn.execute(
                "SELECT name FROM store_documents WHERE kind = %s AND folder = %s",
                (self.kind, self.folder),
            ).fetchall()
        return sorted(str(row[0]) for row in rows)  # in Python: as the files sort, any collation

    def exclusive(self, name: str) -> contextlib.AbstractContextManager[None]:
        return self.stores.section(f"{self.kind}\x1f{self.folder}\x1f{name}")

    def backup(self, name: str, raw: bytes, *, now: float) -> str:
        """A row of ``store_backups``, on a connection of its own (it outlives a rollback)."""
        with _own_connection(self.stores.pool) as conn:
            row = conn.execute(
                "INSERT INTO store_backups (kind, folder, name, body, digest, reason, taken_at)"
                " VALUES (%s, %s, %s, %s, %s, 'refused to overwrite', %s)"
                " ON CONFLICT (kind, folder, name, digest)"
                " DO UPDATE SET taken_at = store_backups.taken_at RETURNING id",
                (self.kind, self.folder, name, raw, hashlib.sha256(raw).digest(), now),
            ).fetchone()
        assert row is not None  # RETURNING always gives the row
        return f"{self.location(name)} (store_backups id {int(row[0])})"

    def set_aside(self, name: str, problem: object, *, what: str, now: float) -> None:
        """Into ``store_backups`` and out of the way; inside the caller's section."""
        with self.stores.connection() as conn:
            row = conn.execute(
                "WITH gone AS (DELETE FROM store_documents WHERE "
                "kind = %s AND folder = %s AND name = %s RETURNING body) INSERT INTO store_backups"
                " (kind, folder, name, body, digest, reason, taken_at)"
                " SELECT %s, %s, %s, convert_to(body, 'UTF8'),"
                " sha256(convert_to(body, 'UTF8')), %s, %s FROM gone"
                " ON CONFLICT (kind, folder, name, digest) DO NOTHING RETURNING id",
                (self.kind, self.folder, name, self.kind, self.folder, name, str(problem), now),
            ).fetchone()
        kept = f"store_backups id {int(row[0])}" if row is not None else "an identical backup"
        log.warning(
            "%s in %s were unreadable (%s); moved to %s", what, self.location(name), problem, kept
        )


def _own_connection(pool: Pool) -> Connection[TupleRow]:
    """A new connection like the pool's, outside its size limit (for rare, short work)."""
    conninfo = pool.conninfo() if callable(pool.conninfo) else pool.conninfo
    kwargs = pool.kwargs() if callable(pool.kwargs) else pool.kwargs
    return psycopg.connect(conninfo, **(kwargs or {}))


class PgFolders:
    """Every folder of one kind (``memory``: one per person)."""

    def __init__(self, stores: PgStores, kind: str) -> None:
        self.stores = stores
        self.kind = kind

    @property
    def where(self) -> str:
        return f"postgres:{self.kind}"

    def folder(self, name: str) -> PgDocuments:
        return PgDocuments(self.stores, self.kind, name)

    def names(self) -> list[str]:
        with self.stores.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT folder FROM store_documents WHERE kind = %s",
                (self.kind,),
            ).fetchall()
        return sorted(str(row[0]) for row in rows)
