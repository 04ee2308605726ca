"""Memory test helpers: report the scanner figures at the end of the run."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the scanner's measured recall / false-positive figures at the end of a run."""
    from tests.memory.test_scan import FIGURES

    if FIGURES:
        terminalreporter.section("memory scanner figures")
        for corpus, line in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{corpus}: {line}")
