"""The chat platforms ``mnemo run`` can start, one entry each, by config section name.

An entry says how to build the platform's adapter from its ``platforms.<name>`` section, its
bot token and the environment (``adapter``), what must hold between the section and the
environment before it can start (``check``: one line per problem, naming variables but never
their values; ``mnemo run`` refuses to start on any, ``mnemo config check`` prints them), and
how ``mnemo doctor`` checks that token without disturbing a running gateway (``probe``: who
the token belongs to). ``mnemo run``
(``gateway.cli.run``), ``mnemo doctor`` and the wiring of allowlists and group policies
(``gateway.wiring``) all read ``PLATFORMS``, so a new platform is one entry here beside its
config section (``gateway.config.schema``) and its package under ``adapters/``.

The platform libraries are imported inside the functions that use them: reading the table
costs nothing, and ``mnemo --help`` never loads them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from gateway.config import DiscordConfig, TelegramConfig

if TYPE_CHECKING:
    from adapters.base import Adapter

__all__ = ["PLATFORMS", "Platform"]

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Platform(Generic[S]):
    adapter: Callable[[S, str, Mapping[str, str]], Adapter]
    """(section, token, environment) -> the adapter ``mnemo run`` starts."""
    probe: Callable[[S, str, float], Awaitable[str]]
    """(section, token, timeout in seconds) -> who the token belongs to; raises
    ``adapters.base.PlatformError`` (``Forbidden`` for a token refused)."""
    check: Callable[[S, Mapping[str, str]], list[str]] = field(default=lambda s, e: [])
    """(section, environment) -> what keeps the section from starting, one line each."""


def _check_telegram(section: TelegramConfig, environ: Mapping[str, str]) -> list[str]:
    if section.mode != "webhook":
        return []
    problems = []
    if not section.webhook_url:
        problems.append(
            "platforms.telegram.mode is webhook but platforms.telegram.webhook_url is empty"
            " (the public HTTPS URL Telegram posts to; or use mode: polling)"
        )
    from adapters.telegram import valid_secret

    variable = section.webhook_secret_env
    if not environ.get(variable):
        problems.append(
            f"platforms.telegram.mode is webhook but {variable} is not set (the secret token"
            " Telegram sends with every update, checked on every post: 1-256 characters of"
            " A-Z, a-z, 0-9, _ and -; or use mode: polling)"
        )
    elif not valid_secret(environ[variable]):
        problems.append(
            f"{variable} is not a webhook secret Telegram accepts"
            " (1-256 characters of A-Z, a-z, 0-9, _ and -)"
        )
    return problems


def _telegram(section: TelegramConfig, token: str, environ: Mapping[str, str]) -> Adapter:
    from adapters.telegram import TelegramAdapter

    return TelegramAdapter(
        token,
        base_url=section.base_url,
        base_file_url=section.base_file_url,
        mode=section.mode,
        webhook_url=section.webhook_url,
        webhook_listen=section.webhook_listen,
        webhook_port=section.webhook_port,
        webhook_max_connections=section.webhook_max_connections,
        webhook_secret=environ.get(section.webhook_secret_env) or None,
        # ``check`` (below) refuses webhook mode without a valid secret before this runs
    )


async def _probe_telegram(section: TelegramConfig, token: str, timeout_s: float) -> str:
    from adapters.telegram import probe

    return await probe(token, base_url=section.base_url, timeout=timeout_s)


def _discord(section: DiscordConfig, token: str, environ: Mapping[str, str]) -> Adapter:
    from adapters.discord import DiscordAdapter

    return DiscordAdapter(
        token,
        api_base=section.api_base,
        gateway_url=section.gateway_url,
        guild_ready_timeout=section.ready_wait_s,
        shard_count=section.shard_count,
        shard_ids=section.shard_ids,
    )


async def _probe_discord(section: DiscordConfig, token: str, timeout_s: float) -> str:
    from adapters.discord import probe

    return await probe(token, api_base=section.api_base, timeout=timeout_s)


PLATFORMS: dict[str, Platform[Any]] = {
    "telegram": Platform(adapter=_telegram, probe=_probe_telegram, check=_check_telegram),
    "discord": Platform(adapter=_discord, probe=_probe_discord),
}
