"""A program on a real pseudo-terminal, driven as a person at a keyboard drives it.

``Terminal`` starts ``python -m gateway …`` with a pty as its stdin, stdout and controlling
terminal (its own session, so a typed Ctrl-C reaches it as SIGINT through the line
discipline, as in a shell), and reads what it prints without blocking the event loop (the
fake model server runs in the same loop). ``expect`` waits for text with a deadline: the
deadline only turns a hang into a failure, nothing here measures time. Stdlib only.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import re
import struct
import sys
import termios
from pathlib import Path

from tests import REPO_ROOT

ROOT = REPO_ROOT
DEADLINE_S = 60.0
CTRL_C, CTRL_D, CTRL_A, UP = "\x03", "\x04", "\x01", "\x1b[A"


def _controlling_terminal() -> None:  # in the child, after setsid (start_new_session)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.argv = [sys.executable, "-m", "gateway", "--home", str(home), "chat", *args]
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TERM": "xterm",
            "INPUTRC": os.devnull,  # nobody's key bindings but readline's own
            **(env or {}),
        }
        self.stderr_path = home.parent / f"stderr-{os.getpid()}-{id(self)}.txt"
        self.raw = b""
        self.seen = 0  # how far ``expect`` has read
        self._master = -1
        self._changed = asyncio.Event()
        self._ended = False
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def output(self) -> str:
        """Everything printed so far, line ends as the program wrote them (``\\n``)."""
        return self.raw.decode("utf-8", errors="replace").replace("\r\n", "\n")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8") if self.stderr_path.exists() else ""

    async def __aenter__(self) -> Terminal:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        with self.stderr_path.open("wb") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=slave,
                stdout=slave,
                stderr=stderr,
                cwd=ROOT,
                env=self.env,
                start_new_session=True,
                preexec_fn=_controlling_terminal,
            )
        os.close(slave)
        self._master = master
        asyncio.get_running_loop().add_reader(master, self._read)
        return self

    async def __aexit__(self, *exc: object) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        if self._master >= 0:
            asyncio.get_running_loop().remove_reader(self._master)
            os.close(self._master)
            self._master = -1

    def _read(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: every process holding the terminal has exited
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self._master)
            self._ended = True
        self.raw += data
        self._changed.set()

    def type(self, keys: str) -> None:
        """Keys as typed: ``"hello\\r"`` is hello and Enter."""
        os.write(self._master, keys.encode())

    async def expect(self, pattern: str, *, regex: bool = False) -> str:
        """Wait until ``pattern`` is printed after what ``expect`` saw last; what matched."""
        compiled = re.compile(pattern if regex else re.escape(pattern))

        async def until() -> re.Match[str]:
            while True:
                found = compiled.search(self.output, self.seen)
                if found is not None:
                    return found
                if self._ended:
                    raise AssertionError(
                        f"the program ended without printing {pattern!r}; it printed:\n"
                        f"{self.output[self.seen :]}\nstderr:\n{self.stderr}"
                    )
                self._changed.clear()
                await self._changed.wait()

        try:
            found = await asyncio.wait_for(until(), DEADLINE_S)
        except TimeoutError:
            raise AssertionError(
                f"{pattern!r} was not printed; after what was expected last it printed:\n"
                f"{self.output[self.seen :]!r}\nstderr:\n{self.stderr}"
            ) from None
        self.seen = found.end()
        return found.group(0)

    async def exit_code(self) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), DEADLINE_S)
