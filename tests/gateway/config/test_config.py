"""Config loading: defaults, overrides, and one clear line per problem (exit 2 in the CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from gateway.config.checks import looks_like_secret
from gateway.config.schema import Config, ConfigError, load_config, resolve_paths, secrets_of


def test_home_resolution_order(tmp_path: Path) -> None:
    env = {"MNEMO_HOME": str(tmp_path / "env-home")}
    assert resolve_paths(tmp_path / "flag", None, env).home == tmp_path / "flag"
    assert resolve_paths(None, None, env).home == tmp_path / "env-home"
    assert resolve_paths(None, None, {}).home == Path("~/.mnemo").expanduser()
    paths = resolve_paths(None, None, env)
    assert paths.config_file == tmp_path / "env-home" / "config.yaml"
    assert paths.memories == tmp_path / "env-home" / "memories"
    explicit = resolve_paths(None, tmp_path / "c.yaml", env)
    assert explicit.config_file == tmp_path / "c.yaml" and explicit.explicit_config


def test_missing_default_file_means_defaults(tmp_path: Path) -> None:
    config = load_config(resolve_paths(tmp_path, None, {}))
    assert config == Config()
    assert config.memory.memory_char_limit == 2200
    assert config.memory.user_char_limit == 1375
    assert config.memory.scope == "person"
    assert config.memory.write_approval is False


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(resolve_paths(tmp_path, tmp_path / "nope.yaml", {}))


def _load(tmp_path: Path, text: str) -> Config:
    (tmp_path / "config.yaml").write_text(text, encoding="utf-8")
    return load_config(resolve_paths(tmp_path, None, {}))


def test_overrides_are_read_and_frozen(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "memory:\n  memory_char_limit: 3000\n  user_char_limit: 500\n"
        "  scope: shared\n  write_approval: true\n",
    )
    assert config.memory.memory_char_limit == 3000
    assert config.memory.user_char_limit == 500
    assert config.memory.scope == "shared"
    assert config.memory.write_approval is True
    with pytest.raises(ValidationError):
        config.memory.scope = "person"


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    assert _load(tmp_path, "# nothing yet\n") == Config()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "memory:\n  memory_char_limit: lots\n",
            "memory.memory_char_limit: expected an integer, got a string 'lots'",
        ),
        (
            "memory:\n  write_approval: 'yes'\n",
            "memory.write_approval: expected true or false, got a string 'yes'",
        ),
        (
            "memory:\n  scope: everyone\n",
            "memory.scope: expected one of 'person' or 'shared', got 'everyone'",
        ),
        (
            "memory:\n  user_char_limit: 0\n",
            "memory.user_char_limit: input should be greater than 0",
        ),
        (
            "memory:\n  provider: pinecone\n",
            "memory.provider: expected one of 'none', 'local', 'honcho' or 'mem0', got 'pinecone'",
        ),
        (
            "memory:\n  colour: blue\n",
            "memory.colour: unknown key (allowed here: group_scope, memory_char_limit, notify,"
            " provider, provider_options, review, scope, user_char_limit, write_approval)",
        ),
        (
            "memroy:\n  scope: shared\n",
            "memroy: unknown key (allowed here:"
            " agent, compression, coordination, gateway, memory, model, ops, platforms, skills,"
            " storage)",
        ),
        ("memory: 5\n", "memory: expected a mapping, got an integer 5"),
        ("- just\n- a list\n", "top level: expected a mapping of sections, got a list"),
        ("memory:\n  scope: [shared\n", "invalid YAML"),
    ],
)
def test_bad_config_names_file_key_and_expectation(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    (line,) = info.value.lines
    assert line.startswith(str(tmp_path / "config.yaml"))
    assert expected in line
    assert "\n" not in line


def test_yaml_errors_carry_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, "memory:\n  scope: shared\n  bad: [1, 2\n")
    assert f"{tmp_path / 'config.yaml'}:4:1: invalid YAML" in info.value.lines[0]


def test_every_problem_gets_its_own_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, "memory:\n  scope: x\n  memory_char_limit: y\n")
    assert len(info.value.lines) == 2


def test_model_and_agent_sections(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "model:\n  base_url: http://127.0.0.1:11434/v1\n  api_key_env: LOCAL_KEY\n"
        "  name: llama3\n  timeout_s: 30\n  max_retries: 0\n"
        "agent:\n  max_tool_iterations: 4\n",
    )
    assert config.model.base_url == "http://127.0.0.1:11434/v1"
    assert (config.model.api_key_env, config.model.name) == ("LOCAL_KEY", "llama3")
    assert (config.model.timeout_s, config.model.max_retries) == (30.0, 0)
    assert config.agent.max_tool_iterations == 4
    assert Config().model.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(
        ConfigError, match=r"model\.max_retries: input should be less than or equal"
    ):
        _load(tmp_path, "model:\n  max_retries: 99\n")


def test_review_settings_reach_the_agent(tmp_path: Path) -> None:
    from gateway.wiring import agent_settings

    config = _load(
        tmp_path,
        "memory:\n  notify: verbose\n  review:\n    enabled: false\n    interval_turns: 3\n"
        "    model: small-model\nagent:\n  max_tool_iterations: 5\n",
    )
    settings = agent_settings(config)
    assert (settings.review_enabled, settings.review_interval_turns) == (False, 3)
    assert (settings.review_model, settings.max_tool_iterations) == ("small-model", 5)
    assert config.memory.notify == "verbose"
    assert settings.compression is not None
    assert (settings.compression.context_window, settings.compression.threshold) == (128_000, 0.75)
    off = agent_settings(_load(tmp_path, "compression:\n  enabled: false\n"))
    assert off.compression is None
    with pytest.raises(ConfigError, match=r"memory\.notify: expected one of"):
        _load(tmp_path, "memory:\n  notify: loud\n")


def test_errors_name_the_line_of_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(
            tmp_path,
            "# a comment\nmemory:\n  scope: shared\n\nmodel:\n  name: m\n  timeout_s: soon\n"
            "platforms:\n  telegram:\n    allowed_users:\n      - 1\n      - alice\n",
        )
    name = tmp_path / "config.yaml"
    assert info.value.lines == [
        f"{name}:7: model.timeout_s: expected a number, got a string 'soon'",
        f"{name}:12: platforms.telegram.allowed_users[1]: expected a numeric id"
        " (Telegram group ids are negative) or \"*\", got a string 'alice'",
    ]


# -- Discord shards ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("discord", "expected"),
    [
        ("{shard_ids: [0]}", "shard_ids: needs shard_count beside it (the shards of all replicas)"),
        ("{shard_count: 2, shard_ids: [0, 2]}", "shard_ids: 2 is not a shard of 2 (0 to 1)"),
        ("{shard_count: 2, shard_ids: [-1]}", "shard_ids: -1 is not a shard of 2 (0 to 1)"),
        ("{shard_count: 3, shard_ids: [1, 2, 1]}", "shard_ids: 1 is listed twice"),
        (
            "{shard_count: 2, shard_ids: []}",
            "shard_ids: an empty list runs no shard (leave it out to run all)",
        ),
        ("{shard_count: 0}", "shard_count: input should be greater than or equal to 1, got 0"),
        ("{shard_count: 2, shard_ids: 1}", "shard_ids: expected a list, got an integer 1"),
    ],
)
def test_shard_ids_are_distinct_shards_of_shard_count(
    tmp_path: Path, discord: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, f"platforms:\n  discord: {discord}\n")
    assert info.value.lines == [f"{tmp_path / 'config.yaml'}:2: platforms.discord.{expected}"]


def test_shards_default_to_none_and_may_leave_the_ids_out(tmp_path: Path) -> None:
    assert (Config().platforms.discord.shard_count, Config().platforms.discord.shard_ids) == (
        None, None,
    )  # fmt: skip
    two = _load(tmp_path, "platforms:\n  discord: {shard_count: 2}\n").platforms.discord
    assert (two.shard_count, two.shard_ids) == (2, None)  # this replica runs both
    mine = _load(tmp_path, "platforms:\n  discord: {shard_count: 4, shard_ids: [3, 1]}\n")
    assert mine.platforms.discord.shard_ids == [3, 1]


# -- secrets never echo back ---------------------------------------------------------------

# Shaped like the real thing, but none of them is: a Telegram token the log redactor's own
# pattern does not know (so only the loader stands between it and the terminal), a Discord
# token, an OpenAI key, a GitHub token, a Slack token, random hex and base62.
TOKENS = [
    "987654321:XYZdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbCdE.abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
    "ghp_" + "a1B2" * 9,
    "xoxb-1234567890-abcdefghijkl",
    "3f9a6c2e81b04d7f95ce0a7b6d4e2f18",
    "Zk4mQ9xL2pR7vT1wN8bC5dF3",
]
PASTED = "987654321:XYZdqTcvCH1vGWJxfSeofSAs0K5P"  # a bot token, minus a few characters
NAMES = [
    "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "HF_TOKEN", "hf_token", "_PRIVATE", "x",
    "MY_KEY_2024", "AWS_SECRET_ACCESS_KEY_2024_PROD", "ASIA_PACIFIC_API_TOKEN", "BOT2_TOKEN",
    "A" * 128,
]  # fmt: skip


def _env_fields(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every ``*_env`` key of the schema, found by name: a new one is covered by default."""
    found = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += _env_fields(annotation, f"{prefix}{name}.")
        elif name.endswith("_env"):
            found.append(prefix + name)
    return found


def _nested(path: str, value: object) -> str:
    """``a.b.c`` = value as block YAML; the value's line is the last line."""
    *parents, leaf = path.split(".")
    lines = [f"{'  ' * depth}{part}:" for depth, part in enumerate(parents)]
    lines.append(f"{'  ' * len(parents)}{leaf}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def test_the_env_fields_are_the_eight_we_know() -> None:
    assert _env_fields() == [
        "memory.provider_options.honcho.api_key_env",
        "memory.provider_options.mem0.api_key_env",
        "model.api_key_env",
        "platforms.telegram.token_env",
        "platforms.telegram.webhook_secret_env",
        "platforms.discord.token_env",
        "storage.postgres.dsn_env",
        "coordination.redis_url_env",
    ]


@pytest.mark.parametrize("field", _env_fields())
@pytest.mark.parametrize("token", TOKENS)
def test_a_token_in_an_env_field_is_refused_without_echoing_it(
    tmp_path: Path, field: str, token: str
) -> None:
    text = _nested(field, token)
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    (line,) = info.value.lines
    assert line == (
        f"{tmp_path / 'config.yaml'}:{text.count(chr(10))}: {field}: this looks like a token"
        " itself: put the NAME of an environment variable here"
    )


@pytest.mark.parametrize("field", _env_fields())
def test_env_fields_take_names_and_refuse_anything_else_without_echoing_it(
    tmp_path: Path, field: str
) -> None:
    *parents, leaf = field.split(".")
    for name in NAMES:
        section: object = _load(tmp_path, _nested(field, name))
        for part in parents:
            section = getattr(section, part)
        assert getattr(section, leaf) == name
    for bad, problem in [
        ("", "is empty: put the NAME of an environment variable here"),
        ("  ", "is empty: put the NAME of an environment variable here"),
        ("MY-TOKEN", "is not an environment variable name: letters, digits and _"),
        ("1TOKEN", "is not an environment variable name"),
        ("$TELEGRAM_BOT_TOKEN", "is not an environment variable name"),
        ("TELEGRAM BOT TOKEN", "is not an environment variable name"),
        ("A" * 129, "at most 128 characters"),
    ]:
        with pytest.raises(ConfigError) as info:
            _load(tmp_path, _nested(field, bad))
        (line,) = info.value.lines
        assert f": {field}: " in line and problem in line
        assert repr(bad) not in line and (not bad.strip() or bad not in line)
    for wrong_type in (1234567890123, True, None, ["A"]):
        with pytest.raises(ConfigError) as info:
            _load(tmp_path, _nested(field, wrong_type))
        (line,) = info.value.lines
        assert line.endswith(f"{field}: expected a string, got {_kind(wrong_type)}")


def _kind(value: object) -> str:
    return {int: "an integer", bool: "a boolean", list: "a list"}.get(type(value), "nothing")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # a token where a list belongs
            f"platforms:\n  telegram:\n    allowed_users: {PASTED}\n",
            "platforms.telegram.allowed_users: expected a list,"
            " got a value that looks like a secret (not shown)",
        ),
        (  # in a list of ids
            f"platforms:\n  discord:\n    allowed_chats: [1, {PASTED}]\n",
            "platforms.discord.allowed_chats[1]: expected a numeric id (Telegram group ids are"
            ' negative) or "*", got a value that looks like a secret (not shown)',
        ),
        (  # as an unknown key
            f"platforms:\n  telegram:\n    {PASTED}: x\n",
            "platforms.telegram.(a key that looks like a secret): unknown key",
        ),
        (  # where a choice belongs
            "ops:\n  log_format: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv\n",
            "ops.log_format: expected one of 'text' or 'json',"
            " got a value that looks like a secret (not shown)",
        ),
        (  # as an admin
            f"gateway:\n  admins: ['telegram:{PASTED}']\n",
            "gateway.admins[0]: a value that looks like a secret (not shown) has a non-numeric id",
        ),
    ],
)
def test_a_secret_anywhere_else_is_never_quoted(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    (line,) = info.value.lines
    assert expected in line
    assert "XYZdqTcv" not in line and "Ab3dEf6h" not in line


@pytest.mark.parametrize(
    "text",
    [
        "plain words", "TELEGRAM_BOT_TOKEN", "gpt-4o-mini", "llama3.1:8b-instruct-q4_K_M",
        "http://127.0.0.1:11434/v1", "telegram:123456789", "-1001234567890", "person",
        "MY_KEY_2024", "hf_INFERENCE_TOKEN_2024_PROD",
    ],
)  # fmt: skip
def test_names_and_ordinary_values_do_not_look_like_secrets(text: str) -> None:
    assert not looks_like_secret(text)


@pytest.mark.parametrize("token", TOKENS)
def test_secret_shapes_are_recognised(token: str) -> None:
    assert looks_like_secret(token)


# -- duplicate keys ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("memory:\n  scope: shared\nmodel: {}\nmemory:\n  scope: person\n", ":4: duplicate key"
         " 'memory' (first at line 1)"),
        ("platforms:\n  telegram:\n    token_env: A\n    enabled: true\n    token_env: B\n",
         ":5: duplicate key 'token_env' (first at line 3)"),
        ("model: {name: a, name: b}\n", ":1: duplicate key 'name' (first at line 1)"),
        (f"platforms:\n  telegram:\n    token_env: A\n    {PASTED}: 1\n    {PASTED}: 2\n",
         ":5: duplicate key (a key that looks like a secret) (first at line 4)"),
    ],
)  # fmt: skip
def test_duplicate_keys_are_refused_with_both_lines(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    assert info.value.lines == [f"{tmp_path / 'config.yaml'}{expected}"]


def test_merge_keys_may_still_be_overridden(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "platforms:\n  telegram: &base\n    enabled: false\n    allowed_users: [1]\n"
        "  discord:\n    <<: *base\n    enabled: true\n",
    )
    assert config.platforms.discord.enabled and config.platforms.discord.allowed_users == ["1"]


# -- URLs, ids, admins ---------------------------------------------------------------------

URL_FIELDS = [  # field, a good value, a scheme it refuses
    ("model.base_url", "http://127.0.0.1:11434/v1", "ftp"),
    ("platforms.telegram.base_url", "https://bot-api.example:8081/bot", "ftp"),
    ("platforms.telegram.base_file_url", "http://[::1]:8081/file/bot", "file"),
    ("platforms.telegram.webhook_url", "https://bot.example/telegram", "http"),
    ("platforms.discord.api_base", "http://127.0.0.1:3000/api/v10", "ws"),
    ("platforms.discord.gateway_url", "wss://gateway.example/", "https"),
]


@pytest.mark.parametrize(("field", "good", "other"), URL_FIELDS)
def test_urls_are_absolute_with_a_host_and_no_credentials(
    tmp_path: Path, field: str, good: str, other: str
) -> None:
    section: object = _load(tmp_path, _nested(field, good))
    for part in field.split("."):
        section = getattr(section, part)
    assert section == good
    scheme = good.split("://", 1)[0]
    for bad, problem in [
        (good.replace(f"{scheme}://", f"{other}://"), f"found the scheme {other}://"),
        (good.split("://")[1], "found no scheme"),
        (f"{scheme}:///v1", "has no host"),
        (good.replace("://", "://ops:hunter2-pw@"), "must not carry credentials"),
        (good.replace("://", "://tok3n@"), "must not carry credentials"),
        (good + " /x", "may not contain whitespace"),
        (good + "\n", "may not contain whitespace"),
        (f"{scheme}://host:99999/", "is not a valid URL"),
        (f"{scheme}://[::1/", "is not a valid URL"),
    ]:
        with pytest.raises(ConfigError) as info:
            _load(tmp_path, _nested(field, bad))
        (line,) = info.value.lines
        assert f": {field}: " in line and problem in line, (bad, line)
        assert "hunter2" not in line and "tok3n" not in line
        assert bad.strip() not in line  # the URL itself is never quoted


def test_chat_and_user_ids_are_integers_or_a_star(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "platforms:\n  telegram:\n    allowed_users: [123, '456', '*']\n"
        "    allowed_chats: [-1001234567890]\n    free_response_chats: ['-100']\n",
    )
    telegram = config.platforms.telegram
    assert telegram.allowed_users == ["123", "456", "*"]
    assert (telegram.allowed_chats, telegram.free_response_chats) == (["-1001234567890"], ["-100"])
    with pytest.raises(ConfigError) as info:
        _load(
            tmp_path,
            "platforms:\n  discord:\n"
            "    allowed_users: [alice, true, 1.5, '12a', '', ' 1', '**']\n",
        )
    assert [line.split(": ", 2)[1:] for line in info.value.lines] == [
        [f"platforms.discord.allowed_users[{i}]", f"expected a numeric id (Telegram group ids"
         f' are negative) or "*", got {shown}']
        for i, shown in enumerate(
            ["a string 'alice'", "a boolean True", "a number 1.5", "a string '12a'",
             "a string ''", "a string ' 1'", "a string '**'"]
        )
    ]  # fmt: skip


def test_admins_are_platform_and_numeric_user_id(tmp_path: Path) -> None:
    good = _load(tmp_path, "gateway:\n  admins: ['telegram:123', 'discord:1300000000000000001']\n")
    assert good.gateway.admins == ["telegram:123", "discord:1300000000000000001"]
    admins = ["telegram:123", "alice", "telegram:@alice", "slack:42", "discord:", " discord:1"]
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, f"gateway:\n  admins: {json.dumps(admins)}\n")
    assert [line.split(":2: ", 1)[1] for line in info.value.lines] == [
        "gateway.admins[1]: 'alice' is not platform:id (e.g. telegram:123456789)",
        "gateway.admins[2]: 'telegram:@alice' has a non-numeric id: telegram identifies"
        " people by their numeric user id, not their @username",
        "gateway.admins[3]: 'slack:42' names an unknown platform (known: telegram, discord)",
        "gateway.admins[4]: 'discord:' is not platform:id (e.g. telegram:123456789)",
        "gateway.admins[5]: ' discord:1' is not platform:id (e.g. telegram:123456789)",
    ]


def test_the_secrets_are_the_values_of_every_env_key_set() -> None:
    """What the log redactor hides: each ``*_env`` key's variable, disabled platforms too."""
    config = Config.model_validate(
        {"platforms": {"discord": {"token_env": "MY_DISCORD"}}, "model": {"api_key_env": "KEY"}}
    )
    environ = {
        "KEY": "sk-one",
        "TELEGRAM_BOT_TOKEN": "123:tg",
        "TELEGRAM_WEBHOOK_SECRET": "hook",
        "MY_DISCORD": "dc",
        "DISCORD_BOT_TOKEN": "not named by this config",
        "HOME": "/home/ada",
    }
    assert secrets_of(config, environ) == ["sk-one", "123:tg", "hook", "dc"]
    assert secrets_of(config, {"KEY": ""}) == []


def test_the_coordination_section(tmp_path: Path) -> None:
    default = Config().coordination
    assert (default.backend, default.redis_url_env, default.namespace, default.lease_ttl_s) == (
        "local",
        "MNEMO_REDIS_URL",
        "mnemo:",
        30.0,
    )
    config = _load(
        tmp_path,
        "coordination:\n  backend: redis\n  redis_url_env: BOT_A_REDIS\n"
        "  namespace: 'bot-a:'\n  lease_ttl_s: 10\n",
    )
    assert config.coordination.backend == "redis"
    assert config.coordination.redis_url_env == "BOT_A_REDIS"
    assert config.coordination.namespace == "bot-a:"
    assert config.coordination.lease_ttl_s == 10
    assert secrets_of(config, {"BOT_A_REDIS": "redis://:pw@h:6379/0"}) == ["redis://:pw@h:6379/0"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("backend: postgres", "coordination.backend: expected one of 'local' or 'redis'"),
        ("lease_ttl_s: 0.5", "coordination.lease_ttl_s: input should be greater than or equal"),
        ("lease_ttl_s: 601", "coordination.lease_ttl_s: input should be less than or equal"),
        ("namespace: ''", "coordination.namespace: string should have at least 1 character"),
        ("namespace: 'two words'", "coordination.namespace: string should match pattern"),
        ("url: redis://x", "coordination.url: unknown key (allowed here: backend, lease_ttl_s,"),
    ],
)
def test_a_bad_coordination_section_is_one_clear_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"coordination:\n  {text}\n")
    (line,) = caught.value.lines
    assert expected in line


def test_a_redis_url_pasted_as_the_variable_name_is_refused_unseen(tmp_path: Path) -> None:
    url = "redis://:s3cr3t-Passw0rd-very-long@10.0.0.5:6379/0"
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"coordination:\n  redis_url_env: '{url}'\n")
    (line,) = caught.value.lines
    assert "coordination.redis_url_env" in line
    assert "s3cr3t" not in line and "10.0.0.5" not in line
