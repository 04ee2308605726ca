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

The archive, memory and skills rows check what the gateway of this config uses
(``gateway.storage``): ``state.db``, ``memories/`` and ``skills/`` in the home, or with
``storage.backend: postgres`` the shared database. There the doctor writes nothing: it reads
which migrations each part recorded (``gateway.storage_check.schemas``); a part with no
tables yet is fine (the first ``mnemo run`` creates them), one behind is a warning, one a
newer mnemo wrote a failure, and a part that is not current is not read (its rows are
skipped). A database that does not answer is one failed storage row, naming the variable,
never the connection string; the rows that need it are skipped.

Opening an existing ``state.db`` applies pending migrations, as every other command does;
nothing else is written, and a missing home or archive is never created.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import shlex
import stat
import tempfile
import time
from collections.abc import Awaitable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from adapters.base import Forbidden, PlatformError
from agent_core.models import ModelError, ModelInvalidResponse
from gateway.cli.common import add_command
from gateway.cli.preflight import check_environment
from gateway.config import Config, ConfigError, Paths, secrets_of
from gateway.logs import Redactor
from gateway.platforms import PLATFORMS
from gateway.provider import health, open_provider
from gateway.storage import command_stores, open_archive, reaching
from gateway.storage_check import Schema, schemas
from gateway.terminal import visible
from memory.archive import Archive, ArchiveStore
from memory.curated import MemoryStores
from memory.providers.local import Embedder
from memory.skills import SkillStore

__all__ = ["Check", "register", "render_table", "run_checks"]

Result = Literal["ok", "warn", "fail", "skip"]
PING = [{"role": "user", "content": "Reply with the single word: ok"}]
BASE_URL_HINT = "; is model.base_url the API's address (it usually ends in /v1)?"


@dataclass(frozen=True, slots=True)
class Check:
    check: str
    result: Result
    detail: str


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
        print(f"\n{_count(failed, 'failure')}, {_count(warned, 'warning')}")
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
        _guard("config", asyncio.to_thread(check_config, paths, config, environ)),
        _guard("model", check_model(config, environ, timeout_s)),
        *(_guard(name, check_platform(name, config, environ, timeout_s)) for name in PLATFORMS),
        _guard("home", asyncio.to_thread(check_home, paths)),
        _guard("storage", check_storage(paths, config, environ, timeout_s)),
        _guard("provider", check_provider(paths, config, environ, timeout_s)),
        _guard("coordination", check_coordination(config, environ, timeout_s)),
    )
    return [row for group in groups for row in group]


async def _guard(name: str, work: Awaitable[list[Check]]) -> list[Check]:
    try:
        return await work
    except Exception as exc:  # a doctor reports a crashing check, it does not crash
        return [Check(name, "fail", f"the check itself failed: {_error(exc)}")]


# -- the checks ----------------------------------------------------------------------------


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
            return [Check("model", "fail", f"{section.name} at {where}: {_late(timeout_s)}")]
        except ModelInvalidResponse as exc:  # it answered: say with what
            detail = f"{section.name} at {where}: {exc.reason}{BASE_URL_HINT}"
            return [Check("model", "fail", detail)]
        except ModelError as exc:
            return [Check("model", "fail", f"{section.name} at {where}: {_error(exc)}")]
    elapsed = _ms(started)
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
        return [Check("coordination", "fail", f"redis: {_late(timeout_s)}")]
    except CoordinationUnavailable as exc:  # one line that never holds the URL
        return [Check("coordination", "fail", str(exc))]
    await coordinator.aclose()
    detail = f"redis answered in {_ms(started)} (namespace {shared.namespace!r})"
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
        return [Check(name, "fail", _late(timeout_s))]
    except Forbidden as exc:
        return [Check(name, "fail", f"{_error(exc)}; check {section.token_env}")]
    except PlatformError as exc:
        return [Check(name, "fail", _error(exc))]
    return [Check(name, "ok", f"token accepted: {who} in {_ms(started)}")]


def check_home(paths: Paths) -> list[Check]:
    home = paths.home
    if not home.exists():
        return [Check("home", "fail", f"{home} does not exist; run `mnemo init`")]
    if not home.is_dir():
        return [Check("home", "fail", f"{home} is not a directory")]
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=home)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return [Check("home", "fail", f"{home} is not writable: {exc.strerror or exc}")]
    mode = stat.S_IMODE(home.stat().st_mode)
    if mode & 0o077:
        detail = (
            f"{home} is writable but mode {mode:o} lets others in;"
            f" run `chmod 700 {shlex.quote(str(home))}`"
        )
        rows = [Check("home", "warn", detail)]
    else:
        rows = [Check("home", "ok", f"{home} is writable")]
    memories = paths.memories
    try:
        info = memories.stat()
    except OSError:  # missing: nothing remembered yet
        return rows
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode) and mode & 0o077:
        detail = (
            f"{memories} has mode {mode:o}: other users can see who talks to the bot;"
            f" run `chmod 700 {shlex.quote(str(memories))}`"
        )
        rows.append(Check("home", "warn", detail))
    return rows


async def check_storage(
    paths: Paths, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    """The storage row, then the archive, memory and skills rows, of the backend that
    ``storage.backend`` names (see the module docstring)."""
    if config.storage.backend == "postgres":
        return await _check_postgres(paths, config, environ, timeout_s)
    stores = command_stores(paths, config, environ)  # the home's files: no I/O yet
    groups = await asyncio.gather(
        _guard("archive", check_archive(paths)),
        _guard("memory", asyncio.to_thread(check_memory, stores.memory)),
        _guard("skills", asyncio.to_thread(check_skills, stores.skills)),
    )
    head = Check("storage", "ok", f"sqlite: state.db and files in {paths.home}")
    return [head, *(row for group in groups for row in group)]


async def _check_postgres(
    paths: Paths, config: Config, environ: Mapping[str, str], timeout_s: float
) -> list[Check]:
    variable = config.storage.postgres.dsn_env
    where = f"postgres at {variable}"
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as opened:
        try:
            async with asyncio.timeout(timeout_s):
                archive = await opened.enter_async_context(
                    open_archive(paths, config, environ, migrate=False)
                )
                with reaching(variable):
                    found = await schemas(archive.pool)  # type: ignore[attr-defined]
        except (TimeoutError, ConfigError) as exc:  # unset, refused, too slow: one row
            why = _late(timeout_s) if isinstance(exc, TimeoutError) else "; ".join(exc.lines)
            skipped = "not checked: the database did not answer (see the storage row)"
            return [
                Check("storage", "fail", f"{where}: {why.removeprefix('storage: ')}"),
                *(Check(name, "skip", skipped) for name in ("archive", "memory", "skills")),
            ]
        head = _schema_rows(where, found, _ms(started))
        archive_rows = _guard("archive", _archive_rows(archive, found["archive"]))
        documents = found["stores"]
        if documents.current:
            opening = asyncio.to_thread(
                functools.partial(command_stores, paths, config, environ, migrate=False)
            )
            try:
                async with asyncio.timeout(timeout_s):
                    stores = await opening
            except Exception as exc:  # psycopg's own connection: refused, too slow
                why = _late(timeout_s) if isinstance(exc, TimeoutError) else _error(exc)
                failed = f"the stores could not be opened: {why}"
                groups = [
                    await archive_rows,
                    [Check("memory", "fail", failed)],
                    [Check("skills", "fail", failed)],
                ]
            else:
                groups = list(
                    await asyncio.gather(
                        archive_rows,
                        _guard("memory", asyncio.to_thread(check_memory, stores.memory)),
                        _guard("skills", asyncio.to_thread(check_skills, stores.skills)),
                    )
                )
        else:
            groups = [
                await archive_rows,
                [_unread("memory", documents, "no memory stored in PostgreSQL yet")],
                [_unread("skills", documents, "no skills in PostgreSQL yet")],
            ]
    return [*head, *(row for group in groups for row in group)]


def _schema_rows(where: str, found: Mapping[str, Schema], answered_in: str) -> list[Check]:
    """One row per part a newer mnemo wrote (fail) or behind this one (warn), else one ok
    row; parts with no tables yet are named, as the first ``mnemo run`` creates them."""
    rows = [
        Check("storage", "fail" if schema.unknown else "warn", f"{where}: {part}: {schema.state()}")
        for part, schema in found.items()
        if schema.recorded and not schema.current
    ]
    if rows:
        return rows
    detail = f"{where} answered in {answered_in}; migrations current"
    empty = [part for part, schema in found.items() if not schema.recorded]
    if empty:
        detail += f" (no tables yet for {', '.join(empty)}: the first `mnemo run` creates them)"
    return [Check("storage", "ok", detail)]


def _unread(name: str, schema: Schema, empty: str) -> Check:
    """The row of a part whose schema is not current: empty, or not read."""
    if not schema.recorded:
        return Check(name, "ok", empty)
    return Check(name, "skip", "not checked: its tables are not current (see the storage row)")


async def check_archive(paths: Paths) -> list[Check]:
    db = paths.state_db
    if not db.exists():
        return [Check("archive", "ok", f"{db.name} not created yet")]
    try:
        archive = await Archive.open(db)
    except Exception as exc:  # sqlite3.DatabaseError "file is not a database", OSError
        return [Check("archive", "fail", f"cannot open {db}: {_error(exc)}")]
    async with archive:
        return await _archive_rows(archive)


async def _archive_rows(archive: ArchiveStore, schema: Schema | None = None) -> list[Check]:
    """The integrity check and the counts of an open archive (on PostgreSQL, only when
    its ``schema`` is current)."""
    if schema is not None and not schema.current:
        return [_unread("archive", schema, "no archive in PostgreSQL yet")]
    problems = await archive.check()
    counts = await archive.counts() if not problems else {}
    if problems:
        hint = "; see `mnemo sessions check` (--repair rebuilds the search indexes)"
        return [Check("archive", "fail", f"{problem}{hint}") for problem in problems]
    sessions, messages = counts.get("sessions", 0), counts.get("messages", 0)
    detail = f"integrity ok: {_count(sessions, 'session')}, {_count(messages, 'message')}"
    return [Check("archive", "ok", detail)]


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
        return [Check("provider", "fail", f"{kind}: {_late(timeout_s)}")]
    except Exception as exc:  # ConfigError (extra, key), ProviderError, the SDK's own
        return [Check("provider", "fail", f"{kind}: {_error(exc)}")]
    if kind != "local":
        return [Check("provider", "ok", f"{kind} answered in {_ms(started)}")]
    left = report["to_index"]
    detail = f"local: {report['indexed']} messages indexed, {report['cards']} cards"
    if left:
        detail += f"; {left} to index (the gateway does it, or `mnemo provider reindex`)"
    return [Check("provider", "ok", detail)]


def check_memory(memory: MemoryStores) -> list[Check]:
    rows: list[Check] = []
    stores = 0
    for store in memory:
        stores += 1
        blocked, drifts = store.check()
        found = []
        if blocked:
            found.append(_count(len(blocked), "blocked entry", "blocked entries"))
        if drifts:
            found.append(_count(len(drifts), "drifted file"))
        if found:
            detail = f"{store.person}: {', '.join(found)}; run `mnemo memory scan`"
            rows.append(Check("memory", "warn", detail))
    return rows or [Check("memory", "ok", f"{_count(stores, 'store')}, nothing blocked or drifted")]


def check_skills(store: SkillStore) -> list[Check]:
    problems = store.check()
    if problems:
        first = problems[0]
        detail = (
            f"{_count(len(problems), 'problem')} (first: {first.path}: {first.reason});"
            " run `mnemo skills check`"
        )
        return [Check("skills", "warn", detail)]
    return [Check("skills", "ok", f"{_count(len(store.scan()[0]), 'skill')}, no problems")]


# -- helpers -------------------------------------------------------------------------------


def _error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _late(timeout_s: float) -> str:
    return f"no answer within {timeout_s:g} s"


def _ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
