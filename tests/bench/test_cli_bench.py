"""bench/cli_bench.py with one run: it prepares a home with the CLI, runs every command
against it and prints one row per command beside the baseline. No timing is asserted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import cli_bench
from bench.cli_bench import BASELINE, COMMANDS, Row, main, prepare_home, render

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One home prepared by the CLI, read by both tests. Each memory entry is one mnemo
    process (~2 s of CPU): two entries per person instead of seven, the first note and the
    first profile line (how many is the benchmark's choice, not what is tested here)."""
    home = tmp_path_factory.mktemp("cli-bench") / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_bench, "NOTES", cli_bench.NOTES[:1])
        patch.setattr(cli_bench, "PROFILE", cli_bench.PROFILE[:1])
        prepare_home(home, sessions=3)
    return home


def test_one_run_prints_a_row_per_command_and_the_baseline(
    prepared: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """main() as make bench-cli runs it, but on a copy of the home prepared above instead of
    preparing its own (the same prepare_home; its result is checked below)."""
    made: list[Path] = []

    def copy_prepared(home: Path, sessions: int = 40) -> None:
        shutil.copytree(prepared, home)
        made.append(home)

    monkeypatch.setattr(cli_bench, "prepare_home", copy_prepared)
    assert main(["--runs", "1"]) == 0
    assert len(made) == 1 and not made[0].exists()  # measured there, then removed
    out = capsys.readouterr().out
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert set(COMMANDS) | {BASELINE} <= set(rows)
    assert "(baseline)" in rows[BASELINE]
    for name in COMMANDS:
        assert rows[name].rstrip().endswith(("pass", "FAIL")), rows[name]


def test_the_prepared_home_has_memory_and_sessions(prepared: Path) -> None:
    home = prepared
    assert (home / "config.yaml").is_file()
    assert (home / "state.db").is_file()
    for person in ("telegram-1001", "discord-2002"):
        memories = home / "memories" / person
        assert "Prefers metric units" in (memories / "MEMORY.md").read_text()
        assert "Name is Ada" in (memories / "USER.md").read_text()


def test_pass_and_fail_are_judged_on_the_p90() -> None:
    rows = [Row(BASELINE, [0.02]), Row("mnemo --help", [0.1] * 9 + [0.9])]
    assert render(rows, 0.4).splitlines()[-1].endswith("pass")
    rows = [Row(BASELINE, [0.02]), Row("mnemo --help", [0.1] * 8 + [0.9] * 2)]
    assert render(rows, 0.4).splitlines()[-1].endswith("FAIL")
