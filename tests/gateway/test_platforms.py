"""The platform registry: one entry per ``platforms.<name>`` section, and the only place
``mnemo run``, ``mnemo doctor`` and the wiring learn which platforms exist."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from adapters.base import Adapter
from adapters.discord import DiscordAdapter
from adapters.telegram import TelegramAdapter
from agent_core.models.scripted import ScriptedModel, echo
from gateway import people
from gateway.cli.common import UsageError
from gateway.cli.doctor import run_checks
from gateway.cli.run import adapters_for, forced_polling
from gateway.config import Config, Paths, PlatformConfig, TelegramConfig
from gateway.config.schema import PlatformsConfig
from gateway.platforms import PLATFORMS, Platform
from gateway.wiring import access, build_gateway, gateway_settings
from memory.archive.database import Archive
from tests.gateway.harness import ChatAdapter

TOKEN = "123456:registry-test-token"


def test_every_platform_section_has_one_entry_and_every_entry_a_section() -> None:
    assert list(PLATFORMS) == list(PlatformsConfig.model_fields)
    for name in PLATFORMS:
        section = PlatformsConfig.model_fields[name].annotation
        assert isinstance(section, type) and issubclass(section, PlatformConfig)
    assert set(PLATFORMS) < set(people.PLATFORMS)  # their people can be named in the shell


def test_the_entries_build_the_real_adapters_from_their_sections() -> None:
    config = Config.model_validate(
        {"platforms": {"telegram": {"enabled": True}, "discord": {"enabled": True}}}
    )
    made = adapters_for(config, {"TELEGRAM_BOT_TOKEN": TOKEN, "DISCORD_BOT_TOKEN": TOKEN})
    assert {name: type(adapter).__name__ for name, adapter in made.items()} == {
        "telegram": "TelegramAdapter",
        "discord": "DiscordAdapter",
    }
    assert all(adapter.platform == name for name, adapter in made.items())


WEBHOOK = {
    "enabled": True,
    "mode": "webhook",
    "webhook_url": "https://bot.example.org/telegram",
    "webhook_port": 0,
}


def test_webhook_mode_without_a_usable_secret_is_one_line_and_builds_nothing() -> None:
    config = Config.model_validate({"platforms": {"telegram": WEBHOOK}})
    for secret in ({}, {"TELEGRAM_WEBHOOK_SECRET": "not usable: spaces"}):
        with pytest.raises(UsageError) as info:
            adapters_for(config, {"TELEGRAM_BOT_TOKEN": TOKEN} | secret)
        (line,) = str(info.value).splitlines()
        assert "TELEGRAM_WEBHOOK_SECRET" in line and "not usable" not in line
    made = adapters_for(
        config, {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": "s3cret-Token"}
    )
    assert isinstance(made["telegram"], TelegramAdapter) and made["telegram"].mode == "webhook"


def test_forced_polling_needs_no_webhook_secret_and_leaves_the_config_as_it_was() -> None:
    config = Config.model_validate({"platforms": {"telegram": WEBHOOK}})
    polling = forced_polling(config)
    made = adapters_for(polling, {"TELEGRAM_BOT_TOKEN": TOKEN})
    assert isinstance(made["telegram"], TelegramAdapter) and made["telegram"].mode == "polling"
    assert config.platforms.telegram.mode == "webhook"  # frozen: a copy was changed
    assert polling.platforms.telegram.model_copy(update={"mode": "webhook"}) == (
        config.platforms.telegram
    )  # nothing else differs


def test_the_discord_shards_of_the_section_reach_the_adapter() -> None:
    discord = {"enabled": True, "shard_count": 4, "shard_ids": [3, 1]}
    config = Config.model_validate({"platforms": {"discord": discord}})
    made = adapters_for(config, {"DISCORD_BOT_TOKEN": TOKEN})
    assert isinstance(made["discord"], DiscordAdapter) and made["discord"].shards == (3, 1)


class _Fake:
    """A registry entry whose adapter is the in-process harness and whose probe answers
    from the section, so what each caller passes it can be seen."""

    def __init__(self) -> None:
        self.built: list[tuple[PlatformConfig, str]] = []
        self.made: list[ChatAdapter] = []

    def adapter(self, section: TelegramConfig, token: str, environ: Mapping[str, str]) -> Adapter:
        self.built.append((section, token))
        self.made.append(ChatAdapter(platform="telegram"))
        return self.made[-1]

    async def probe(self, section: TelegramConfig, token: str, timeout_s: float) -> str:
        return f"fake bot in {section.mode} mode"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> _Fake:
    """``telegram``'s entry replaced, ``discord``'s removed: what a one-platform build sees."""
    entry = _Fake()
    monkeypatch.setitem(PLATFORMS, "telegram", Platform(adapter=entry.adapter, probe=entry.probe))
    monkeypatch.delitem(PLATFORMS, "discord")
    return entry


def _config() -> Config:
    return Config.model_validate(
        {
            "platforms": {
                "telegram": {"enabled": True, "allowed_users": ["1"]},
                "discord": {"enabled": True, "allowed_users": ["2"]},
            },
            "memory": {"review": {"enabled": False}},
        }
    )


async def test_run_builds_what_the_entry_makes_and_the_gateway_answers_through_it(
    fake: _Fake, home: Path, archive: Archive
) -> None:
    config = _config()
    adapters = adapters_for(config, {"TELEGRAM_BOT_TOKEN": TOKEN})  # discord: no entry, no token
    assert list(adapters) == ["telegram"] and fake.built == [(config.platforms.telegram, TOKEN)]
    gateway = build_gateway(
        paths=Paths(home, home / "config.yaml", explicit_config=False),
        config=config,
        archive=archive,
        model=ScriptedModel(respond=echo),
        adapters=adapters,
    )
    [adapter] = fake.made
    async with gateway:
        await adapter.say("hello")
        await adapter.wait_sent(1)
    assert adapter.texts() == ["(dry run) you said: hello"]


def test_wiring_and_the_no_platform_hint_follow_the_registry(fake: _Fake) -> None:
    config = _config()
    assert set(access(config).allowed_users) == {"telegram"}
    assert set(gateway_settings(config).platforms) == {"telegram"}
    with pytest.raises(UsageError, match=r"set platforms\.telegram\.enabled in config"):
        adapters_for(Config(), {})


async def test_doctor_probes_each_entry_and_only_those(fake: _Fake, home: Path) -> None:
    paths = Paths(home, home / "config.yaml", explicit_config=False)
    rows = await run_checks(paths, _config(), {"TELEGRAM_BOT_TOKEN": TOKEN}, timeout_s=2)
    platform_rows = [r for r in rows if r.check in {"telegram", "discord"}]
    assert [(r.check, r.result) for r in platform_rows] == [("telegram", "ok")]
    assert "fake bot in polling mode" in platform_rows[0].detail
