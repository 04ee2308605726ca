"""``deploy/``: the example config, the systemd unit, the Dockerfile, compose and the env file
are checked against the code they describe, so none of them can rot quietly."""

from __future__ import annotations

import configparser
import fnmatch
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.config.doc import commented_config
from gateway.config.schema import Config, GatewayConfig, load_config, resolve_paths
from tests import REPO_ROOT

ROOT = REPO_ROOT
DEPLOY = ROOT / "deploy"
DRAIN_S = GatewayConfig().drain_timeout_s
REGENERATE = "python -m gateway config example > deploy/config.example.yaml"


# -- config.example.yaml ------------------------------------------------------------------


def test_config_example_is_the_generated_config_and_loads() -> None:
    path = DEPLOY / "config.example.yaml"
    assert path.read_text(encoding="utf-8") == commented_config(), f"regenerate: {REGENERATE}"
    assert REGENERATE in path.read_text(encoding="utf-8")
    assert load_config(resolve_paths(None, path, {})) == Config()


# -- mnemo.service ------------------------------------------------------------------------


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DEPLOY / "mnemo.service", encoding="utf-8")
    return parser


def test_systemd_unit_runs_mnemo_with_a_drain_and_hardening() -> None:
    unit = _unit()
    service = unit["Service"]
    expected = {
        "Type": "simple",
        "User": "mnemo",
        "EnvironmentFile": "/etc/mnemo/env",
        "ExecStart": "/opt/mnemo/.venv/bin/mnemo --home /var/lib/mnemo run",
        "Restart": "on-failure",
        "KillSignal": "SIGTERM",
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "ReadWritePaths": "/var/lib/mnemo",
    }
    assert {key: service.get(key) for key in expected} == expected
    assert float(service["TimeoutStopSec"]) > DRAIN_S
    home = service["ExecStart"].split("--home ")[1].split()[0]
    assert home in service["ReadWritePaths"].split()  # the only writable place is the home
    assert service["StateDirectory"] == Path(home).name  # systemd creates /var/lib/<that>
    assert service["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    assert "network-online.target" in unit["Unit"]["After"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # verify checks that ExecStart's binary exists: point it at this venv's mnemo
    text = (DEPLOY / "mnemo.service").read_text(encoding="utf-8")
    mnemo = Path(sys.executable).parent / "mnemo"
    unit = tmp_path / "mnemo.service"
    unit.write_text(text.replace("/opt/mnemo/.venv/bin/mnemo", str(mnemo)), encoding="utf-8")
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    # verify only warns (exit 0) on unknown keys and bad values: read what it says about us
    said = [line for line in (done.stdout + done.stderr).splitlines() if "mnemo.service" in line]
    assert done.returncode == 0 and said == [], done.stdout + done.stderr


# -- Dockerfile and .dockerignore ---------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    found = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def _one(keyword: str) -> str:
    (value,) = [rest for kw, rest in _instructions() if kw == keyword]
    return value


def test_dockerfile_is_slim_non_root_with_a_volume_and_a_health_check() -> None:
    steps = _instructions()
    assert steps[0] == ("FROM", "python:3.11-slim")
    user = _one("USER")
    assert user not in ("root", "0") and user == "mnemo"
    keywords = [kw for kw, _ in steps]
    assert keywords.index("USER") < keywords.index("CMD")  # the command runs as mnemo
    assert _one("VOLUME") == "/data"
    assert "MNEMO_HOME=/data" in _one("ENV")
    assert _one("EXPOSE") == "9464"
    assert json.loads(_one("CMD")) == ["mnemo", "run"]
    health = _one("HEALTHCHECK")
    assert "CMD " in health
    command = json.loads(health.split("CMD ", 1)[1])
    assert command[0] == "python" and command[1].endswith("/healthcheck.py")
    timeout = re.search(r"--timeout=(\d+)s", health)
    assert timeout is not None and int(timeout.group(1)) > 5  # healthcheck.TIMEOUT_S fits
    installs = [rest for kw, rest in steps if kw == "RUN" and "pip install" in rest]
    assert installs and all("[dev]" not in rest and "-e " not in rest for rest in installs)


def _copy_sources() -> list[str]:
    sources = []
    for keyword, rest in _instructions():
        if keyword == "COPY":
            sources += [part for part in rest.split()[:-1] if not part.startswith("--")]
    return sources


def test_dockerfile_copies_everything_the_package_build_needs() -> None:
    sources = _copy_sources()
    for source in sources:
        assert (ROOT / source).exists(), source
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    needed = {project["project"]["readme"], *project["project"].get("license-files", [])}
    needed |= {"pyproject.toml"}
    needed |= {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert needed <= set(sources), needed - set(sources)


def _ignored(path: str) -> bool:
    """Docker's rule for a context path: the last matching pattern wins, ``!`` re-includes."""
    ignored = False
    text = (ROOT / ".dockerignore").read_text(encoding="utf-8")
    for raw in text.splitlines():
        rule = raw.strip()
        if not rule or rule.startswith("#"):
            continue
        negate = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if pattern.startswith("**/"):
            tails = [
                "/".join(parts[i : j + 1]) for i in range(len(parts)) for j in range(i, len(parts))
            ]
            hit = any(fnmatch.fnmatchcase(t, pattern[3:]) for t in tails)
        else:
            hit = any(fnmatch.fnmatchcase(p, pattern) for p in prefixes)
        if hit:
            ignored = not negate
    return ignored


@pytest.mark.parametrize(
    ("path", "ignored"),
    [
        (".venv/bin/python", True),
        (".git/HEAD", True),
        ("tests/memory/scan/corpus/x.json", True),
        ("mnemo.egg-info/PKG-INFO", True),
        ("deploy/mnemo.env", True),  # secrets never enter an image
        ("deploy/config.yaml", True),
        (".mypy_cache/3.11/x.json", True),
        ("gateway/__pycache__/cli.cpython-311.pyc", True),
        ("gateway/cli/__init__.py", False),
        ("memory/archive/database.py", False),
        ("deploy/healthcheck.py", False),
        ("pyproject.toml", False),
    ],
)
def test_dockerignore_keeps_the_context_to_the_sources(path: str, ignored: bool) -> None:
    assert _ignored(path) is ignored


def test_every_copied_path_is_in_the_build_context() -> None:
    for source in _copy_sources():
        probe = source if (ROOT / source).is_file() else f"{source}/__init__.py"
        assert not _ignored(probe), source


# -- compose.yaml and the env file --------------------------------------------------------


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(s|m)", value)
    assert match, value
    return int(match.group(1)) * (60 if match.group(2) == "m" else 1)


def test_compose_runs_the_gateway_with_its_volume_env_file_and_config() -> None:
    compose = _compose()
    gateway = compose["services"]["mnemo"]
    assert (DEPLOY / gateway["build"]["context"] / gateway["build"]["dockerfile"]).is_file()
    assert gateway["restart"] == "unless-stopped"
    assert gateway["env_file"] == "mnemo.env"
    assert "mnemo-data:/data" in gateway["volumes"]
    assert "mnemo-data" in compose["volumes"]
    (config,) = [v for v in gateway["volumes"] if isinstance(v, dict)]
    assert config["target"] == "/data/config.yaml" and config["read_only"] is True
    assert config["bind"]["create_host_path"] is False
    assert "healthcheck" not in gateway  # the image's HEALTHCHECK applies
    assert _seconds(gateway["stop_grace_period"]) > DRAIN_S
    assert "127.0.0.1:9464:9464" in gateway["ports"]
    assert set(compose["services"]) == {"mnemo"}  # the model server is an opt-in comment


def test_compose_documents_the_optional_local_model_server() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    assert "# ollama:" in text and "image: ollama/ollama" in text
    assert 'base_url: "http://ollama:11434/v1"' in text
    assert "ops.http.listen: 0.0.0.0:9464" in text


def test_env_example_names_every_secret_variable_and_holds_none() -> None:
    defaults = Config()
    wanted = {
        defaults.model.api_key_env,
        defaults.platforms.telegram.token_env,
        defaults.platforms.telegram.webhook_secret_env,
        defaults.platforms.discord.token_env,
        defaults.storage.postgres.dsn_env,
        defaults.coordination.redis_url_env,
    }
    named: dict[str, str] = {}
    for line in (DEPLOY / "mnemo.env.example").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"#? ?([A-Z][A-Z0-9_]*)=(.*)", line)
        if match:
            named[match.group(1)] = match.group(2)
    assert set(named) == wanted
    assert all(value == "" for value in named.values())


# -- compose.replicas.yaml ----------------------------------------------------------------


def test_replicas_compose_runs_three_gateways_on_postgres_and_redis_behind_a_proxy() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.replicas.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    replicas = [name for name in services if name.startswith("mnemo-")]
    assert replicas == ["mnemo-1", "mnemo-2", "mnemo-3"]
    for name in replicas:
        replica = services[name]
        assert replica["build"]["args"]["MNEMO_EXTRAS"] == "postgres,redis"
        assert replica["env_file"] == "mnemo.env"
        assert replica["environment"]["MNEMO_REDIS_URL"] == "redis://redis:6379/0"
        assert {k: v["condition"] for k, v in replica["depends_on"].items()} == {
            "postgres": "service_healthy",
            "redis": "service_healthy",
        }
        assert _seconds(replica["stop_grace_period"]) > DRAIN_S
    assert services["postgres"]["image"].startswith("postgres:15")
    assert "POSTGRES_PASSWORD" not in str(services["postgres"].get("environment"))  # a file
    assert services["redis"]["image"].startswith("redis:7")
    conf = (DEPLOY / "nginx.replicas.conf").read_text(encoding="utf-8")
    assert [f"server {name}:8443;" for name in replicas] == re.findall(
        r"server mnemo-\d:8443;", conf
    )
    assert "location = /telegram" in conf and "non_idempotent" in conf


def test_the_replicas_config_loads_and_passes_preflight_with_its_environment() -> None:
    from gateway.cli.preflight import check_environment

    config = load_config(resolve_paths(None, DEPLOY / "config.replicas.yaml", {}))
    assert config.storage.backend == "postgres" and config.coordination.backend == "redis"
    telegram = config.platforms.telegram
    assert telegram.mode == "webhook" and telegram.webhook_port == 8443
    environ = {
        "TELEGRAM_BOT_TOKEN": "123456:" + "A" * 35,
        "TELEGRAM_WEBHOOK_SECRET": "a-secret_0123",
        "OPENAI_API_KEY": "sk-not-used",
        "MNEMO_POSTGRES_DSN": "postgresql://mnemo:pw@postgres:5432/mnemo",
        "MNEMO_REDIS_URL": "redis://redis:6379/0",
    }
    assert check_environment(config, environ) == []
