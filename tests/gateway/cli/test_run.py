"""``mnemo run`` and ``mnemo pairing`` at the edges that need no platform: tokens, errors,
redaction. (Running against the emulators: tests/e2e.)"""

from __future__ import annotations

import json
import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.logs import DEMOTED, DROPPED, JsonFormatter, Redactor, TextFormatter, install


def write_config(home: Path, text: str) -> None:
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_a_missing_token_is_one_line_naming_the_variable(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.delenv("MY_DISCORD", raising=False)
    write_config(
        home,
        "platforms:\n  telegram: {enabled: true}\n"
        "  discord: {enabled: true, token_env: MY_DISCORD}\n",
    )
    assert main(["run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "TELEGRAM_BOT_TOKEN is not set" in err and "MY_DISCORD is not set" in err


def test_no_enabled_platform_says_how_to_enable_one(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run"]) == 2
    assert "platforms.telegram.enabled" in capsys.readouterr().err


@pytest.mark.usefixtures("root_logging")
def test_a_start_that_fails_is_one_error_line_and_exit_1(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ops endpoint's port is taken: nothing else starts, what did is closed again
    (``_serve``'s exit stack), and the reason is the last line."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-a-real-token")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write_config(
            home,
            "platforms:\n  telegram: {enabled: true}\n"
            "model: {base_url: 'http://127.0.0.1:9/v1'}\n"
            f"ops: {{http: {{listen: '127.0.0.1:{port}'}}}}\n",
        )
        assert main(["run"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("mnemo: error: could not start: ")
    assert not any("stopped cleanly" in line or "mnemo is running" in line for line in err)


REDIS_CONFIG = (
    "platforms:\n  telegram: {enabled: true}\n"
    "model: {base_url: 'http://127.0.0.1:9/v1'}\n"
    "coordination: {backend: redis, redis_url_env: BOT_REDIS}\n"
)


def test_the_redis_backend_without_its_url_is_one_line_and_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-a-real-token")
    monkeypatch.delenv("BOT_REDIS", raising=False)
    write_config(home, REDIS_CONFIG)
    assert main(["run"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == "mnemo: error: coordination.backend is redis but BOT_REDIS is not set"


def test_the_local_provider_on_postgres_is_one_line_and_exit_2(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The local provider keeps its vectors in one replica's state.db: refused before
    anything opens (it reached the provider's guard as a traceback)."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-a-real-token")
    monkeypatch.setenv("MNEMO_POSTGRES_DSN", "postgresql://nobody@127.0.0.1:9/none")
    write_config(
        home,
        "platforms:\n  telegram: {enabled: true}\n"
        "model: {base_url: 'http://127.0.0.1:9/v1'}\n"
        "storage: {backend: postgres}\nmemory: {provider: local}\n",
    )
    assert main(["run"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("mnemo: error: memory.provider is local but storage.backend is postgres")


@pytest.mark.usefixtures("root_logging")
def test_a_redis_that_does_not_answer_stops_run_with_one_line(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before any platform connects; the URL (and its password) is never shown."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:not-a-real-token")
    monkeypatch.setenv("BOT_REDIS", f"redis://:hunter2-pass@127.0.0.1:{port}/0")
    write_config(home, REDIS_CONFIG)
    assert main(["run"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "mnemo: error: coordination.backend is redis but the Redis at BOT_REDIS did not"
        " answer (ping: ConnectionError)"
    )
    assert "hunter2" not in err and str(port) not in err
    assert "mnemo is running" not in err


def test_the_redactor_hides_secrets_anywhere_in_a_record() -> None:
    token = "123456:AAE-secret-token-value"
    formatter = TextFormatter(Redactor([token, "sk-live-abcdef"]))
    try:
        raise RuntimeError(f"POST https://api.telegram.org/bot{token}/getUpdates failed")
    except RuntimeError:
        record = logging.LogRecord(
            "httpx", logging.INFO, __file__, 1, "url %s key %s", (token, "sk-live-abcdef"),
            sys.exc_info(),
        )  # fmt: skip
    text = formatter.format(record)
    assert token not in text and "sk-live-abcdef" not in text
    assert text.count("[redacted]") >= 3


def test_a_bot_token_inside_a_bot_api_url_is_redacted_by_its_shape() -> None:
    """No configured secret here: the credential shapes alone catch a token glued to
    ``/bot`` in a request URL (an HTTP client's debug line)."""
    token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"
    url = f"POST https://api.telegram.org/bot{token}/getUpdates"
    text = TextFormatter(Redactor([])).format(
        logging.LogRecord("httpx", logging.DEBUG, __file__, 1, "%s", (url,), None)
    )
    assert token not in text and "AAHdqTcv" not in text and "/bot[redacted]" in text


FORGED = "Eve\x1b[2J\x1b[31mRED\x1b[0m\u202eTXT.exe\n2026-12-01 12:00:00,000 ERROR mnemo: forged"


def test_a_text_log_record_is_one_line_whatever_it_carries() -> None:
    formatter = TextFormatter(Redactor([]))
    record = logging.LogRecord("mnemo", logging.INFO, __file__, 1, "hello %s", (FORGED,), None)
    text = formatter.format(record)
    assert "\n" not in text and "\x1b" not in text and "\u202e" not in text
    assert text.endswith("TXT.exe\\n2026-12-01 12:00:00,000 ERROR mnemo: forged")
    assert "\\x1b[2J" in text and "<U+202E>" in text


def test_a_json_log_record_names_bidi_characters_too() -> None:
    record = logging.LogRecord("mnemo", logging.INFO, __file__, 1, "%s", (FORGED,), None)
    line = JsonFormatter(Redactor([])).format(record)
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert json.loads(line)["message"].startswith("Eve\x1b[2J")  # JSON's own escape


def test_json_lines_parse_and_redact_configured_and_credential_shaped_secrets() -> None:
    formatter = JsonFormatter(Redactor(["configured-secret-value"]))
    leaked = "ghp_" + "a1B2" * 9
    record = logging.LogRecord(
        "mnemo", logging.WARNING, __file__, 1, "saw %s and %s in a message",
        ("configured-secret-value", leaked), None,
    )  # fmt: skip
    line = json.loads(formatter.format(record))
    assert line["level"] == "warning" and line["logger"] == "mnemo"
    assert "configured-secret-value" not in line["message"] and leaked not in line["message"]
    assert line["message"].count("[redacted]") == 2
    assert line["ts"].endswith("+00:00")


@pytest.fixture
def root_logging() -> Iterator[None]:
    """``logs.install`` reconfigures the root logger: put it back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    quiet = {name: list(logging.getLogger(name).filters) for name in DEMOTED.keys() | DROPPED}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, filters in quiet.items():
        logging.getLogger(name).filters[:] = filters


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
@pytest.mark.usefixtures("root_logging")
def test_library_chatter_is_debug_and_voice_warnings_are_dropped(
    level: int, capsys: pytest.CaptureFixture[str]
) -> None:
    install([], level=level)
    install([], level=level)  # twice: one filter per logger all the same
    for name in DEMOTED:
        quiet = [f for f in logging.getLogger(name).filters if type(f).__name__ == "_Quiet"]
        assert len(quiet) == 1, name
    logging.getLogger("httpx").info('HTTP Request: POST %s "HTTP/1.1 200 OK"', "http://x/getMe")
    logging.getLogger("telegram.ext.Application").info("Application started")
    logging.getLogger("telegram.ext.Application").info("Something else happened")
    logging.getLogger("discord.client").warning(
        "PyNaCl is not installed, voice will NOT be supported"
    )
    logging.getLogger("discord.client").warning("Application has an interaction endpoint URL")
    lines = capsys.readouterr().err.splitlines()
    kept = [line.split(" ", 2)[2] for line in lines]  # without the time stamp
    expected = [
        "INFO telegram.ext.Application: Something else happened",
        "WARNING discord.client: Application has an interaction endpoint URL",
    ]
    if level == logging.DEBUG:
        expected[:0] = [
            'DEBUG httpx: HTTP Request: POST http://x/getMe "HTTP/1.1 200 OK"',
            "DEBUG telegram.ext.Application: Application started",
        ]
    assert kept == expected
