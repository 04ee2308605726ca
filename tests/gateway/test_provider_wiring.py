"""``memory.provider`` from the config to a started provider (gateway/provider.py) and the
operator's view of it, against the loopback Honcho and Mem0 fakes (tests/fakes/)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.config import Config, ConfigError
from gateway.provider import open_provider, recall_settings
from memory.archive.database import Archive
from memory.providers import Subject
from tests.fakes.honcho_server import FakeHoncho
from tests.memory.providers.conftest import API_KEY

pytest.importorskip("honcho", reason="the honcho extra: pip install 'mnemo[honcho]'")


def configured(**memory: object) -> Config:
    return Config.model_validate({"memory": memory})


async def test_none_opens_nothing_and_the_options_reach_the_agent(archive: Archive) -> None:
    async with open_provider(configured(), archive=archive, model=None) as provider:
        assert provider is None
    options = {"prefetch_timeout_ms": 120, "context_chars": 400, "timeout_s": 2.5}
    settings = recall_settings(configured(provider="local", provider_options=options))
    assert (settings.prefetch_timeout_ms, settings.context_chars, settings.timeout_s) == (
        120,
        400,
        2.5,
    )


async def test_honcho_is_built_from_the_config_and_the_key_from_the_environment(
    archive: Archive,
) -> None:
    async with FakeHoncho(api_key=API_KEY) as server:
        config = configured(
            provider="honcho",
            provider_options={"honcho": {"base_url": server.base_url, "workspace": "team"}},
        )
        environ = {"HONCHO_API_KEY": API_KEY}
        async with open_provider(config, archive=archive, model=None, environ=environ) as p:
            assert p is not None and p.name == "honcho"
            assert await p.context(Subject("telegram-1")) == ""
        assert server.requests and all(r.path.startswith("/v3/") for r in server.requests)
        assert "team" in str([r.path for r in server.requests] + [r.body for r in server.requests])


async def test_a_provider_that_cannot_be_built_is_a_config_error(archive: Archive) -> None:
    config = configured(provider="mem0")
    with pytest.raises(ConfigError, match="MEM0_API_KEY is not set"):
        async with open_provider(config, archive=archive, model=None, environ={}):
            pass
    with pytest.raises(ConfigError, match="HONCHO_API_KEY is not set"):
        async with open_provider(configured(provider="honcho"), archive=archive, model=None,
                                 environ={}):  # fmt: skip
            pass
    bad = configured(
        provider="honcho",
        provider_options={"honcho": {"workspace": "a b", "base_url": "http://127.0.0.1:9"}},
    )
    with pytest.raises(ConfigError, match=r"memory\.provider: honcho"):
        async with open_provider(bad, archive=archive, model=None, environ={}):
            pass


async def test_provider_status_says_whether_the_service_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("HONCHO_API_KEY", API_KEY)
    async with FakeHoncho(api_key=API_KEY) as server:
        (home / "config.yaml").write_text(
            f"memory:\n  provider: honcho\n  provider_options:\n"
            f"    honcho:\n      base_url: {server.base_url}\n"
        )
        code = await _main(home, "provider", "status")
        out = capsys.readouterr().out
        assert code == 0 and "reachable   True" in out and API_KEY not in out
    code = await _main(home, "provider", "status")  # the server is gone
    out = capsys.readouterr().out
    assert code == 1 and "reachable   False" in out and API_KEY not in out


async def _main(home: Path, *argv: str) -> int:
    return await asyncio.to_thread(main, ["--home", str(home), *argv])
