"""With ``storage.backend: postgres`` the operator's commands work on the shared database,
not on the home folder: what one replica's operator writes, every replica reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from gateway.cli import main
from memory.archive.postgres import PgArchive
from memory.archive.records import NewMessage, SessionSpec


def _cli(home: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--home", str(home), *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def shared_home(tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        yaml.safe_dump({"storage": {"backend": "postgres"}}), encoding="utf-8"
    )
    monkeypatch.setenv("MNEMO_POSTGRES_DSN", postgres_dsn)
    return home


def test_memory_pairing_and_skills_commands_use_the_database(
    shared_home: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        shared_home, "memory", "add", "--person", "telegram:5", "--target", "user",
        "Prefers tea to coffee.", capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, _ = _cli(shared_home, "memory", "show", "--person", "telegram:5", capsys=capsys)
    assert code == 0 and "Prefers tea to coffee." in out
    assert not (shared_home / "memories").exists()  # nothing went to the home folder
    # another replica's home: an empty folder, the same database
    other = shared_home.parent / "other"
    other.mkdir()
    (other / "config.yaml").write_text((shared_home / "config.yaml").read_text())
    code, out, _ = _cli(other, "memory", "show", "--person", "telegram:5", capsys=capsys)
    assert "Prefers tea to coffee." in out

    assert _cli(shared_home, "pairing", "block", "telegram:666", capsys=capsys)[0] == 0
    code, out, _ = _cli(other, "pairing", "list", "--json", capsys=capsys)
    assert code == 0 and "telegram:666" in json.dumps(json.loads(out))
    assert not (shared_home / "pairing.json").exists()

    code, out, _ = _cli(other, "skills", "list", capsys=capsys)
    assert code == 0


async def test_sessions_commands_read_the_shared_archive(
    shared_home: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with await PgArchive.open(postgres_dsn) as archive:
        await archive.start_session(
            SessionSpec("s1", "telegram", "5", "dm", people=("telegram-5",))
        )
        await archive.append_exchange(
            "s1",
            [NewMessage("user", "the kestrel nests on the roof", speaker="telegram-5"),
             NewMessage("assistant", "noted")],
        )  # fmt: skip
    # main() runs its own event loop: leave this one's thread for it
    code, out, err = await asyncio.to_thread(
        _cli, shared_home, "sessions", "search", "kestrel", "--person", "telegram:5", capsys=capsys
    )
    assert code == 0, err
    assert "kestrel" in out
    code, out, err = await asyncio.to_thread(_cli, shared_home, "sessions", "check", capsys=capsys)
    assert (code, out) == (
        0,
        "No problems in PostgreSQL at MNEMO_POSTGRES_DSN (1 session, 2 messages).\n",
    ), err
    assert not (shared_home / "state.db").exists()


def test_an_unreachable_database_is_one_line_without_the_dsn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        yaml.safe_dump({"storage": {"backend": "postgres"}}), encoding="utf-8"
    )
    monkeypatch.setenv("MNEMO_POSTGRES_DSN", "postgresql://mnemo:s3cret@127.0.0.1:1/x")
    code, out, err = _cli(home, "pairing", "list", capsys=capsys)
    assert code != 0
    assert "MNEMO_POSTGRES_DSN did not answer" in err
    assert "s3cret" not in out + err
