"""The configuration: the YAML schema, its checks, and the commented template ``mnemo init``
writes.
"""

from __future__ import annotations

from gateway.config.doc import commented_config
from gateway.config.schema import (
    Config,
    ConfigError,
    DiscordConfig,
    MemoryConfig,
    Paths,
    TelegramConfig,
    load_config,
    memory_stores,
    resolve_paths,
)

__all__ = [
    "Config",
    "ConfigError",
    "DiscordConfig",
    "MemoryConfig",
    "Paths",
    "TelegramConfig",
    "commented_config",
    "load_config",
    "memory_stores",
    "resolve_paths",
]
