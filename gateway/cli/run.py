"""``mnemo run``: the gateway (``mnemo pairing`` lives in ``gateway.cli.pairing``).

``mnemo run`` starts every enabled platform of ``platforms.*`` plus the agent, and runs until
SIGTERM or SIGINT; then it drains (``gateway.drain_timeout_s``) and exits 0. Before anything
connects, every enabled platform's token must be in the environment: a missing one is a
single line naming the variable (exit 2). Tokens and the API key are redacted from every log
line (``gateway.logs``).

Adapters are made from one table keyed by the YAML section name (``PLATFORMS``), so a new
platform is one factory and one config section.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from gateway import logs
from gateway.cli.chat import build_model
from gateway.cli.memory import UsageError
from gateway.config import (
    Config,
    ConfigError,
    DiscordConfig,
    Paths,
    TelegramConfig,
    load_config,
)
from gateway.ops_http import parse_listen

if TYPE_CHECKING:
    from adapters.base import Adapter
    from gateway.service import Gateway

__all__ = ["PLATFORMS", "register"]

log = logging.getLogger("mnemo")


def _telegram(section: TelegramConfig, token: str, env: Mapping[str, str]) -> Adapter:
    from adapters.telegram import TelegramAdapter

    return TelegramAdapter(
        token,
        base_url=section.base_url,
        base_file_url=section.base_file_url,
        mode=section.mode,
        webhook_url=section.webhook_url,
        webhook_listen=section.webhook_listen,
        webhook_port=section.webhook_port,
        webhook_secret=env.get(section.webhook_secret_env) or None,
    )


def _discord(section: DiscordConfig, token: str, env: Mapping[str, str]) -> Adapter:
    from adapters.discord import DiscordAdapter

    return DiscordAdapter(
        token,
        api_base=section.api_base,
        gateway_url=section.gateway_url,
        guild_ready_timeout=section.ready_wait_s,
    )


PLATFORMS: dict[str, Callable[[Any, str, Mapping[str, str]], Adapter]] = {
    "telegram": _telegram,
    "discord": _discord,
}


def register(commands: Any) -> None:
    run = commands.add_parser("run", help="run the gateway on every enabled platform")
    run.add_argument("--verbose", action="store_true", help="debug logging")
    run.set_defaults(handler=_run)


def adapters_for(config: Config, environ: Mapping[str, str]) -> dict[str, Adapter]:
    """One adapter per enabled platform; ``UsageError`` names a missing token's variable."""
    made: dict[str, Adapter] = {}
    missing = []
    for name, factory in PLATFORMS.items():
        section = getattr(config.platforms, name)
        if not section.enabled:
            continue
        token = environ.get(section.token_env, "").strip()
        if not token:
            missing.append(f"platforms.{name} is enabled but {section.token_env} is not set")
            continue
        made[name] = factory(section, token, environ)
    if missing:
        raise UsageError("; ".join(missing))
    if not made:
        raise UsageError(
            "no platform is enabled: set platforms.telegram.enabled or platforms.discord.enabled"
            " in config.yaml (or try `mnemo chat` on this terminal)"
        )
    return made


def secrets_of(config: Config, environ: Mapping[str, str]) -> list[str]:
    names = [
        config.model.api_key_env,
        config.platforms.telegram.token_env,
        config.platforms.telegram.webhook_secret_env,
        config.platforms.discord.token_env,
    ]
    return [environ[name] for name in names if environ.get(name)]


def _run(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    environ = dict(os.environ)
    adapters = adapters_for(config, environ)
    if config.ops.http.listen:
        try:
            parse_listen(config.ops.http.listen)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    model = build_model(config, dry_run=False, environ=environ)
    level = logging.DEBUG if args.verbose else getattr(logging, config.ops.log_level.upper())
    logs.install(secrets_of(config, environ), level=level, fmt=config.ops.log_format)
    try:
        return asyncio.run(_serve(paths, config, adapters, model))
    except KeyboardInterrupt:  # a second Ctrl-C during the drain
        return 130


async def _serve(paths: Paths, config: Config, adapters: dict[str, Adapter], model: Any) -> int:
    from gateway.ops_http import OpsServer
    from gateway.wiring import access, build_gateway, gateway_settings
    from memory.archive import Archive

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
    async with await Archive.open(paths.state_db) as archive:
        gateway = build_gateway(
            paths=paths, config=config, archive=archive, model=model, adapters=adapters
        )
        ops = None
        if config.ops.http.listen:
            ops = OpsServer(
                config.ops.http.listen,
                health=gateway.health,
                metrics=gateway.metrics,
                refresh=gateway.refresh_metrics,
            )
        try:
            if ops is not None:  # up first: /healthz says 503 while the platforms connect
                await ops.start()  # it logs its address
            await gateway.start()
        except Exception as exc:
            log.error("could not start: %s", exc)
            await gateway.stop()
            if ops is not None:
                await ops.stop()
            await _close(model)
            print(f"mnemo: error: could not start: {exc}", file=sys.stderr)
            return 1
        log.info("mnemo is running on %s; stop with SIGTERM or Ctrl-C", ", ".join(adapters))
        await stop.wait()
        log.info("stopping: draining running turns (at most %.0fs)", config.gateway.drain_timeout_s)
        await gateway.stop()
        if ops is not None:
            await ops.stop()
        await _close(model)
    log.info("stopped cleanly")
    return 0


async def _close(model: Any) -> None:
    close = getattr(model, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
