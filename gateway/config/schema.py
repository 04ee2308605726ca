"""One typed, frozen configuration tree, loaded once at the edge.

Where things live::

    home    --home DIR, else $MNEMO_HOME, else ~/.mnemo
    config  --config FILE, else <home>/config.yaml (a missing default file = all defaults)

Unknown keys, repeated keys, wrong types, values of the wrong shape and invalid YAML raise
``ConfigError`` whose ``lines`` name the file, the line, the key path and what was expected,
one line per problem; the CLI prints them and exits with status 2. Secrets never live here:
a section names the *environment variable* that holds a token (``token_env``: an
``EnvName``), and the value is read from the environment. An error line never quotes a value
that looks like a secret (``gateway.config.checks``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from gateway.config.checks import (
    PROBLEM,
    DuplicateKeyError,
    EnvName,
    HttpsURL,
    HttpURL,
    Section,
    UniqueKeyLoader,
    WebSocketURL,
    admin_entry,
    describe,
    key_lines,
    kind,
    looks_like_secret,
    platform_id,
    quote,
)
from gateway.config.memory import (
    HonchoOptions,
    Mem0Options,
    MemoryConfig,
    ProviderOptions,
    ReviewConfig,
)
from gateway.config.storage import CoordinationConfig, StorageConfig
from memory import MemoryLimits, MemoryStores
from memory.documents import Folders

__all__ = [
    "AgentConfig",
    "CompressionConfig",
    "Config",
    "ConfigError",
    "CoordinationConfig",
    "DiscordConfig",
    "GatewayConfig",
    "HonchoOptions",
    "HttpConfig",
    "LimitsConfig",
    "Mem0Options",
    "MemoryConfig",
    "ModelConfig",
    "OpsConfig",
    "Paths",
    "PlatformConfig",
    "PlatformsConfig",
    "ProviderOptions",
    "ReviewConfig",
    "SkillsConfig",
    "TelegramConfig",
    "load_config",
    "memory_stores",
    "resolve_paths",
    "secrets_of",
]


class ModelConfig(Section):
    base_url: HttpURL | None = None
    """OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (null: OpenAI itself)."""
    api_key_env: EnvName = "OPENAI_API_KEY"
    """Environment variable holding the API key (a local endpoint may need none)."""
    name: str = "gpt-4o-mini"
    """Model name sent with every request."""
    context_window: int = Field(default=128_000, gt=0)
    """Tokens the model accepts; compression starts at compression.threshold of it."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Seconds one request may take."""
    max_retries: int = Field(default=4, ge=0, le=10)
    """Retries of 429 / 5xx / connection errors / timeouts / answers that are not a chat
    completion, with back-off and jitter."""


class CompressionConfig(Section):
    enabled: bool = True
    """Compress a session whose prompt reaches threshold × model.context_window."""
    threshold: float = Field(default=0.75, gt=0, lt=1)
    """Share of the context window that triggers compression."""
    model: str | None = None
    """Model name for the summary (default: model.name)."""


class AgentConfig(Section):
    max_tool_iterations: int = Field(default=16, gt=0, le=100)
    """Model requests one turn may make before it is stopped gracefully."""


Id = Annotated[str, BeforeValidator(platform_id)]
"""A chat or user id: an integer (YAML reads ``123`` as one; a string to us) or "*"."""


class PlatformConfig(Section):
    """What every ``platforms.<name>`` section has (``gateway.platforms`` lists the names)."""

    enabled: bool = False
    """Start this platform with `mnemo run`."""
    allowed_users: list[Id] = Field(default_factory=list)
    """User ids who may talk to the bot ("*" = anyone); others may pair in a DM."""
    allowed_chats: list[Id] = Field(default_factory=list)
    """Group/channel ids the bot works in ("*" = any); other groups are ignored."""
    require_mention: bool = True
    """In groups, answer only when mentioned, replied to, or commanded."""
    free_response_chats: list[Id] = Field(default_factory=list)
    """Group/channel ids where the bot answers every message (require_mention off there)."""


class TelegramConfig(PlatformConfig):
    token_env: EnvName = "TELEGRAM_BOT_TOKEN"  # noqa: S105 - a variable name
    """Environment variable holding the bot token (from @BotFather)."""
    base_url: HttpURL | None = None
    """Bot API base, for a self-hosted Bot API server, e.g. http://127.0.0.1:8081/bot."""
    base_file_url: HttpURL | None = None
    """File download base of that server, e.g. http://127.0.0.1:8081/file/bot."""
    mode: Literal["polling", "webhook"] = "polling"
    """Long polling (no inbound port needed) or a webhook."""
    webhook_url: HttpsURL | None = None
    """Public HTTPS URL Telegram posts updates to (webhook mode)."""
    webhook_listen: str = "127.0.0.1"
    """Address the webhook listener binds (put a TLS reverse proxy in front)."""
    webhook_port: int = Field(default=8443, ge=0, lt=65536)
    """Port the webhook listener binds (0: any free port, logged at start)."""
    webhook_max_connections: int = Field(default=40, ge=1, le=100)
    """Connections Telegram may open to the webhook at once (setWebhook's max_connections;
    shared by all replicas behind one URL)."""
    webhook_secret_env: EnvName = "TELEGRAM_WEBHOOK_SECRET"  # noqa: S105
    """Environment variable holding the webhook secret token (required in webhook mode;
    checked on every post)."""


class DiscordConfig(PlatformConfig):
    token_env: EnvName = "DISCORD_BOT_TOKEN"  # noqa: S105 - a variable name
    """Environment variable holding the bot token."""
    api_base: HttpURL | None = None
    """REST base of a Discord-compatible server, e.g. http://127.0.0.1:3000/api/v10."""
    gateway_url: WebSocketURL | None = None
    """Gateway WebSocket URL of that server."""
    ready_wait_s: float = Field(default=2.0, ge=0, le=60)
    """After connecting, how long to wait for guild data before answering (discord.py)."""
    shard_count: int | None = Field(default=None, ge=1, le=10_000)
    """Gateway shards of the bot across all replicas (null: one connection, no sharding)."""
    shard_ids: list[int] | None = None
    """The shards this replica runs, each below shard_count (null: all of them)."""

    @field_validator("shard_ids")
    @classmethod
    def _shards_of_this_replica(
        cls, ids: list[int] | None, info: ValidationInfo
    ) -> list[int] | None:
        if ids is None:
            return None
        if "shard_count" not in info.data:  # shard_count itself was refused
            return ids
        count = info.data["shard_count"]
        if count is None:
            raise _shard_problem("needs shard_count beside it (the shards of all replicas)")
        if not ids:
            raise _shard_problem("an empty list runs no shard (leave it out to run all)")
        wrong = [i for i in ids if not 0 <= i < count]
        if wrong:
            raise _shard_problem(f"{wrong[0]} is not a shard of {count} (0 to {count - 1})")
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise _shard_problem(f"{repeated[0]} is listed twice")
        return ids


def _shard_problem(reason: str) -> PydanticCustomError:
    return PydanticCustomError(PROBLEM, "{reason}", {"reason": reason})


class PlatformsConfig(Section):
    telegram: TelegramConfig = TelegramConfig()
    discord: DiscordConfig = DiscordConfig()


class LimitsConfig(Section):
    turns_per_hour: int = Field(default=60, ge=0)
    """Messages (turns) one person may start in any hour, across all their chats; 0 = no
    limit. Admins have none."""
    tokens_per_day: int = Field(default=200_000, ge=0)
    """Model tokens (prompt + completion) one person's turns may use per day (UTC); 0 = no
    limit. Admins have none."""


Admin = Annotated[str, AfterValidator(admin_entry(tuple(PlatformsConfig.model_fields)))]
"""A ``gateway.admins`` entry: ``<platform>:<numeric user id>``."""


class GatewayConfig(Section):
    admins: list[Admin] = Field(default_factory=list)
    """People who may run /admin and /pair, as platform:id (telegram:123, discord:456)."""
    group_sessions_per_user: bool = True
    """In groups each person has their own session (and their own memory in it)."""
    max_concurrent_turns: int = Field(default=8, gt=0, le=1000)
    """Turns running at once across all chats."""
    max_reply_messages: int = Field(default=6, ge=2, le=50)
    """A reply longer than this many messages is sent as its first ones plus the whole
    text as a Markdown file (reply.md)."""
    drain_timeout_s: float = Field(default=30.0, ge=0, le=3600)
    """On SIGTERM, how long running turns may take to finish."""
    idle_session_s: float = Field(default=3600.0, gt=0)
    """Live sessions idle this long leave memory (they resume from the archive)."""
    limits: LimitsConfig = LimitsConfig()


class SkillsConfig(Section):
    enabled: bool = True
    """Offer the skills index and the skill tools to the agent."""
    write_approval: Literal["non_admin", "always", "never"] = "non_admin"
    """Which skill writes wait for an admin (/skills approve ID): those from non-admins'
    conversations and reviews (non_admin), all of them (always), or none (never)."""


class HttpConfig(Section):
    listen: str | None = None
    """host:port of the health and metrics endpoint (/healthz, /metrics); off when empty,
    e.g. 127.0.0.1:9464."""


class OpsConfig(Section):
    http: HttpConfig = HttpConfig()
    log_format: Literal["text", "json"] = "text"
    """Logs on stderr: human-readable lines, or one JSON object per line."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The least severe level logged."""


class Config(Section):
    memory: MemoryConfig = MemoryConfig()
    model: ModelConfig = ModelConfig()
    agent: AgentConfig = AgentConfig()
    compression: CompressionConfig = CompressionConfig()
    platforms: PlatformsConfig = PlatformsConfig()
    gateway: GatewayConfig = GatewayConfig()
    skills: SkillsConfig = SkillsConfig()
    ops: OpsConfig = OpsConfig()
    storage: StorageConfig = StorageConfig()
    coordination: CoordinationConfig = CoordinationConfig()


class ConfigError(Exception):
    """A configuration that cannot be used; ``lines`` holds one message per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True, slots=True)
class Paths:
    home: Path
    config_file: Path
    explicit_config: bool

    @property
    def memories(self) -> Path:
        return self.home / "memories"

    @property
    def skills(self) -> Path:
        """Procedural memory: <home>/skills/[<category>/]<name>/SKILL.md."""
        return self.home / "skills"

    @property
    def state_db(self) -> Path:
        """The archive of every session (SQLite)."""
        return self.home / "state.db"


def resolve_paths(
    home: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Paths:
    env = os.environ if environ is None else environ
    if home is not None:
        home_path = Path(home)
    elif env.get("MNEMO_HOME"):
        home_path = Path(env["MNEMO_HOME"])
    else:
        home_path = Path("~/.mnemo")
    home_path = home_path.expanduser()
    if config is not None:
        return Paths(home_path, Path(config).expanduser(), explicit_config=True)
    return Paths(home_path, home_path / "config.yaml", explicit_config=False)


def memory_stores(where: Paths | Folders, config: Config) -> MemoryStores:
    """Every person's curated memory, as ``config.memory`` lays it out (no I/O yet): in the
    home's ``memories/`` folder, or in the ``Folders`` of another backend."""
    mem = config.memory
    return MemoryStores(
        where.memories if isinstance(where, Paths) else where,
        limits=MemoryLimits(memory=mem.memory_char_limit, user=mem.user_char_limit),
        scope=mem.scope,
        write_approval=mem.write_approval,
    )


def secrets_of(config: Config, environ: Mapping[str, str]) -> list[str]:
    """The secrets ``config`` names, as ``environ`` holds them (the log redactor's list):
    the value of every ``*_env`` key, wherever it is (the API key, every platform's bot
    token, the webhook secret), enabled or not."""
    return [environ[name] for name in _env_names(config) if environ.get(name)]


def _env_names(section: BaseModel) -> list[str]:
    names: list[str] = []
    for key in type(section).model_fields:
        value = getattr(section, key)
        if isinstance(value, BaseModel):
            names += _env_names(value)
        elif key.endswith("_env") and isinstance(value, str):
            names.append(value)
    return names


def load_config(paths: Paths) -> Config:
    """Read and validate the config file named by ``paths``."""
    name = str(paths.config_file)
    try:
        text = paths.config_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if paths.explicit_config:
            raise ConfigError([f"{name}: file not found"]) from None
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"{name}: cannot read: {exc}"]) from None
    loader = UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except DuplicateKeyError as exc:
        raise ConfigError(
            [f"{name}:{exc.line}: duplicate key {exc.describe_key()} (first at line {exc.first})"]
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError([_yaml_error(name, exc)]) from None
    finally:
        loader.dispose()
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise ConfigError([f"{name}: top level: expected a mapping of sections, got {kind(data)}"])
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        lines = key_lines(node)
        raise ConfigError([_pydantic_line(name, err, lines) for err in exc.errors()]) from None


def _yaml_error(name: str, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        return f"{name}:{mark.line + 1}:{mark.column + 1}: invalid YAML: {problem}"
    return f"{name}: invalid YAML: {problem}"


def _pydantic_line(name: str, err: Mapping[str, Any], lines: Mapping[tuple[str, ...], int]) -> str:
    """``file:line: key.path: problem``; a value is quoted only when it cannot be a secret
    (never under a ``*_env`` key, never one that looks like a credential)."""
    loc = [str(part) for part in err["loc"]]
    path = "".join(_key(part) for part in err["loc"])[1:] or "top level"
    where = name
    for end in range(len(loc), 0, -1):  # the line of the key, or of the nearest parent
        if tuple(loc[:end]) in lines:
            where = f"{name}:{lines[tuple(loc[:end])]}"
            break
    problem = err["type"]
    value = err.get("input")
    if problem == PROBLEM:  # our own checks: a complete message that never quotes a secret
        return f"{where}: {path}: {err['msg']}"
    if problem == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        return f"{where}: {path}: unknown key (allowed here: {', '.join(allowed)})"
    hidden = bool(loc) and loc[-1].endswith("_env")
    expected = {
        "int_type": "an integer",
        "bool_type": "true or false",
        "string_type": "a string",
        "float_type": "a number",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
        "dict_type": "a mapping",
        "list_type": "a list",
    }.get(problem)
    if expected is not None:
        got = kind(value) if hidden else describe(value)
        return f"{where}: {path}: expected {expected}, got {got}"
    shown = "a value (not shown)" if hidden else quote(value)
    if problem == "literal_error":
        return f"{where}: {path}: expected one of {err['ctx']['expected']}, got {shown}"
    return f"{where}: {path}: {err['msg'][0].lower()}{err['msg'][1:]}, got {shown}"


def _key(part: str | int) -> str:
    """One step of a key path as printed: ``.name``, or ``[index]`` in a list."""
    if isinstance(part, int):
        return f"[{part}]"
    return ".(a key that looks like a secret)" if looks_like_secret(part) else f".{part}"


def _allowed_keys(loc: list[str]) -> list[str]:
    model: type[BaseModel] = Config
    for part in loc:
        annotation = model.model_fields[part].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return sorted(model.model_fields)
