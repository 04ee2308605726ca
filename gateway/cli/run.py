"""``mnemo run``: the gateway (``mnemo pairing`` lives in ``gateway.cli.pairing``).

``mnemo run`` starts every enabled platform of ``platforms.*`` plus the agent, and runs until
SIGTERM or SIGINT; then it drains (``gateway.drain_timeout_s``) and exits 0. Before anything
connects, every enabled platform's token must be in the environment and what its ``check``
asks must hold (``gateway.platforms``: a Telegram webhook needs its public URL and its
secret): each problem is a single line naming the variable (exit 2). Tokens, the webhook
secret and the API key are redacted from every log line (``gateway.logs``).

``mnemo run --polling`` runs Telegram with long polling for this run, whatever
``platforms.telegram.mode`` says (a webhook replica taken out to debug it, say): the adapter
calls deleteWebhook before its first getUpdates, since Telegram refuses getUpdates with 409
Conflict while a webhook is set. That removes the webhook for every replica: the others
receive nothing until one of them starts again in webhook mode (setWebhook).

With ``coordination.backend: redis`` (several replicas), the URL variable must be set (exit 2
otherwise) and Redis must answer before anything connects: if it does not, one line says so
(``mnemo: error: coordination.backend is redis but the Redis at MNEMO_REDIS_URL did not
answer (ping: ConnectionError)``, never the URL) and the exit status is 1.

Adapters are made from one table keyed by the YAML section name
(``gateway.platforms.PLATFORMS``), so a new platform is one entry there and one config section.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gateway import logs
from gateway.cli.common import UsageError, add_command
from gateway.cli.preflight import check_storage
from gateway.config import (
    Config,
    ConfigError,
    Paths,
    load_config,
    secrets_of,
)
from gateway.ops_http import parse_listen
from gateway.platforms import PLATFORMS

if TYPE_CHECKING:
    from adapters.base import Adapter
    from gateway.service import Gateway

__all__ = ["adapters_for", "forced_polling", "register"]

log = logging.getLogger("mnemo")


def register(commands: Any) -> None:
    run = add_command(commands, "run")
    run.add_argument("--verbose", action="store_true", help="debug logging")
    run.add_argument(
        "--polling",
        action="store_true",
        help="Telegram: poll for this run whatever platforms.telegram.mode says"
        " (deletes the webhook first)",
    )
    run.set_defaults(handler=_run)


def forced_polling(config: Config) -> Config:
    """``config`` with Telegram in polling mode (``mnemo run --polling``)."""
    telegram = config.platforms.telegram.model_copy(update={"mode": "polling"})
    platforms = config.platforms.model_copy(update={"telegram": telegram})
    return config.model_copy(update={"platforms": platforms})


def adapters_for(config: Config, environ: Mapping[str, str]) -> dict[str, Adapter]:
    """One adapter per enabled platform; ``UsageError`` names a missing token's variable and
    every problem the platform's ``check`` finds."""
    made: dict[str, Adapter] = {}
    missing = []
    for name, platform in PLATFORMS.items():
        section = getattr(config.platforms, name)
        if not section.enabled:
            continue
        token = environ.get(section.token_env, "").strip()
        problems = platform.check(section, environ)
        if not token:
            missing.append(f"platforms.{name} is enabled but {section.token_env} is not set")
        missing += problems
        if token and not problems:
            made[name] = platform.adapter(section, token, environ)
    if missing:
        raise UsageError("; ".join(missing))
    if not made:
        switches = " or ".join(f"platforms.{name}.enabled" for name in PLATFORMS)
        raise UsageError(
            f"no platform is enabled: set {switches} in config.yaml"
            " (or try `mnemo chat` on this terminal)"
        )
    return made


def _run(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    environ = dict(os.environ)
    if args.polling:
        config = forced_polling(config)
    adapters = adapters_for(config, environ)
    if config.ops.http.listen:
        try:
            parse_listen(config.ops.http.listen)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    shared = config.coordination
    if shared.backend == "redis" and not environ.get(shared.redis_url_env, "").strip():
        raise UsageError(f"coordination.backend is redis but {shared.redis_url_env} is not set")
    problems = check_storage(config, environ)  # before anything opens: one line, no traceback
    if problems:
        raise UsageError("; ".join(problems))
    from gateway.wiring import build_model

    model = build_model(config, environ=environ)
    level = logging.DEBUG if args.verbose else getattr(logging, config.ops.log_level.upper())
    logs.install(secrets_of(config, environ), level=level, fmt=config.ops.log_format)
    try:
        return asyncio.run(_serve(paths, config, adapters, model, environ))
    except KeyboardInterrupt:  # a second Ctrl-C during the drain
        return 130


async def _serve(
    paths: Paths,
    config: Config,
    adapters: dict[str, Adapter],
    model: Any,
    environ: Mapping[str, str],
) -> int:
    from gateway.coordination import CoordinationUnavailable, open_coordinator
    from gateway.ops_http import OpsServer
    from gateway.provider import open_provider
    from gateway.storage import open_storage
    from gateway.wiring import access, build_gateway, close_model, gateway_settings

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    gateway: Gateway | None = None

    def reload() -> None:
        """SIGHUP: re-read allowlists, admins and group policies; keep everything else."""
        try:
            fresh = load_config(paths)
        except ConfigError as exc:
            log.error("reload refused, keeping the running config: %s", "; ".join(exc.lines))
            return
        if gateway is not None:
            gateway.reload(access(fresh), gateway_settings(fresh))
            log.info("reloaded allowlists, admins and group settings from %s", paths.config_file)

    loop.add_signal_handler(signal.SIGHUP, reload)
    failed: Exception | None = None
    # Each part entered once and left in reverse order, however the block ends: the model,
    # the coordination backend, the storage, the ops endpoint (up first: /healthz says 503
    # while the platforms connect), then the gateway (a start that fails stops what it
    # started).
    async with contextlib.AsyncExitStack() as parts:
        parts.push_async_callback(close_model, model)
        shared = config.coordination
        try:
            coordinator = await open_coordinator(
                shared.backend,
                environ=environ,
                redis_url_env=shared.redis_url_env,
                namespace=shared.namespace,
                lease_ttl_s=shared.lease_ttl_s,
            )
        except CoordinationUnavailable as exc:  # one line, never the URL
            print(f"mnemo: error: {exc}", file=sys.stderr)
            return 1
        parts.push_async_callback(coordinator.aclose)
        if coordinator.backend == "redis":
            log.info(
                "coordinating with other replicas through the Redis at %s (namespace %r)",
                shared.redis_url_env,
                shared.namespace,
            )
        # on a shared ledger, take over only the platforms this replica runs: a reply it
        # cannot send would otherwise sit under its name for as long as it lives
        storage = await parts.enter_async_context(
            open_storage(paths, config, os.environ, serves=set(adapters))
        )
        provider = await parts.enter_async_context(
            open_provider(config, archive=storage.archive, model=model)
        )
        gateway = build_gateway(
            paths=paths,
            config=config,
            storage=storage,
            model=model,
            adapters=adapters,
            provider=provider,
            coordinator=coordinator,
        )
        try:
            if config.ops.http.listen:
                ops = OpsServer(
                    config.ops.http.listen,
                    health=gateway.health,
                    metrics=gateway.metrics,
                    refresh=gateway.refresh_metrics,
                )
                await parts.enter_async_context(ops)  # it logs its address
            await parts.enter_async_context(gateway)
        except Exception as exc:
            log.error("could not start: %s", exc)
            failed = exc
        else:
            log.info("mnemo is running on %s; stop with SIGTERM or Ctrl-C", ", ".join(adapters))
            await stop.wait()
            drain = config.gateway.drain_timeout_s
            log.info("stopping: draining running turns (at most %.0fs)", drain)
    if failed is not None:
        print(f"mnemo: error: could not start: {failed}", file=sys.stderr)
        return 1
    log.info("stopped cleanly")
    return 0
