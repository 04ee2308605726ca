"""Config loading: defaults, overrides, and one clear line per problem (exit 2 in the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.config import Config, ConfigError, load_config, resolve_paths


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
        config.memory.scope = "person"  # type: ignore[misc]


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
            "memory:\n  colour: blue\n",
            "memory.colour: unknown key (allowed here: group_scope, memory_char_limit, notify,"
            " review, scope, user_char_limit, write_approval)",
        ),
        (
            "memroy:\n  scope: shared\n",
            "memroy: unknown key (allowed here:"
            " agent, compression, gateway, memory, model, ops, platforms, skills)",
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
    from gateway.app import agent_settings

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
