"""Checks of a loaded config against the environment it will run in, with no I/O.

The loader already rejects what is wrong *inside* the file (unknown keys, types, ranges,
URLs, ids, admin entries: ``gateway.config.checks``); ``check_environment`` finds what is
wrong *between* the file and the world: an enabled platform whose token variable is unset,
no model endpoint, what the platform's own ``check`` finds (``gateway.platforms``: a
webhook without a public URL or without its secret), an ``ops.http.listen`` the endpoint
would refuse (``gateway.ops_http.parse_listen``), the redis coordination backend without
its URL variable (whether Redis answers, ``mnemo run`` finds out before it connects). It
returns one line per problem, naming keys and variable names but never a variable's value,
so its output is safe to print and log.
``mnemo config check`` prints the lines; ``mnemo doctor`` runs the same function before its
live checks.
"""

from __future__ import annotations

from collections.abc import Mapping

from gateway.config import Config
from gateway.ops_http import parse_listen
from gateway.platforms import PLATFORMS

__all__ = ["check_environment", "check_storage", "enabled_platforms"]


def enabled_platforms(config: Config) -> list[str]:
    """Names of the ``platforms.*`` sections with ``enabled: true``, in config order."""
    return [
        name
        for name in type(config.platforms).model_fields
        if getattr(config.platforms, name).enabled
    ]


def check_environment(config: Config, environ: Mapping[str, str]) -> list[str]:
    """Every problem between ``config`` and ``environ``, one line each (empty: all good)."""
    problems: list[str] = []
    platforms = enabled_platforms(config)
    for name in platforms:
        variable = getattr(config.platforms, name).token_env
        if not environ.get(variable, "").strip():
            problems.append(
                f"platforms.{name} is enabled but {variable} is not set"
                f" (the bot token; set it in the environment, never in the file)"
            )
    problems += _model(config, environ)
    problems += check_storage(config, environ)
    for name in platforms:
        problems += PLATFORMS[name].check(getattr(config.platforms, name), environ)
    coordination = config.coordination
    if coordination.backend == "redis" and not environ.get(coordination.redis_url_env, "").strip():
        problems.append(
            f"coordination.backend is redis but {coordination.redis_url_env} is not set"
            " (the Redis URL; set it in the environment, never in the file)"
        )
    if config.ops.http.listen is not None:
        try:
            parse_listen(config.ops.http.listen)
        except ValueError as exc:  # the message names ops.http.listen
            problems.append(str(exc))
    return problems


def check_storage(config: Config, environ: Mapping[str, str]) -> list[str]:
    """With ``storage.backend: postgres``, the connection string must be in the environment
    and look like one (never quoted back: it may carry a password)."""
    if config.storage.backend != "postgres":
        return []
    problems = []
    if config.memory.provider == "local":
        problems.append(
            "memory.provider is local but storage.backend is postgres (the local provider keeps"
            " its vectors in state.db, one replica's file; use honcho or mem0, or none)"
        )
    variable = config.storage.postgres.dsn_env
    dsn = environ.get(variable, "").strip()
    if not dsn:
        problems.append(
            f"storage.backend is postgres but {variable} is not set"
            " (the connection string, e.g. postgresql://mnemo@db-host/mnemo)"
        )
    elif not dsn.startswith(("postgresql://", "postgres://")):
        problems.append(f"{variable} is not a PostgreSQL connection string (postgresql://…)")
    return problems


def _model(config: Config, environ: Mapping[str, str]) -> list[str]:
    model = config.model
    if model.base_url is None:
        if environ.get(model.api_key_env, "").strip():
            return []
        return [
            f"no model endpoint: {model.api_key_env} is not set and model.base_url is empty"
            " (set the key to use OpenAI, or point model.base_url at an OpenAI-compatible"
            " server such as http://127.0.0.1:11434/v1)"
        ]
    return []  # a base_url's form is the loader's to check
