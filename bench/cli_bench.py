"""CLI start-up benchmark: how long the everyday commands take, beside ``python -c pass``.

Issue 12 §6 wants ``mnemo --help``, ``mnemo config check``, ``mnemo memory show`` and
``mnemo sessions list`` under 0.4 s on a 2-core machine. Each runs ``--runs`` times as a
fresh process (the installed ``mnemo`` script beside this interpreter, else ``python -m
gateway``) against a temporary home made with the CLI itself (``mnemo init``, a few memory
entries per person, a few dozen sessions through ``mnemo sessions import``), so ``memory show``
scans real entries and ``sessions list`` reads a real ``state.db``. The interpreter's own
start-up, ``python -c pass``, is measured in the same run, interleaved with the commands, so
a loaded machine shows in both. No network: the model key is a dummy that only ``config
check`` reads, and nothing connects anywhere. The home is removed at the end.

    .venv/bin/python bench/cli_bench.py [--runs N] [--target SECONDS]
    make bench-cli
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The commands the issue names, as typed after ``mnemo --home HOME``.
COMMANDS: dict[str, list[str]] = {
    "mnemo --help": ["--help"],
    "mnemo config check": ["config", "check"],
    "mnemo memory show": ["memory", "show"],
    "mnemo sessions list": ["sessions", "list"],
}
BASELINE = "python -c pass"
PEOPLE = ("telegram:1001", "discord:2002")
NOTES = (
    "Prefers metric units",
    "Deploys with `make release` from the ops repo",
    "Staging is staging2.local since March",
    "VPN: WireGuard, config in ~/wg0.conf",
    "Runs the nightly backup at 02:00 UTC",
)
PROFILE = ("Name is Ada; works on compilers", "Likes short answers with code first")


def mnemo_command() -> list[str]:
    """The ``mnemo`` console script of this interpreter's environment, else ``-m gateway``."""
    script = Path(sys.executable).with_name("mnemo")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gateway"]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "OPENAI_"))}
    env["OPENAI_API_KEY"] = "sk-bench-dummy-key-not-used-0123"  # read by config check only
    return env


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def prepare_home(home: Path, sessions: int = 40) -> None:
    """A home made by the CLI itself: config, memory for two people, an archive."""
    env = environment()
    base = [*mnemo_command(), "--home", str(home)]
    steps = [["init"]]
    for person in PEOPLE:
        steps += [["memory", "add", "--person", person, note] for note in NOTES]
        steps += [
            ["memory", "add", "--person", person, "--target", "user", line] for line in PROFILE
        ]
    lines = []
    for n in range(sessions):
        person = PEOPLE[n % len(PEOPLE)].replace(":", "-")
        for turn in range(4):
            for role, text in (("user", f"question {turn} of session {n}"), ("assistant", "ok")):
                lines.append(
                    json.dumps(
                        {
                            "session": f"bench-{n}",
                            "person": person,
                            "platform": person.split("-")[0],
                            "chat": person,
                            "role": role,
                            "content": text,
                            "created_at": f"2026-01-{1 + n % 28:02d}T10:{turn:02d}:00+00:00",
                        }
                    )
                )
    archive = home.parent / "sessions.jsonl"
    archive.write_text("\n".join(lines) + "\n", encoding="utf-8")
    steps.append(["sessions", "import", str(archive)])
    for step in steps:
        done = _run([*base, *step], env)
        if done.returncode != 0:
            raise SystemExit(f"preparing the home: mnemo {' '.join(step)}: {done.stderr.strip()}")


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    times: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def p90(self) -> float:
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]  # nearest rank


def measure(home: Path, runs: int) -> list[Row]:
    """Every command and the baseline ``runs`` times, round-robin (one warm-up round first:
    compiled bytecode and the page cache, as after any first use)."""
    env = environment()
    base = [*mnemo_command(), "--home", str(home)]
    argvs = {BASELINE: [sys.executable, "-c", "pass"]}
    argvs.update({name: [*base, *argv] for name, argv in COMMANDS.items()})
    times: dict[str, list[float]] = {name: [] for name in argvs}
    for round_ in range(runs + 1):
        for name, argv in argvs.items():
            started = time.perf_counter()
            done = _run(argv, env)
            elapsed = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr.strip()}")
            if round_:
                times[name].append(elapsed)
    return [Row(name, found) for name, found in times.items()]


def render(rows: list[Row], target: float) -> str:
    floor = next(row for row in rows if row.name == BASELINE)
    width = max(len(row.name) for row in rows)
    lines = [
        f"{'command':<{width}} | median s | p90 s | over baseline s | target s | ok?",
        f"{'-' * width}-+----------+-------+-----------------+----------+-----",
    ]
    for row in rows:
        if row.name == BASELINE:
            over, goal, ok = "", "", "(baseline)"
        else:
            over = f"{row.median - floor.median:.3f}"
            goal = f"{target:.1f}"
            ok = "pass" if row.p90 < target else "FAIL"
        lines.append(
            f"{row.name:<{width}} | {row.median:8.3f} | {row.p90:5.3f} | {over:>15} |"
            f" {goal:>8} | {ok}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--target", type=float, default=0.4, help="seconds (the issue's 0.4)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    with tempfile.TemporaryDirectory(prefix="mnemo-cli-bench-") as tmp:
        home = Path(tmp) / "home"
        print("preparing a home with mnemo init, memory add, sessions import…", file=sys.stderr)
        prepare_home(home)
        print(
            f"timing {len(COMMANDS)} commands and {BASELINE}, {args.runs} runs each…",
            file=sys.stderr,
        )
        rows = measure(home, args.runs)
    print(
        f"CLI start-up: {args.runs} runs each of `{' '.join(mnemo_command())}`; Python"
        f" {platform.python_version()}, {os.cpu_count()} CPUs, load average"
        f" {os.getloadavg()[0]:.2f}"
    )
    print(render(rows, args.target))
    print("ok? is pass when the p90 is under the target.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
