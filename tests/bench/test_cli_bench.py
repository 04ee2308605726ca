"""bench/cli_bench.py with one run: it prepares a home with the CLI, runs every command
against it and prints one row per command beside the baseline. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli_bench import BASELINE, COMMANDS, Row, main, prepare_home, render

pytestmark = pytest.mark.slow


def test_one_run_prints_a_row_per_command_and_the_baseline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--runs", "1"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert set(COMMANDS) | {BASELINE} <= set(rows)
    assert "(baseline)" in rows[BASELINE]
    for name in COMMANDS:
        assert rows[name].rstrip().endswith(("pass", "FAIL")), rows[name]


def test_the_prepared_home_has_memory_and_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    prepare_home(home, sessions=3)
    assert (home / "config.yaml").is_file()
    assert (home / "state.db").is_file()
    assert "Prefers metric units" in (home / "memories" / "telegram-1001" / "MEMORY.md").read_text()


def test_pass_and_fail_are_judged_on_the_p90() -> None:
    rows = [Row(BASELINE, [0.02]), Row("mnemo --help", [0.1] * 9 + [0.9])]
    assert render(rows, 0.4).splitlines()[-1].endswith("pass")
    rows = [Row(BASELINE, [0.02]), Row("mnemo --help", [0.1] * 8 + [0.9] * 2)]
    assert render(rows, 0.4).splitlines()[-1].endswith("FAIL")
