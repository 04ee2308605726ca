"""The ``storage:`` section: where state lives. ``sqlite`` (the default) keeps everything in
the home folder, for one ``mnemo run``; ``postgres`` keeps the archive, the delivery ledger,
pairing, curated memory and skills in one PostgreSQL database that several replicas share
(issue 16; see README "Several replicas")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gateway.config.checks import EnvName, Section

__all__ = ["PostgresConfig", "StorageConfig"]


class PostgresConfig(Section):
    dsn_env: EnvName = "MNEMO_POSTGRES_DSN"
    """Environment variable holding the connection string (postgresql://user:pass@host/db):
    it may carry a password, so it never goes in this file."""
    pool_size: int = Field(default=10, ge=1, le=200)
    """Connections this replica keeps open at most (per pool)."""
    dead_after_s: float = Field(default=30.0, ge=3, le=3600)
    """A replica silent this long is gone: the others take over its unanswered updates and
    unsent replies."""


class StorageConfig(Section):
    backend: Literal["sqlite", "postgres"] = "sqlite"
    """sqlite: state.db and files in the home folder (one replica). postgres: one shared
    database, for several replicas."""
    postgres: PostgresConfig = PostgresConfig()
