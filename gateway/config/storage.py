"""The settings of several replicas (README "Several replicas"). ``storage:``: where state
lives — ``sqlite`` (the default) keeps everything in the home folder, for one ``mnemo run``;
``postgres`` keeps the archive, the delivery ledger, pairing, curated memory and skills in
one PostgreSQL database that the replicas share. ``coordination:``: how they agree (leases,
claims, flood waits) — in this process, or through Redis."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gateway.config.checks import EnvName, Section

__all__ = ["CoordinationConfig", "Namespace", "PostgresConfig", "StorageConfig"]


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


Namespace = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
"""A key prefix: letters, digits and ``_ . : -``."""


class CoordinationConfig(Section):
    backend: Literal["local", "redis"] = "local"
    """Where replicas agree on who runs a chat's turn, which replica answers an update, flood
    waits and limits: local (this process alone, the default) or redis (several `mnemo run`
    replicas serving the same bots)."""
    redis_url_env: EnvName = "MNEMO_REDIS_URL"
    """Environment variable holding the Redis URL (redis://[:password@]host:port/db), read
    with backend redis; never written in this file, never logged."""
    namespace: Namespace = "mnemo:"
    """Prefix of every Redis key: give each bot that shares one Redis its own."""
    lease_ttl_s: float = Field(default=30.0, ge=1, le=600)
    """Seconds a chat stays held by a replica that died mid-turn before another continues
    it (a live replica renews its lease every third of this)."""
