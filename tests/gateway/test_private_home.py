"""A home made by the gateway's first writes (no `mnemo init`) is private whatever the umask:
the pairing file, `mnemo chat --dry-run` in a fresh home, and `mnemo init` itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.auth import PairingStore
from gateway.cli import main
from tests.gateway.cli.test_chat import chat
from tests.memory.test_private_modes import assert_private, modes


@pytest.mark.usefixtures("umask")
def test_the_first_pairing_request_makes_a_private_home(tmp_path: Path) -> None:
    home = tmp_path / "srv" / "home"
    assert PairingStore(home / "pairing.json").request("telegram:7", "Ada", "7") is not None
    assert {".", "pairing.json", "pairing.json.lock"} <= set(modes(home))
    assert_private(tmp_path / "srv")


@pytest.mark.slow
@pytest.mark.usefixtures("umask")
async def test_chat_dry_run_in_a_new_home_keeps_it_private(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    code, out, err = await chat(home, "/memory\nping\n", "--dry-run")
    assert code == 0, err
    assert out.endswith("(dry run) you said: ping\n")
    assert "state.db" in modes(home)
    assert_private(tmp_path / "new")


@pytest.mark.usefixtures("umask")
def test_init_makes_every_missing_level_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "a" / "b" / "home"
    assert main(["--home", str(home), "init"]) == 0
    assert "open to other users" not in capsys.readouterr().err
    assert set(modes(tmp_path / "a")) == {
        ".", "b", "b/home", "b/home/config.yaml", "b/home/memories", "b/home/skills",
    }  # fmt: skip
    assert_private(tmp_path / "a")
