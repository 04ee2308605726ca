"""``mnemo doctor``: the config check plus live checks, as a table (or ``--json``).

Rows, in this order (each check is one or more rows ``check | result | detail``)::

    config    gateway.cli.preflight.check_environment (as `mnemo config check`): a row per problem
    model     one tiny chat completion (no retries, --timeout): model name and latency; an
              endpoint that answers with something else (a proxy's page, invalid JSON, no
              ``choices``) is named as such, with the content type and how the body begins
    telegram  getMe with the configured token (adapters.telegram.probe)
    discord   GET /users/@me with the configured token (adapters.discord.probe); a row per
              entry of gateway.platforms.PLATFORMS, each with its own probe
    home      a temporary file created and deleted there; group/other access to the home
              or to memories/ is a warning naming the `chmod 700` that fixes it (the home
              holds the config and the logs on either backend)
    storage   the backend storage.backend names: sqlite (the home), or PostgreSQL answering
              within --timeout with every part's migrations current (see below)
    archive   its integrity check (the archive's own ``check``) and its counts
    memory    per person: blocked entries and drifted files (warnings: `mnemo memory scan`)
    skills    SkillStore.check problems (a warning: `mnemo skills check`)
    provider  the memory provider memory.provider names: it starts and answers
    coordination  the backend coordination.backend names: local, or Redis answering a PING
              (its round trip and the namespace; the URL is never shown)

Results are ``ok``, ``warn``, ``fail`` and ``skip`` (a disabled platform). The exit status is
1 when any row failed, 0 otherwise: warnings need an operator's eye, not a restart.

The live checks never disturb a running gateway: the probes consume no updates and open no
gateway session, and the model request is one short message. Every check runs concurrently
(the file checks on worker threads) and is guarded, so one that crashes is a failed row, not
a traceback. Every detail is redacted (the configured tokens, the API key and anything shaped
like a credential, ``gateway.logs.Redactor``) and made terminal-safe (``visible``) before it
is printed. The model's API key is never part of any message we build.

The home, storage, archive, memory and skills rows are ``gateway.cli.doctor.state``'s;
``gateway.cli.doctor.rows`` holds what every check shares.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

from adapters.base import Forbidden, PlatformError
from agent_core.models import ModelError, ModelInvalidResponse
from gateway.cli.common import add_command
from gateway.cli.doctor.rows import Check, counted, elapsed_ms, error_text, guard, late
from gateway.cli.doctor.state import check_home, check_storage
from gateway.cli.preflight import check_environment
from gateway.config import Config, Paths, secrets_of
from gateway.logs import Redactor
from gateway.platforms import PLATFORMS
from gateway.provider import health, open_provider
from gateway.storage import open_archive
from gateway.terminal import visible
from memory.providers.local import Embedder

__all__ = ["Check", "register", "render_table", "run_checks"]

PING = [{"role": "user", "content": "Reply with the single word: ok"}]
BASE_URL_HINT = "; is model.base_url the API's address (it usually ends in /v1)?"


def register(commands: Any) -> None:
    p = add_command(commands, "doctor")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--timeout", type=_seconds, default=10.0, help="seconds each live check may take (10)"
    )
    p.set_defaults(handler=_doctor)


def _seconds(text: str) -> float:
    with contextlib.suppress(ValueError):
        if 0 < (value := float(text)) <= 600:
            return value
    raise argparse.ArgumentTypeError(f"expected seconds between 0 and 600, got {text!r}")


def _doctor(args: argparse.Namespace, paths: Paths, config: Config) -> int:
    environ = dict(os.environ)
    rows = asyncio.run(run_checks(paths, config, environ, timeout_s=args.timeout))
    redact = Redactor(secrets_of(config, environ))
    rows = [replace(r, detail=visible(" ".join(redact(r.detail).split()))) for r in rows]
    failed = sum(r.result == "fail" for r in rows)
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(r) for r in rows]}, indent=2))
    else:
        print(render_table(rows))
        warned = sum(r.result == "warn" for r in rows)
        print(f"\n{counted(failed, 'failure')}, {counted(warned, 'warning')}")
    return 1 if failed else 0


def render_table(rows: list[Check]) -> str:
    """Aligned plain-text columns under a header line."""
    lines = [("CHECK", "RESULT", "DETAIL"), *((r.check, r.result, r.detail) for r in rows)]
    width = max(len(line[0]) for line in lines)
    result_width = max(len(line[1]) for line in lines)
    return "\n".join(
        f"{check:<{width}}  {result:<{result_width}}  {detail}".rstrip()
        for check, result, detail in lines
    )


async def run_checks(
    paths: Paths, config: Config, environ: Mapping[str, str], *, timeout_s: float = 10.0
) -> list[Check]:
    """Every check, concurrently; the rows in a fixed order."""
    groups = await asyncio.gather(
        guard("config", asyncio.to_thread(check_config, paths, config, environ)),
        guard("model", check_model(config, environ, timeout_s)),
        *(guard(name, check_platform(name, config, environ, timeout_s)) for name in PLATFORMS),
        guard("home", asyncio.to_thread(check_home, paths)),
        guard("storage", check_storage(paths, config, environ, timeout_s)),
        guard("provider", check_provider(paths, config, environ, timeout_s)),
        guard("coordination", check_coordination(config, environ, timeout_s)),
    )
    return [row for group in groups for row in group]


def check_config(paths: Paths, config: Config, environ: Mapping[str, str]) -> list[Check]:
    problems = check_environment(config, environ)
    if problems:
        return [Check("config", "fail", problem) for problem in problems]
    source = paths.config_file if paths.config_file.exists() else "defaults (no config file)"
    return [Check("config", "ok", f"{source}: settings and environment complete")]


async def check_model(config: Config, environ: Mapping[str, str], timeout_s: float) -> list[Check]:
    section = config.model
    where = section.base_url or "api.openai.com"
    key = environ.get(section.api_key_env) or None
    if key is None and section.base_url is None:
        return [Check("model", "fail", f"not checked: {section.api_key_env} is not set")]
    from agent_core.models.openai import OpenAIModel

    started = time.monotonic()
    async with OpenAIModel(
        name=section.name,
        base_url=section.base_url,
        api_key=key,
        timeout_s=timeout_s,
        max_retries=0,
    ) as model:
        try:
            async with asyncio.timeout(timeout_s):
                reply = await model.complete(PING, [], max_tokens=1)
        except TimeoutError:
            return [Check("model", "fail", f"{section.name} at {where}: {late(timeout_s)}")]
        except ModelInvalidResponse as exc:  # it answered: say with what
            detail = f"{section.name} at {where}: {exc.reason}{BASE_URL_HINT}"
            return [Check("model", "fail", detail)]
        except ModelError as exc:
            return [Check("model", "fail", f"{section.name} at {where}: {error_text(exc)}")]
    elapsed = elapsed_ms(started)
    return [Check("model", "ok", f"{reply.model or section.name} answered in {elapsed} ({where})")]


async def check_coordination(
    config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    from gateway.coordination import CoordinationUnavailable, open_coordinator

    shared = config.coordination
    if shared.backend == "local":
        return [Check("coordination", "ok", "local: this process alone serves its bots")]
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            coordinator = await open_coordinator(
                "redis",
                environ=environ,
                redis_url_env=shared.redis_url_env,
                namespace=shared.namespace,
                lease_ttl_s=shared.lease_ttl_s,
            )
    except TimeoutError:
        return [Check("coordination", "fail", f"redis: {late(timeout_s)}")]
    except CoordinationUnavailable as exc:  # one line that never holds the URL
        return [Check("coordination", "fail", str(exc))]
    await coordinator.aclose()
    detail = f"redis answered in {elapsed_ms(started)} (namespace {shared.namespace!r})"
    return [Check("coordination", "ok", detail)]


async def check_platform(
    name: str, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    section = getattr(config.platforms, name)
    if not section.enabled:
        return [Check(name, "skip", "not enabled")]
    token = environ.get(section.token_env, "").strip()
    if not token:
        return [Check(name, "fail", f"{section.token_env} is not set")]
    started = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            who = await PLATFORMS[name].probe(section, token, timeout_s)
    except TimeoutError:
        return [Check(name, "fail", late(timeout_s))]
    except Forbidden as exc:
        return [Check(name, "fail", f"{error_text(exc)}; check {section.token_env}")]
    except PlatformError as exc:
        return [Check(name, "fail", error_text(exc))]
    return [Check(name, "ok", f"token accepted: {who} in {elapsed_ms(started)}")]


async def check_provider(
    paths: Paths, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    """The memory provider ``memory.provider`` names: it starts and answers (the local one:
    its extra is installed and how much of the archive it has indexed)."""
    kind = config.memory.provider
    if kind == "none":
        return [Check("provider", "ok", "none: the built-in memory only (memory.provider)")]
    if kind == "local" and config.storage.backend == "sqlite" and not paths.state_db.exists():
        missing = Embedder.installed()
        return [Check("provider", "fail", missing) if missing else
                Check("provider", "ok", "local: nothing archived yet")]  # fmt: skip
    started = time.monotonic()
    try:
        async with (  # on PostgreSQL no schema is touched: only the local provider reads it
            open_archive(paths, config, environ, migrate=False) as archive,
            open_provider(config, archive=archive, model=None, environ=environ, index=False) as p,
        ):
            assert p is not None
            async with asyncio.timeout(timeout_s):
                report = await health(p)
    except TimeoutError:
        return [Check("provider", "fail", f"{kind}: {late(timeout_s)}")]
    except Exception as exc:  # ConfigError (extra, key), ProviderError, the SDK's own
        return [Check("provider", "fail", f"{kind}: {error_text(exc)}")]
    if kind != "local":
        return [Check("provider", "ok", f"{kind} answered in {elapsed_ms(started)}")]
    left = report["to_index"]
    detail = f"local: {report['indexed']} messages indexed, {report['cards']} cards"
    if left:
        detail += f"; {left} to index (the gateway does it, or `mnemo provider reindex`)"
    return [Check("provider", "ok", detail)]
