"""Writer processes to kill, forked from one interpreter that has already imported their code.

A fresh ``python -c WRITER`` spends about 0.7 s of CPU importing ``memory`` (the scanner
compiles its pattern table) before its first write, so a test that kills a writer round
after round paid mostly for imports. A ``Zygote`` is started once, imports the modules it
is given, and forks one writer per request: each writer is still its own OS process, with
its own files and connections opened after the fork, killed by the test with a real
SIGKILL, and reaped with the exit status the kernel reports (``-SIGKILL`` as
``subprocess`` spells it). A writer's stdout is a pipe to the zygote, read up to its first
line (``ready``, once it is writing) and then closed: writers print nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0  # only turns a hang into a failure; nothing here measures time

SOURCE = r"""
import importlib, json, os, sys, traceback
for name in sys.argv[2:]:
    importlib.import_module(name)
exec(sys.argv[1])  # warm-up: whatever the writers would otherwise each do first
print("zygote ready", flush=True)
for line in sys.stdin:
    command, _, rest = line.strip().partition(" ")
    if command == "fork":
        request = json.loads(rest)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer: run the script as `python -c script *argv` would
            os.close(read)
            os.dup2(write, 1)  # its stdout: a pipe of its own to the zygote
            os.close(write)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            sys.argv = ["-c", *request["argv"]]
            code = 0
            try:
                exec(compile(request["script"], "<writer>", "exec"), {"__name__": "__main__"})
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        os.close(write)
        said = b""
        while b"\n" not in said:  # the writer's first line, or its end
            chunk = os.read(read, 4096)
            if not chunk:
                break
            said += chunk
        os.close(read)  # a writer prints nothing after its first line
        first = said.partition(b"\n")[0].decode(errors="replace") or "(nothing)"
        print(f"forked {pid} {first}", flush=True)
    elif command == "wait":
        pid = int(rest)
        _, status = os.waitpid(pid, 0)
        print(f"exited {pid} {os.waitstatus_to_exitcode(status)}", flush=True)
"""


class Zygote:
    """``with Zygote(log, "memory") as zygote: pid = zygote.start(SCRIPT, *argv)``: the
    script runs in a forked child and prints ``ready`` once it is writing; the test kills
    ``pid`` itself and collects the exit code with ``zygote.wait(pid)``. ``run`` forks a
    script and waits for its end. ``warm`` is code the zygote runs once after the imports
    (the scanner's first scan). The zygote's and the writers' stderr go to ``log``.
    tests/memory/conftest.py shares one per test process (fixture ``writers``)."""

    def __init__(self, log: Path, *preload: str, warm: str = "") -> None:
        self.log = log
        self.running: set[int] = set()
        with log.open("ab") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SOURCE, warm, *preload],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                cwd=ROOT,
            )
        self._buffer = b""
        assert self._line() == "zygote ready"

    def __enter__(self) -> Zygote:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.reap()
        finally:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the zygote's loop ends
            try:
                self.proc.wait(timeout=DEADLINE_S)
            finally:
                if self.proc.returncode is None:
                    self.proc.kill()
                    self.proc.wait()
                assert self.proc.stdout is not None
                self.proc.stdout.close()

    def start(self, script: str, *argv: str) -> int:
        """Start ``script`` with ``argv``; its pid, once it printed ``ready``."""
        pid, said = self._fork(script, argv)
        if said != "ready":
            self.reap()
            raise AssertionError(f"the writer said {said!r}, not ready; {self.stderr()}")
        return pid

    def run(self, script: str, *argv: str) -> int:
        """Run ``script`` with ``argv`` to its end; its exit code (see ``wait``)."""
        pid, _said = self._fork(script, argv)
        return self.wait(pid)

    def wait(self, pid: int) -> int:
        """The writer's exit code as ``subprocess`` gives it: ``-N`` if signal N ended it."""
        self._send(f"wait {pid}")
        line = self._line()
        assert line.startswith(f"exited {pid} "), line
        self.running.discard(pid)
        return int(line.split()[2])

    def reap(self) -> None:
        """Kill and collect every writer still running (a test that failed half-way)."""
        for pid in sorted(self.running):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self.wait(pid)

    def stderr(self) -> str:
        return "stderr of the zygote and its writers:\n" + self.log.read_text(errors="replace")

    def _fork(self, script: str, argv: tuple[str, ...]) -> tuple[int, str]:
        self._send("fork " + json.dumps({"script": script, "argv": list(argv)}))
        forked, pid, said = self._line().split(" ", 2)
        assert forked == "forked", forked
        self.running.add(int(pid))
        return int(pid), said

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def _line(self) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + DEADLINE_S
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 65536) if readable else b""
            if not chunk:
                why = "ended" if readable else f"printed nothing for {DEADLINE_S:.0f}s"
                raise AssertionError(f"the zygote {why}; {self.stderr()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()
