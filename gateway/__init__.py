"""Wiring: config, CLI, and (later) auth, commands, sessions, router and outbox."""

from gateway.config import Config, ConfigError, MemoryConfig, Paths, load_config, resolve_paths

__all__ = ["Config", "ConfigError", "MemoryConfig", "Paths", "load_config", "resolve_paths"]
