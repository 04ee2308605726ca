"""``mnemo init`` / ``mnemo config check|example``, the generated config and the preflight."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.cli import main
from gateway.cli.preflight import check_environment
from gateway.config import doc as config_doc
from gateway.config.doc import commented_config, key_paths
from gateway.config.schema import Config, load_config, resolve_paths

ENV_NAMES = (
    "OPENAI_API_KEY",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "MNEMO_HOME",
    "TELEGRAM_WEBHOOK_SECRET",
)
TG_TOKEN = "123456:fake-telegram-token-abcdef"
DC_TOKEN = "fake.discord.token-0123456789"
API_KEY = "sk-test-fake-api-key-0123456789"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def config(**sections: Any) -> Config:
    return Config.model_validate(sections)


# -- init ---------------------------------------------------------------------------------


def test_init_creates_a_private_home_with_the_commented_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "deep" / "home"
    code, out, err = run("--home", str(home), "init", capsys=capsys)
    assert (code, err) == (0, "")
    assert mode(home) == 0o700
    assert mode(home / "memories") == 0o700
    assert mode(home / "skills") == 0o700
    assert mode(home / "config.yaml") == 0o600
    assert (home / "config.yaml").read_text(encoding="utf-8") == commented_config()
    for step in ("OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN"):
        assert step in out
    for command in ("config check", "chat --dry-run", "run"):
        assert f"mnemo --home {home} {command}" in out
    assert load_config(resolve_paths(home, None, {})) == Config()


def test_init_never_overwrites_but_still_makes_missing_folders(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.chmod(0o700)
    mine = "model:\n  name: my-model\n"
    (home / "config.yaml").write_text(mine, encoding="utf-8")
    code, out, err = run("init", capsys=capsys)  # the home comes from $MNEMO_HOME
    assert (code, out) == (1, "")
    assert err == (
        f"mnemo: {home / 'config.yaml'} already exists; not overwritten"
        " (`mnemo config example` prints a fresh commented copy to compare)\n"
    )
    assert (home / "config.yaml").read_text(encoding="utf-8") == mine
    assert mode(home / "memories") == 0o700 and mode(home / "skills") == 0o700
    assert run("init", capsys=capsys)[0] == 1  # and again: still nothing replaced


def test_init_twice_keeps_the_first_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "h"
    assert run("--home", str(home), "init", capsys=capsys)[0] == 0
    (home / "config.yaml").write_text("memory:\n  scope: shared\n", encoding="utf-8")
    assert run("--home", str(home), "init", capsys=capsys)[0] == 1
    assert load_config(resolve_paths(home, None, {})).memory.scope == "shared"


def test_init_warns_when_an_existing_home_is_open_to_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "open"
    home.mkdir()
    home.chmod(0o755)
    code, _, err = run("--home", str(home), "init", capsys=capsys)
    assert code == 0
    assert "is open to other users (mode 755)" in err and "chmod 700" in err
    assert mode(home) == 0o755  # a folder the operator made is theirs: warned, not changed


def test_init_reports_a_home_it_cannot_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "memories").write_text("a file where a folder belongs", encoding="utf-8")
    code, out, err = run("--home", str(tmp_path), "init", capsys=capsys)
    assert (code, out) == (1, "")
    assert err == f"mnemo: cannot create {tmp_path / 'memories'}: File exists\n"
    assert not (tmp_path / "config.yaml").exists()


# -- the generated config -----------------------------------------------------------------


def _leaves(data: dict[str, Any], prefix: str = "") -> set[str]:
    found: set[str] = set()
    for key, value in data.items():
        if isinstance(value, dict):
            found |= _leaves(value, f"{prefix}{key}.")
        else:
            found.add(prefix + key)
    return found


def test_generated_config_loads_to_exactly_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(commented_config(), encoding="utf-8")
    assert load_config(resolve_paths(tmp_path, None, {})) == Config()


def _commented_leaves(text: str) -> dict[str, str]:
    """Dotted key path -> the comment right above it, read by indentation."""
    found: dict[str, str] = {}
    stack: list[str] = []
    comment: list[str] = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        depth = (len(line) - len(body)) // 2
        if body.startswith("# "):
            comment.append(body[2:])
            continue
        key, colon, value = body.partition(":")
        if colon:
            stack = stack[:depth]
            if value:
                found[".".join([*stack, key])] = " ".join(comment)
            else:
                stack.append(key)
        comment = []
    return found


def test_generated_config_lists_every_key_with_its_meaning() -> None:
    text = commented_config()
    paths = key_paths()
    assert len(paths) >= 40 and "platforms.telegram.webhook_url" in paths
    assert _leaves(yaml.safe_load(text)) == set(paths)
    comments = _commented_leaves(text)
    assert set(comments) == set(paths)
    for path in paths:
        *parents, name = path.split(".")
        model: Any = Config
        for part in parents:
            model = model.model_fields[part].annotation
        description = model.model_fields[name].description
        assert description, f"{path} has no attribute docstring"
        first_words = " ".join(description.replace("``", "`").split()[:5])
        assert comments[path].startswith(first_words), path
    assert max(len(line) for line in text.splitlines()) <= 100


def test_generated_config_shows_choices_bounds_and_quoted_values() -> None:
    text = commented_config()
    assert "(one of: polling, webhook)" in text
    assert "  # Turns running at once across all chats. (> 0; <= 1000)\n" in text
    assert "  notify: 'off'\n" in text  # unquoted, YAML would read false
    assert "    allowed_users: []\n" in text and "  base_url: null\n" in text


def test_generated_comments_speak_yaml_not_python() -> None:
    """Issue 12 §6: a comment says `null` where the value under it is null, never `None`."""
    text = commented_config()
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    for line in comments:
        assert not re.search(r"\b(None|True|False)\b", line), line
    assert "  # OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (null: OpenAI" in text


def test_docstrings_are_translated_to_yaml_words() -> None:
    assert config_doc._clean("``True`` turns it on; None means\n  unset") == (
        "`true` turns it on; null means unset"
    )


def test_config_example_prints_the_generated_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--home", str(tmp_path), "config", "example", capsys=capsys) == (
        0,
        commented_config(),
        "",
    )


# -- check_environment --------------------------------------------------------------------

GOOD = {
    "platforms": {
        "telegram": {"enabled": True, "mode": "webhook", "webhook_url": "https://bot.example/h"},
        "discord": {"enabled": True},
    },
    "gateway": {"admins": ["telegram:123", "discord:1300000000000000001"]},
    "ops": {"http": {"listen": "0.0.0.0:9464"}},
}
WEBHOOK_SECRET = "a-webhook-secret_0123456789"
GOOD_ENV = {
    "TELEGRAM_BOT_TOKEN": TG_TOKEN,
    "DISCORD_BOT_TOKEN": DC_TOKEN,
    "OPENAI_API_KEY": API_KEY,
    "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
}


def test_a_complete_setup_has_no_problems() -> None:
    assert check_environment(config(**GOOD), GOOD_ENV) == []
    local = config(model={"base_url": "http://127.0.0.1:11434/v1"})
    assert check_environment(local, {}) == []  # a local server needs no key
    assert check_environment(config(ops={"http": {"listen": "[::1]:9464"}}), GOOD_ENV) == []


def test_missing_tokens_name_the_variable_never_a_value() -> None:
    env = {**GOOD_ENV, "TELEGRAM_BOT_TOKEN": "  "}  # blank counts as unset
    del env["DISCORD_BOT_TOKEN"]
    problems = check_environment(config(**GOOD), env)
    assert problems == [
        "platforms.telegram is enabled but TELEGRAM_BOT_TOKEN is not set"
        " (the bot token; set it in the environment, never in the file)",
        "platforms.discord is enabled but DISCORD_BOT_TOKEN is not set"
        " (the bot token; set it in the environment, never in the file)",
    ]
    disabled = config(platforms={"telegram": {"enabled": False}})
    assert check_environment(disabled, {"OPENAI_API_KEY": API_KEY}) == []
    custom = config(platforms={"discord": {"enabled": True, "token_env": "MY_DC"}})
    assert "MY_DC is not set" in check_environment(custom, {"OPENAI_API_KEY": API_KEY})[0]


def test_no_model_endpoint() -> None:
    (problem,) = check_environment(config(), {})
    assert problem.startswith(
        "no model endpoint: OPENAI_API_KEY is not set and model.base_url is empty"
    )
    (problem,) = check_environment(config(model={"api_key_env": "GROQ_KEY"}), GOOD_ENV)
    assert "GROQ_KEY is not set" in problem
    assert check_environment(config(model={"api_key_env": "GROQ_KEY"}), {"GROQ_KEY": "k"}) == []
    # a base_url that is no http(s) URL, an admin entry that can never match and an http
    # webhook_url are refused by the loader already (tests/gateway/config/test_config.py)


def test_webhook_mode_needs_a_public_https_url() -> None:
    hook = {"enabled": True, "mode": "webhook"}
    (problem,) = check_environment(config(platforms={"telegram": hook}), GOOD_ENV)
    assert problem.startswith(
        "platforms.telegram.mode is webhook but platforms.telegram.webhook_url is empty"
    )
    off = {"enabled": False, "mode": "webhook"}  # a disabled platform is not checked
    assert check_environment(config(platforms={"telegram": off}), GOOD_ENV) == []


def test_the_postgres_backend_needs_its_connection_string_never_echoed() -> None:
    shared = config(storage={"backend": "postgres"})
    (problem,) = check_environment(shared, GOOD_ENV)
    assert problem.startswith("storage.backend is postgres but MNEMO_POSTGRES_DSN is not set")
    secret = "mysql://mnemo:s3cret-Pa55@db/mnemo"
    (problem,) = check_environment(shared, {**GOOD_ENV, "MNEMO_POSTGRES_DSN": secret})
    assert problem.startswith("MNEMO_POSTGRES_DSN is not a PostgreSQL connection string")
    assert "s3cret" not in problem
    good = {**GOOD_ENV, "MNEMO_POSTGRES_DSN": "postgresql://mnemo:s3cret-Pa55@db/mnemo"}
    assert check_environment(shared, good) == []
    assert check_environment(config(), {**GOOD_ENV, "MNEMO_POSTGRES_DSN": "x"}) == []  # sqlite
    local = config(storage={"backend": "postgres"}, memory={"provider": "local"})
    (problem,) = check_environment(local, good)
    assert problem.startswith("memory.provider is local but storage.backend is postgres")


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        (None, "platforms.telegram.mode is webhook but MY_HOOK_SECRET is not set (the secret"),
        ("", "platforms.telegram.mode is webhook but MY_HOOK_SECRET is not set (the secret"),
        ("has spaces; and more", "MY_HOOK_SECRET is not a webhook secret Telegram accepts"),
        ("x" * 257, "MY_HOOK_SECRET is not a webhook secret Telegram accepts"),
    ],
)
def test_webhook_mode_needs_a_secret_telegram_accepts_and_never_shows_it(
    secret: str | None, expected: str
) -> None:
    hook = {
        "enabled": True, "mode": "webhook", "webhook_url": "https://bot.example/h",
        "webhook_secret_env": "MY_HOOK_SECRET",
    }  # fmt: skip
    env = {**GOOD_ENV} | ({} if secret is None else {"MY_HOOK_SECRET": secret})
    (problem,) = check_environment(config(platforms={"telegram": hook}), env)
    assert problem.startswith(expected)
    assert not secret or secret not in problem
    good = env | {"MY_HOOK_SECRET": "A-z_09" * 42}  # 252 characters
    assert check_environment(config(platforms={"telegram": hook}), good) == []
    polling = hook | {"mode": "polling"}  # polling needs no secret
    assert check_environment(config(platforms={"telegram": polling}), env) == []


@pytest.mark.parametrize("listen", ["9464", ":9464", "localhost:http", "::1:9464", "h:99999"])
def test_listen_must_be_host_and_port(listen: str) -> None:
    (problem,) = check_environment(config(ops={"http": {"listen": listen}}), GOOD_ENV)
    assert problem.startswith("ops.http.listen: ")


def test_the_redis_backend_needs_its_url_variable_never_shows_it() -> None:
    redis = config(coordination={"backend": "redis", "redis_url_env": "BOT_REDIS"})
    (problem,) = check_environment(redis, GOOD_ENV)
    assert problem == (
        "coordination.backend is redis but BOT_REDIS is not set"
        " (the Redis URL; set it in the environment, never in the file)"
    )
    url = "redis://:hunter2-password@10.0.0.5:6379/0"
    assert check_environment(redis, {**GOOD_ENV, "BOT_REDIS": url}) == []
    assert check_environment(config(), {"OPENAI_API_KEY": API_KEY}) == []  # local: nothing


# -- mnemo config check -------------------------------------------------------------------


def _write(home: Path, data: dict[str, Any]) -> Path:
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_config_check_all_good(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(home, GOOD)
    for name, value in GOOD_ENV.items():
        monkeypatch.setenv(name, value)
    code, out, err = run("config", "check", capsys=capsys)
    assert (code, err) == (0, "")
    assert out == (
        f"config OK: {path}\n"
        "platforms: telegram (webhook), discord; model: gpt-4o-mini at OpenAI; memory: person;"
        " admins: 2; http: 0.0.0.0:9464\n"
    )


def test_config_check_without_a_file_reports_the_defaults(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    code, out, _ = run("config", "check", capsys=capsys)
    assert code == 0
    assert out.splitlines()[0] == f"config OK: {home / 'config.yaml'} (no file: built-in defaults)"
    assert "platforms: none enabled (mnemo chat only)" in out


def test_config_check_prints_one_line_per_problem_and_no_secret(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = {
        "platforms": {
            "telegram": {"enabled": True, "mode": "webhook"},
            "discord": {"enabled": True},
        },
    }
    _write(home, bad)
    monkeypatch.setenv("DISCORD_BOT_TOKEN", DC_TOKEN)
    code, out, err = run("config", "check", capsys=capsys)
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 4 and all(line.startswith("mnemo: config check: ") for line in lines)
    assert "TELEGRAM_BOT_TOKEN is not set" in lines[0]
    assert "no model endpoint: OPENAI_API_KEY is not set" in lines[1]
    assert "webhook_url is empty" in lines[2]
    assert "webhook but TELEGRAM_WEBHOOK_SECRET is not set" in lines[3]
    assert DC_TOKEN not in err


def test_config_check_refuses_credentials_in_the_base_url_without_showing_them(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(home, {"model": {"base_url": "https://user:pw-secret@llm.example/v1"}})
    code, out, err = run("config", "check", capsys=capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"mnemo: config error: {path}:2: model.base_url: must not carry credentials"
        " (user:password@…): keep secrets in the environment, never in config.yaml\n"
    )


# A bot token pasted where the variable's NAME belongs. Not one the log redactor's pattern
# knows (that wants digits, ':AA' and 33 more), so nothing but the loader keeps it back.
PASTED = "987654321:XYZdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize(
    "command",
    [["config", "check"], ["init"], ["doctor"], ["doctor", "--json"], ["run"],
     ["chat", "--dry-run"]],
)  # fmt: skip
def test_a_token_in_token_env_is_refused_by_every_command_and_never_shown(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    log_format: str,
) -> None:
    path = home / "config.yaml"
    path.write_text(
        f"ops:\n  log_format: {log_format}\nplatforms:\n  telegram:\n    enabled: true\n"
        f"    token_env: {PASTED}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    code, out, err = run(*command, capsys=capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"mnemo: config error: {path}:6: platforms.telegram.token_env: this looks like a token"
        " itself: put the NAME of an environment variable here\n"
    )
    assert PASTED.split(":")[1][:8] not in out + err
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]  # nothing was started


def test_config_check_rejects_an_invalid_file_with_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.yaml").write_text("gateway:\n  admin: []\n", encoding="utf-8")
    code, out, err = run("config", "check", capsys=capsys)
    assert (code, out) == (2, "")
    assert "gateway.admin: unknown key" in err
