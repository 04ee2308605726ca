"""``deploy/healthcheck.py`` (the image's HEALTHCHECK) against a real loopback HTTP server."""

from __future__ import annotations

import importlib.util
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import pytest

from tests import REPO_ROOT

ROOT = REPO_ROOT


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("healthcheck", ROOT / "deploy" / "healthcheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


healthcheck = _load()


class _Handler(BaseHTTPRequestHandler):
    status = 200
    body = b"ok\n"
    paths: list[str] = []  # noqa: RUF012 - shared on purpose: the test reads what was asked

    def do_GET(self) -> None:
        type(self).paths.append(self.path)
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    _Handler.status, _Handler.body, _Handler.paths = 200, b"ok\n", []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _configure(home: Path, listen: str | None) -> None:
    value = "null" if listen is None else f'"{listen}"'
    (home / "config.yaml").write_text(f"ops:\n  http:\n    listen: {value}\n", encoding="utf-8")


def test_healthy_when_healthz_answers_200_even_behind_a_proxy_setting(
    home: Path,
    server: ThreadingHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # must not be used
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    _configure(home, f"0.0.0.0:{server.server_address[1]}")
    assert healthcheck.main() == 0
    assert capsys.readouterr().out.startswith("healthy: http://127.0.0.1:")
    assert _Handler.paths == ["/healthz"]


def test_unhealthy_on_503_with_the_reasons(
    home: Path, server: ThreadingHTTPServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _Handler.status, _Handler.body = 503, b"unhealthy\ndiscord: disconnected\n"
    _configure(home, f"127.0.0.1:{server.server_address[1]}")
    assert healthcheck.main() == 1
    out = capsys.readouterr().out
    assert out.startswith("unhealthy: http://127.0.0.1:") and "/healthz: 503" in out
    assert out.rstrip().endswith("unhealthy discord: disconnected")


def test_unhealthy_when_nothing_listens(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _configure(home, f"127.0.0.1:{port}")
    assert healthcheck.main() == 1
    assert f"unhealthy: http://127.0.0.1:{port}/healthz: " in capsys.readouterr().out


def test_unhealthy_and_says_why_without_ops_http_listen(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(home, None)
    assert healthcheck.main() == 1
    assert capsys.readouterr().out == (
        "unhealthy: ops.http.listen is not set; the health check needs it (e.g. 0.0.0.0:9464)\n"
    )
    (home / "config.yaml").write_text("ops: [\n", encoding="utf-8")
    assert healthcheck.main() == 1
    assert "unhealthy: config error: " in capsys.readouterr().out


def test_wildcard_binds_are_asked_on_loopback() -> None:
    assert healthcheck.healthz_url("0.0.0.0:9464") == "http://127.0.0.1:9464/healthz"
    assert healthcheck.healthz_url("[::]:9464") == "http://[::1]:9464/healthz"
    assert healthcheck.healthz_url("[::1]:80") == "http://[::1]:80/healthz"
    assert healthcheck.healthz_url("10.0.0.5:9464") == "http://10.0.0.5:9464/healthz"
