"""Append-only, named, recorded, transactional migrations of the stores' PostgreSQL tables.

As for the archive (``memory.archive.postgres``), but in a table of their own,
``store_migrations``, so the two never read each other's records: add a ``Migration`` at the
end of ``MIGRATIONS``, never edit or reorder one that shipped. Each runs in one transaction
with the row that records it, under a transaction-level advisory lock, so replicas that start
at once take turns and each migration runs once. A database that records a migration this
code does not know was written by a newer mnemo and is refused.

m001 holds the documents (``store_documents``: one row per document, keyed by kind —
``memory``, ``pairing`` —, folder and name; ``digest`` is the SHA-256 of the text as a store
last wrote it, ``version`` counts the writes) and the copies kept of documents a store
refused to overwrite or could not read (``store_backups``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import LiteralString

import psycopg
from psycopg.rows import TupleRow

from memory.documents.base import DocumentsError

__all__ = ["MIGRATIONS", "Migration", "SchemaError", "migrate"]

log = logging.getLogger(__name__)
LOCK_KEY = 0x6D6E656D6F5F73  # "mnemo_s": not the archive's key, though sharing it would be safe


class SchemaError(DocumentsError):
    """The database holds a schema this code cannot use (a newer mnemo wrote it)."""


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    statements: tuple[LiteralString, ...]


M001_DOCUMENTS = Migration(
    "m001_documents",
    (
        """CREATE TABLE store_documents (
            kind text NOT NULL,
            folder text NOT NULL,
            name text NOT NULL,
            body text NOT NULL,
            digest bytea NOT NULL,
            version bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (kind, folder, name)
        )""",
        """CREATE TABLE store_backups (
            id bigserial PRIMARY KEY,
            kind text NOT NULL,
            folder text NOT NULL,
            name text NOT NULL,
            body bytea NOT NULL,
            digest bytea NOT NULL,
            reason text NOT NULL,
            taken_at double precision NOT NULL,
            UNIQUE (kind, folder, name, digest)
        )""",
    ),
)

MIGRATIONS: tuple[Migration, ...] = (M001_DOCUMENTS,)


def migrate(conn: psycopg.Connection[TupleRow]) -> list[str]:
    """Bring the schema up to date; the names of the migrations this call ran."""
    ran: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS store_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
    known = {m.name for m in MIGRATIONS}
    for migration in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            recorded = {str(row[0]) for row in conn.execute("SELECT name FROM store_migrations")}
            unknown = sorted(recorded - known)
            if unknown:
                raise SchemaError(
                    f"the stores' tables record migrations this mnemo does not know ({unknown}):"
                    " a newer mnemo wrote them; upgrade this one"
                )
            if migration.name in recorded:
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute("INSERT INTO store_migrations (name) VALUES (%s)", (migration.name,))
            ran.append(migration.name)
            log.info("stores: applied migration %s", migration.name)
    return ran
