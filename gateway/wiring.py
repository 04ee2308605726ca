"""Wiring: build the long-lived objects of a gateway from one ``Config``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from adapters.base import Adapter
from agent_core.agent import Agent, AgentSettings
from agent_core.compress import CompressionSettings
from agent_core.models import Model
from gateway.auth import Access, Auth, PairingStore
from gateway.config import Config, Paths, memory_stores
from gateway.limits import Limits
from gateway.metrics import Metrics
from gateway.service import Gateway, GatewaySettings, PlatformPolicy
from memory.archive import Archive
from memory.skills import SkillStore

__all__ = [
    "access",
    "agent_settings",
    "build_agent",
    "build_gateway",
    "gateway_settings",
    "memory_stores",
]


def agent_settings(config: Config) -> AgentSettings:
    review = config.memory.review
    squeeze = config.compression
    return AgentSettings(
        max_tool_iterations=config.agent.max_tool_iterations,
        review_enabled=review.enabled,
        review_interval_turns=review.interval_turns,
        review_model=review.model,
        skill_approval=config.skills.write_approval,
        compression=CompressionSettings(
            context_window=config.model.context_window,
            threshold=squeeze.threshold,
            model=squeeze.model,
        )
        if squeeze.enabled
        else None,
    )


def access(config: Config) -> Access:
    platforms = config.platforms
    return Access(
        allowed_users={
            "telegram": frozenset(platforms.telegram.allowed_users),
            "discord": frozenset(platforms.discord.allowed_users),
        },
        allowed_chats={
            "telegram": frozenset(platforms.telegram.allowed_chats),
            "discord": frozenset(platforms.discord.allowed_chats),
        },
        admins=frozenset(config.gateway.admins),
    )


def gateway_settings(config: Config) -> GatewaySettings:
    section = config.gateway
    platforms = config.platforms
    return GatewaySettings(
        group_sessions_per_user=section.group_sessions_per_user,
        group_scope=config.memory.group_scope,
        max_concurrent_turns=section.max_concurrent_turns,
        max_reply_messages=section.max_reply_messages,
        drain_timeout_s=section.drain_timeout_s,
        idle_session_s=section.idle_session_s,
        notify=config.memory.notify,
        limits=Limits(
            turns_per_hour=section.limits.turns_per_hour,
            tokens_per_day=section.limits.tokens_per_day,
        ),
        platforms={
            name: PlatformPolicy(
                require_mention=p.require_mention,
                free_response_chats=frozenset(p.free_response_chats),
            )
            for name, p in (("telegram", platforms.telegram), ("discord", platforms.discord))
        },
    )


def build_agent(*, paths: Paths, config: Config, archive: Archive, model: Model) -> Agent:
    return Agent(
        model=model,
        archive=archive,
        stores=memory_stores(paths, config),
        home=paths.home,
        settings=agent_settings(config),
        # one store per process: it caches scanner verdicts by content
        skills=SkillStore(paths.skills) if config.skills.enabled else None,
    )


def build_gateway(
    *,
    paths: Paths,
    config: Config,
    archive: Archive,
    model: Model,
    adapters: Mapping[str, Adapter],
    clock: Callable[[], float] = time.time,
    rules: Access | None = None,
    settings: GatewaySettings | None = None,
) -> Gateway:
    """The whole gateway from one config: what `mnemo run` starts and what tests drive
    (``clock``, unix time: pairing codes, what strangers are told, budgets). ``rules`` and
    ``settings`` replace what the config says (``mnemo chat`` admits its console person
    and always tells of saved memory)."""
    agent = build_agent(paths=paths, config=config, archive=archive, model=model)
    pairing = PairingStore(paths.home / "pairing.json", clock=clock)
    auth = Auth(rules or access(config), pairing)
    return Gateway(
        agent=agent,
        auth=auth,
        adapters=adapters,
        settings=settings or gateway_settings(config),
        metrics=Metrics(platforms=adapters),  # with the process_* series (memory, fds)
        clock=clock,
    )
