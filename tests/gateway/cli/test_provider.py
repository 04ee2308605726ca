"""``mnemo provider …`` end to end: real argv, a real ``state.db`` and, for the local
provider, the real model (skipped, saying so, without `pip install 'mnemo[local]'`)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from gateway.cli import main
from memory.archive.database import Archive
from tests.fakes.honcho_server import FakeHoncho
from tests.memory.conftest import make_session, say


def run(home: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--home", str(home), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def home_with(tmp_path: Path, provider: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text(f"memory:\n  provider: {provider}\n")
    return home


async def fill(home: Path) -> None:
    async with await Archive.open(home / "state.db") as archive:
        await make_session(archive, "a1", "telegram-1")
        await say(archive, "a1", "telegram-1", "I adopted a grey kitten called Miso")
        await make_session(archive, "b1", "telegram-2")
        await say(archive, "b1", "telegram-2", "My cat Pixel sleeps on my keyboard")
        await say(archive, "b1", "telegram-2", "The \x1b[2Jmarathon is in May")


def test_without_a_provider_status_says_so_and_the_others_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = home_with(tmp_path, "none")
    assert run(home, "provider", "status", capsys=capsys) == (0, "provider    none\n", "")
    code, _, err = run(home, "provider", "search", "--person", "telegram:1", "x", capsys=capsys)
    assert code == 2 and "no memory provider is active" in err


def test_unknown_providers_are_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = home_with(tmp_path, "pinecone")
    code, _, err = run(home, "provider", "status", capsys=capsys)
    assert code == 2 and "memory.provider" in err and "'local'" in err


@pytest.fixture
def local_home(tmp_path: Path) -> Path:
    pytest.importorskip(
        "onnxruntime", reason="the local provider's extra: pip install 'mnemo[local]'"
    )
    home = home_with(tmp_path, "local")
    asyncio.run(fill(home))
    return home


def test_reindex_then_search_shows_only_the_persons_own_messages(
    local_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(local_home, "provider", "status", "--json", capsys=capsys)
    status = json.loads(out)
    assert code == 0 and status["indexed"] == 0 and status["to_index"] == 6
    code, out, err = run(local_home, "provider", "reindex", capsys=capsys)
    assert code == 0 and out.startswith("embedded 6 messages in") and "indexed 6/6" in err
    code, out, _ = run(local_home, "provider", "search", "--person", "telegram:1",
                       "which pet do I have", "--json", capsys=capsys)  # fmt: skip
    rows = json.loads(out)
    assert rows and "Miso" in rows[0]["text"]
    assert {row["session_id"] for row in rows} == {"a1"}  # never telegram-2's cat
    code, out, _ = run(local_home, "provider", "search", "--person", "telegram-2",
                       "a race I run", capsys=capsys)  # fmt: skip
    assert "marathon" in out and "\x1b" not in out and "<U+001B>" in out
    assert (
        json.loads(run(local_home, "provider", "status", "--json", capsys=capsys)[1])["to_index"]
        == 0
    )


def test_card_of_a_person_without_one_says_when_one_comes(
    local_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(local_home, "provider", "card", "--person", "telegram:1", capsys=capsys)
    assert code == 0 and "no card for telegram-1 yet" in out
    code, _, err = run(local_home, "provider", "card", "--person", "nobody", capsys=capsys)
    assert code == 2 and "unknown person" in err


def test_local_commands_refuse_under_another_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = home_with(tmp_path, "none")
    code, _, err = run(home, "provider", "reindex", capsys=capsys)
    assert code == 2 and "local provider's" in err


async def test_on_postgres_a_service_provider_leaves_the_home_alone(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Only the local provider reads the archive (SQLite's): under postgres the commands of
    a service's provider neither make a state.db in the home nor touch the database."""
    monkeypatch.setenv("MNEMO_POSTGRES_DSN", postgres_dsn)
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    async with FakeHoncho() as server:
        (home / "config.yaml").write_text(
            "memory:\n  provider: honcho\n  provider_options:\n"
            f"    honcho: {{base_url: '{server.base_url}'}}\n"
            "storage: {backend: postgres}\n",
            encoding="utf-8",
        )
        code, out, err = await asyncio.to_thread(run, home, "provider", "status", capsys=capsys)
    assert code == 0, err
    assert out.startswith("provider    honcho")
    assert sorted(os.listdir(home)) == ["config.yaml"]
