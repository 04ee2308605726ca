"""The memory provider ``memory.provider`` names, opened for one process.

``open_provider`` is an async context manager: it builds the provider (``none`` gives None),
starts what it runs in the background (the local provider's indexer) and closes it on the
way out. What a provider needs that is not in the config comes from here: the archive and
the model (the local provider's card writer uses the review model), and the API keys, read
from the environment variables the config names. A provider that cannot start (its extra is
not installed, its key is missing) raises ``ConfigError`` with one line saying how to fix it,
so ``mnemo run`` stops before it connects to any platform.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agent_core.card import ModelCardWriter
from agent_core.models import Model
from agent_core.recall import RecallSettings
from gateway.config import Config, ConfigError
from memory.archive import Archive, ArchiveStore
from memory.providers import Provider, ProviderError, Subject

__all__ = ["PROVIDERS", "health", "open_provider", "recall_settings"]

PROVIDERS = ("none", "local", "honcho", "mem0")


async def health(provider: Provider) -> dict[str, Any]:
    """How a provider is, for an operator (``mnemo provider status``, ``mnemo doctor``,
    ``/memory provider``): its own ``status()`` where it has one (the local provider), else
    whether its session ``context`` answers for a probe subject that holds nothing, and in
    how long. What the call raises is raised; callers bound it with their own timeout."""
    status = getattr(provider, "status", None)
    if status is not None:
        report: dict[str, Any] = await status()
        return report
    started = time.monotonic()
    await provider.context(Subject("mnemo-health-probe"))
    seconds = round(time.monotonic() - started, 3)
    return {"provider": provider.name, "reachable": True, "seconds": seconds}


def recall_settings(config: Config) -> RecallSettings:
    options = config.memory.provider_options
    return RecallSettings(
        context_chars=options.context_chars,
        prefetch_chars=options.prefetch_chars,
        prefetch_timeout_ms=options.prefetch_timeout_ms,
        timeout_s=options.timeout_s,
    )


@contextlib.asynccontextmanager
async def open_provider(
    config: Config,
    *,
    archive: ArchiveStore,
    model: Model | None,
    environ: Mapping[str, str] | None = None,
    index: bool = True,
    threads: int = 1,
) -> AsyncIterator[Provider | None]:
    """The configured provider, started (``index``: the local indexer runs in the
    background), closed on exit; None for ``none``. Without a ``model`` (the operator's
    commands) person cards are read but not rewritten. ``threads``: cores the local
    provider's model may use (1 beside a running gateway; all for `provider reindex`)."""
    kind = config.memory.provider
    if kind == "none":
        yield None
        return
    try:
        provider = _build(config, archive=archive, model=model, environ=environ, threads=threads)
    except (ValueError, ProviderError) as exc:  # e.g. a workspace name the service refuses
        raise ConfigError([f"memory.provider: {kind}: {exc}"]) from None
    try:
        start = getattr(provider, "start", None)
        if start is not None:
            try:
                await start(index=index)
            except ProviderError as exc:
                raise ConfigError([f"memory.provider: {kind}: {exc}"]) from None
        yield provider
    finally:
        await provider.aclose()


def _build(
    config: Config,
    *,
    archive: ArchiveStore,
    model: Model | None,
    environ: Mapping[str, str] | None,
    threads: int = 1,
) -> Provider:
    kind = config.memory.provider
    options = config.memory.provider_options
    env = os.environ if environ is None else environ
    if kind == "local":
        if not isinstance(archive, Archive):  # preflight says so first; this is the guard
            raise ValueError("the local provider keeps its vectors in state.db: storage sqlite")
        from memory.providers.local import (  # noqa: PLC0415 - numpy & co. only when chosen
            Embedder,
            LocalProvider,
            LocalSettings,
        )

        review = config.memory.review.model
        return LocalProvider(
            archive,
            embedder=Embedder(threads=threads),
            writer=None if model is None else ModelCardWriter(model, review),
            settings=LocalSettings(
                card_chars=options.card_chars, prefetch_results=options.prefetch_results
            ),
        )
    if kind == "honcho":
        from memory.providers.honcho import HonchoProvider  # noqa: PLC0415

        honcho = options.honcho
        key = env.get(honcho.api_key_env) or None
        if key is None and honcho.base_url is None:
            raise ConfigError(
                [f"memory.provider: honcho: {honcho.api_key_env} is not set (needed for"
                 " Honcho's service; or point memory.provider_options.honcho.base_url at"
                 " your server)"]
            )  # fmt: skip
        return HonchoProvider(
            base_url=honcho.base_url,
            api_key=key,
            workspace=honcho.workspace,
            timeout_s=options.timeout_s,
        )
    if kind == "mem0":
        from memory.providers.mem0 import Mem0Provider  # noqa: PLC0415

        mem0 = options.mem0
        key = env.get(mem0.api_key_env) or None
        if key is None and mem0.base_url is None:
            raise ConfigError(
                [f"memory.provider: mem0: {mem0.api_key_env} is not set (needed for Mem0's"
                 " platform; or point memory.provider_options.mem0.base_url at your server)"]
            )  # fmt: skip
        return Mem0Provider(base_url=mem0.base_url, api_key=key, timeout_s=options.timeout_s)
    raise ConfigError([f"memory.provider: unknown provider {kind!r}"])  # pragma: no cover
