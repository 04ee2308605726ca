"""Wiring: build the long-lived objects of a gateway from one ``Config``."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping

from adapters.base import Adapter
from agent_core.agent import Agent, AgentSettings
from agent_core.compress import CompressionSettings
from agent_core.models import Model
from agent_core.models.scripted import ScriptedModel, echo
from agent_core.recall import Recall
from gateway.auth import Access, Auth, PairingStore
from gateway.config import Config, ConfigError, Paths, PlatformConfig, memory_stores
from gateway.coordination import Coordinator
from gateway.ledger import DeliveryLedger
from gateway.limits import Limits
from gateway.logs import redact
from gateway.metrics import Metrics
from gateway.platforms import PLATFORMS
from gateway.provider import recall_settings
from gateway.service import Gateway
from gateway.settings import GatewaySettings, PlatformPolicy
from gateway.storage import Storage
from memory.archive import ArchiveStore
from memory.providers import Provider
from memory.skills import SkillStore

__all__ = [
    "access",
    "agent_settings",
    "build_agent",
    "build_gateway",
    "build_model",
    "close_model",
    "gateway_settings",
    "memory_stores",
]

log = logging.getLogger(__name__)


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
    sections = _platform_sections(config)
    return Access(
        allowed_users={name: frozenset(p.allowed_users) for name, p in sections.items()},
        allowed_chats={name: frozenset(p.allowed_chats) for name, p in sections.items()},
        admins=frozenset(config.gateway.admins),
    )


def gateway_settings(config: Config) -> GatewaySettings:
    section = config.gateway
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
            for name, p in _platform_sections(config).items()
        },
    )


def _platform_sections(config: Config) -> dict[str, PlatformConfig]:
    """Each platform's ``platforms.<name>`` section, in ``PLATFORMS`` order."""
    return {name: getattr(config.platforms, name) for name in PLATFORMS}


def build_model(
    config: Config, *, dry_run: bool = False, environ: Mapping[str, str] | None = None
) -> Model:
    """The model ``config.model`` names, or with ``dry_run`` an echo model that needs no
    endpoint. ``ConfigError`` when the endpoint needs an API key ``environ`` (default: the
    process environment) does not hold; the model SDK is imported only here."""
    if dry_run:
        return ScriptedModel(respond=echo, name="dry-run")
    env = os.environ if environ is None else environ
    key = env.get(config.model.api_key_env)
    if not key and config.model.base_url is None:
        raise ConfigError(
            [
                f"{config.model.api_key_env} is not set (needed to reach {config.model.name});"
                " set it, point model.base_url at a local server, or try `mnemo chat --dry-run`"
            ]
        )
    from agent_core.models.openai import OpenAIModel  # noqa: PLC0415 - the SDK only when used

    return OpenAIModel(
        name=config.model.name,
        base_url=config.model.base_url,
        api_key=key,
        timeout_s=config.model.timeout_s,
        max_retries=config.model.max_retries,
    )


async def close_model(model: Model) -> None:
    """Close what ``build_model`` made (its HTTP client), at the very end: a failure is a
    warning, as nothing is left to use the model."""
    close = getattr(model, "close", None)
    if close is None:
        return
    try:
        await close()
    except Exception as exc:
        log.warning("model: %s while closing: %s", type(exc).__name__, redact(str(exc)))


def build_agent(
    *,
    paths: Paths,
    config: Config,
    archive: ArchiveStore,
    model: Model,
    recall: Recall | None = None,
    storage: Storage | None = None,
) -> Agent:
    """The agent; its memory and skills from ``storage`` when given (``mnemo run``), else
    from the home folder."""
    if storage is not None:
        stores, skills = storage.stores, storage.skills
    else:
        stores = memory_stores(paths, config)
        # one store per process: it caches scanner verdicts by content
        skills = SkillStore(paths.skills) if config.skills.enabled else None
    return Agent(
        model=model,
        archive=archive,
        stores=stores,
        home=paths.home,
        settings=agent_settings(config),
        skills=skills,
        recall=recall,
    )


def build_gateway(
    *,
    paths: Paths,
    config: Config,
    model: Model,
    adapters: Mapping[str, Adapter],
    archive: ArchiveStore | None = None,
    storage: Storage | None = None,
    clock: Callable[[], float] = time.time,
    rules: Access | None = None,
    settings: GatewaySettings | None = None,
    provider: Provider | None = None,
    ledger: DeliveryLedger | None = None,
    coordinator: Coordinator | None = None,
) -> Gateway:
    """The whole gateway from one config: what `mnemo run` starts and what tests drive
    (``clock``, unix time: pairing codes, what strangers are told, budgets). Its state is
    ``storage`` (``gateway.storage.open_storage``: the archive, the ledger, memory, skills,
    pairing on either backend), or ``archive`` with the rest in the home folder. ``rules``
    and ``settings`` replace what the config says (``mnemo chat`` admits its console person
    and always tells of saved memory); ``provider`` is the memory provider beside the
    built-in memory, its calls counted in the gateway's metrics; ``ledger`` one shared by
    replicas (default: the storage's, else the archive's); ``coordinator`` the backend
    shared with other replicas (``gateway.coordination.open_coordinator``; default: this
    process alone), its waits, lost leases and errors counted there too."""
    if storage is not None:
        archive, ledger = storage.archive, ledger or storage.ledger
    if archive is None:
        raise TypeError("build_gateway needs an archive or a storage")
    metrics = Metrics(platforms=adapters)  # with the process_* series (memory, fds)
    recall = (
        None
        if provider is None
        else Recall(provider, recall_settings(config), observe=metrics.provider_call)
    )
    agent = build_agent(
        paths=paths, config=config, archive=archive, model=model, recall=recall, storage=storage
    )
    pairing = (
        storage.pairing
        if storage is not None
        else PairingStore(paths.home / "pairing.json", clock=clock)
    )
    auth = Auth(rules or access(config), pairing)
    return Gateway(
        agent=agent,
        auth=auth,
        adapters=adapters,
        settings=settings or gateway_settings(config),
        metrics=metrics,
        clock=clock,
        ledger=ledger,
        coordinator=coordinator,
        storage_backend="sqlite" if storage is None else storage.backend,
    )
