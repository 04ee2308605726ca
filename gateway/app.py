"""Wiring: build the long-lived objects of a gateway from one ``Config``."""

from __future__ import annotations

from gateway.config import Config, Paths
from memory import MemoryLimits, MemoryStores

__all__ = ["memory_stores"]


def memory_stores(paths: Paths, config: Config) -> MemoryStores:
    mem = config.memory
    return MemoryStores(
        paths.memories,
        limits=MemoryLimits(memory=mem.memory_char_limit, user=mem.user_char_limit),
        scope=mem.scope,
        write_approval=mem.write_approval,
    )
