"""Shared fixtures: every test runs hermetically in its own temporary home."""

from __future__ import annotations

import atexit
import gc
import os
import re
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import certifi
import pytest

from memory.archive.database import Archive


def _one_ca_certificate() -> str:
    """A file holding one CA certificate (the first of certifi's bundle), removed at exit.

    No test speaks TLS (every server is plain HTTP on loopback), yet every HTTP client the
    code under test builds loads the whole CA bundle named by SSL_CERT_FILE (or certifi's)
    into a fresh SSL context: ~25 ms of CPU apiece, and a run builds hundreds (the
    Telegram library makes two clients per bot, the openai SDK one per model, aiohttp one
    at import), in this process and in every mnemo process a test starts. One certificate
    is read in well under a millisecond; the libraries take the same code path."""
    bundle = Path(certifi.where()).read_text(encoding="utf-8")
    first = re.search(r"-----BEGIN CERTIFICATE-----\n.*?-----END CERTIFICATE-----\n", bundle, re.S)
    assert first is not None, certifi.where()
    handle, name = tempfile.mkstemp(prefix="mnemo-tests-", suffix=".pem")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(first.group())
    atexit.register(os.unlink, name)
    return name


# Set before any test module is imported: aiohttp builds its default context at import.
# Child processes inherit it. (httpx and the openai SDK's client read it before SSL_CERT_DIR.)
os.environ["SSL_CERT_FILE"] = _one_ca_certificate()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built lives until the run ends: every test module, the libraries they
    import (the openai SDK alone is thousands of classes), the test items. Moved out of the
    cyclic garbage collector's sight, each full collection during the run no longer walks it
    (that was over a second of CPU per process). Garbage left by the imports goes first."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh MNEMO_HOME (also exported, so code that reads the environment agrees)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("MNEMO_HOME", str(path))
    return path


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[Archive]:
    """A real archive (SQLite file) in the test's temporary directory."""
    async with await Archive.open(tmp_path / "state.db") as opened:
        yield opened


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set to a common (022) and the most open (000) value, restored after.

    Files and folders of ours must come out private under either."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


# PostgreSQL and Redis for the scale-out tests (skipped, saying how, where they do not answer);
# the archive on both backends (``archive_store``); curated memory, skills and pairing on both
# (``storage``).
pytest_plugins = ["tests.services", "tests.archives", "tests.stores"]
