"""Wiring: build the long-lived objects of a gateway from one ``Config``."""

from __future__ import annotations

from agent_core.agent import AgentSettings
from agent_core.compress import CompressionSettings
from gateway.config import Config, Paths
from memory import MemoryLimits, MemoryStores

__all__ = ["agent_settings", "memory_stores"]


def memory_stores(paths: Paths, config: Config) -> MemoryStores:
    mem = config.memory
    return MemoryStores(
        paths.memories,
        limits=MemoryLimits(memory=mem.memory_char_limit, user=mem.user_char_limit),
        scope=mem.scope,
        write_approval=mem.write_approval,
    )


def agent_settings(config: Config) -> AgentSettings:
    review = config.memory.review
    squeeze = config.compression
    return AgentSettings(
        max_tool_iterations=config.agent.max_tool_iterations,
        review_enabled=review.enabled,
        review_interval_turns=review.interval_turns,
        review_model=review.model,
        compression=CompressionSettings(
            context_window=config.model.context_window,
            threshold=squeeze.threshold,
            model=squeeze.model,
        )
        if squeeze.enabled
        else None,
    )
