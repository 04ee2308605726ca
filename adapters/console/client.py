"""The console's lifecycle: read lines, hand them to the gateway one at a time, print.

On a terminal (stdin and stdout both ttys) a line is read with ``input()``: GNU readline's
line editing, a history kept in ``history_file`` across runs, Tab completing command
names. It runs on a daemon thread, so the event loop carries on while the person types and
a read still blocked never keeps the process alive. On a pipe lines are read from the file
descriptor as they come and nothing decorates the output: each reply is its text and a
newline.

One line at a time: after handing a line to the sink the console waits until the
gateway's session for it is idle (``Control.idle``) before it reads, and prompts for, the
next. A piped script is answered line by line, in order; the prompt comes back only after
the reply. ``interrupt`` is Ctrl-C: it cancels the turn running then (``Control.cancel``;
the gateway answers "(cancelled)"), and at the prompt it ends the chat, as Ctrl-D (end of
input) and ``/quit`` do. While a turn runs a terminal shows "thinking…" (``typing``),
erased when the reply is printed. A notice that arrives while the person is typing (saved
memory) is printed above their line, which is drawn again below it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, TextIO, TypeVar

from adapters.base import BotCommand, Delivered, Forbidden, Sink
from adapters.console.normalize import normalize
from adapters.console.render import render
from adapters.messages import Button, Identity, InboundMessage, OutboundMessage
from adapters.skips import SKIP_REASONS, SkipReason

__all__ = ["PROMPT", "QUIT", "THINKING", "ConsoleAdapter", "Control"]

log = logging.getLogger(__name__)
T = TypeVar("T")

PROMPT = "you> "
THINKING = "thinking…"
QUIT = frozenset({"/quit", "/exit"})
ERASE = "\r\x1b[K"  # to the start of the line, and clear it
HISTORY_LENGTH = 1000


class Control(Protocol):
    """What the console needs from the gateway besides its sink (``Gateway`` has both)."""

    def cancel(self, message: InboundMessage) -> bool:
        """Cancel the turn running in ``message``'s session; False when none runs."""
        ...

    async def idle(self, message: InboundMessage) -> None:
        """Return once ``message``'s session has nothing queued or running."""
        ...


class ConsoleAdapter:
    platform = "console"

    def __init__(
        self,
        *,
        user_id: str,
        chat_id: str,
        display_name: str = "",
        history_file: Path | None = None,
        stdin: int | None = None,
        stdout: TextIO | None = None,
        terminal: bool | None = None,
    ) -> None:
        """``chat_id``: the session's name (its key is ``console:dm:<chat id>``);
        ``stdin``: a file descriptor (default 0); ``terminal``: readline, a prompt and
        "thinking…" (default: when stdin and stdout are both terminals)."""
        self.sender = Identity(self.platform, user_id, display_name)
        self.chat_id = chat_id
        self.history_file = history_file
        self._fd = 0 if stdin is None else stdin
        self._out = stdout or sys.stdout
        if terminal is None:
            terminal = os.isatty(self._fd) and self._out.isatty()
        self.terminal = terminal
        self._control: Control | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()
        self._busy: InboundMessage | None = None  # handed over, not answered yet
        self._thinking = False
        self._prompting = False  # set by the reading thread while input() waits
        self._buffer = b""
        self._tty: list[Any] | None = None
        self._readline: ModuleType | None = None
        self._commands: list[str] = ["quit"]
        self._ids = itertools.count(1)

    def bind(self, control: Control) -> None:
        """Answer one line at a time and let Ctrl-C cancel a turn (the running gateway)."""
        self._control = control

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._reader is not None and not self._closed.is_set()

    @property
    def skipped(self) -> Mapping[SkipReason, int]:
        """A typed line is always a message (or nothing, when blank): none is skipped."""
        return dict.fromkeys(SKIP_REASONS, 0)

    async def start(self, sink: Sink) -> None:
        if self.terminal:
            self._setup_terminal()
        self._reader = asyncio.create_task(self._read(sink), name="console:input")

    async def stop(self) -> None:
        self._closed.set()
        reader, self._reader = self._reader, None
        if reader is None:  # never started, or stopped already
            return
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        if self.terminal:
            if self._prompting:  # left at the prompt (Ctrl-C): the shell's starts below
                self._quietly("\n")
            self._restore_terminal()
            self._save_history()

    @property
    def closed(self) -> bool:
        """The input has ended (or ``close``): no more lines will be handed over."""
        return self._closed.is_set()

    def close(self) -> None:
        """End the chat: ``wait_closed`` returns (the caller stops the gateway)."""
        self._closed.set()

    async def wait_closed(self) -> None:
        """Until the input ended (end of file, Ctrl-D, ``/quit``) or ``close``."""
        await self._closed.wait()

    def interrupt(self) -> None:
        """Ctrl-C: cancel the turn running now; with none (at the prompt), end the chat."""
        busy, control = self._busy, self._control
        if busy is None or control is None:
            self.close()
        else:
            control.cancel(busy)  # False: it is being answered already

    # -- the Adapter protocol -------------------------------------------------------------

    async def send(
        self, message: OutboundMessage, *, delivered: Delivered | None = None
    ) -> list[str]:
        text = render(message)  # the whole reply is one chunk here
        if text is None:
            return []
        self._print(text)
        if delivered is not None:
            await delivered(1, 1)
        return [str(next(self._ids))]

    async def edit(
        self,
        chat_id: str,
        message_id: str,
        text: str,
        *,
        thread_id: str | None = None,
        buttons: tuple[Button, ...] = (),
    ) -> None:
        """A terminal cannot change what it printed: the new text is printed below.
        (Edits answer button presses, which the console never sends: its buttons are
        typed as commands.)"""
        edited = render(OutboundMessage(self.platform, chat_id, text, buttons=buttons))
        if edited is not None:
            self._print(edited)

    def _print(self, text: str) -> None:
        if not self.terminal:
            self._write(text + "\n")
        elif self._prompting:  # a notice while they type: above their line, redrawn
            self._write(f"{ERASE}{text}\n{PROMPT}{self._typed()}")
        else:
            self._thinking = False
            self._write(f"{ERASE}{text}\n")

    async def typing(self, chat_id: str, thread_id: str | None = None) -> None:
        if self.terminal and self._busy is not None and not self._thinking:
            self._thinking = True
            self._write(THINKING)

    async def set_commands(
        self, commands: Sequence[BotCommand], *, admins: Sequence[str] = ()
    ) -> None:
        self._commands = sorted({command.name for command in commands} | {"quit"})

    async def dismiss(self, message: InboundMessage) -> None:
        """The console has one person, whom the gateway always answers."""

    async def private_chat(self, user_id: str) -> str:
        if user_id != self.sender.user_id:
            raise Forbidden(f"the console has one person, not {user_id}")
        return self.chat_id

    # -- reading --------------------------------------------------------------------------

    async def _read(self, sink: Sink) -> None:
        try:
            while not self._closed.is_set():
                line = await _off_loop(self._input if self.terminal else self._read_line)
                if line is None:
                    if self.terminal:  # Ctrl-D: the shell's prompt starts on a line of its own
                        self._quietly("\n")
                    break
                if line.strip().lower() in QUIT:
                    break
                message = normalize(
                    line,
                    sender=self.sender,
                    chat_id=self.chat_id,
                    message_id=uuid.uuid4().hex,  # unique across runs: the gateway dedups
                    now=datetime.now(UTC),
                )
                if message is not None:
                    await self._hand_over(sink, message)
        except Exception:
            log.exception("the console stopped reading")
        finally:
            self._closed.set()

    async def _hand_over(self, sink: Sink, message: InboundMessage) -> None:
        self._busy = message
        try:
            await sink(message)
            if self._control is not None:
                await self._control.idle(message)
        finally:
            self._busy = None
            if self._thinking:  # no reply came (a failed turn): the line must not stay
                self._thinking = False
                self._quietly(ERASE)

    def _input(self) -> str | None:
        """One line from the terminal, with readline (runs on the reading thread)."""
        self._prompting = True
        try:
            return input(PROMPT)
        except EOFError:
            return None
        finally:
            self._prompting = False

    def _read_line(self) -> str | None:
        """One line from a pipe or file, None at its end (runs on the reading thread)."""
        while b"\n" not in self._buffer:
            chunk = os.read(self._fd, 65536)
            if not chunk:
                break
            self._buffer += chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    # -- the terminal ---------------------------------------------------------------------

    def _setup_terminal(self) -> None:
        import termios  # noqa: PLC0415 - POSIX terminals only

        with contextlib.suppress(termios.error, OSError):
            self._tty = termios.tcgetattr(self._fd)
        try:
            import readline  # noqa: PLC0415 - only on a terminal; absent on some builds
        except ImportError:  # the terminal's own line editing, no history
            return
        self._readline = readline
        readline.set_history_length(HISTORY_LENGTH)
        if self.history_file is not None and self.history_file.exists():
            with contextlib.suppress(OSError):
                readline.read_history_file(self.history_file)
        readline.set_completer_delims(" \t\n")
        readline.set_completer(self._complete)
        libedit = "libedit" in (readline.__doc__ or "")
        readline.parse_and_bind("bind ^I rl_complete" if libedit else "tab: complete")

    def _restore_terminal(self) -> None:
        """Put back the terminal's modes: a read left waiting has readline's set."""
        if self._tty is None:
            return
        import termios  # noqa: PLC0415 - POSIX terminals only

        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._tty)

    def _save_history(self) -> None:
        if self._readline is None or self.history_file is None:
            return
        try:  # private like every file of the home: created 0600 before readline writes it
            os.close(os.open(self.history_file, os.O_WRONLY | os.O_CREAT, 0o600))
            self._readline.write_history_file(self.history_file)
        except OSError as exc:
            log.warning("could not save the console history to %s: %s", self.history_file, exc)

    def _complete(self, text: str, state: int) -> str | None:
        """Tab: the command names that start with what was typed, at the line's start."""
        readline = self._readline
        if readline is None or readline.get_begidx() != 0 or not text.startswith("/"):
            return None
        matches = [f"/{name} " for name in self._commands if f"/{name}".startswith(text)]
        return matches[state] if state < len(matches) else None

    def _typed(self) -> str:
        return self._readline.get_line_buffer() if self._readline is not None else ""

    def _write(self, text: str) -> None:
        try:
            self._out.write(text)
            self._out.flush()
        except OSError as exc:  # the terminal or the pipe is gone: nobody reads any more
            self.close()
            raise Forbidden(f"the console's output is closed: {exc}") from None

    def _quietly(self, text: str) -> None:
        with contextlib.suppress(Forbidden):
            self._write(text)


async def _off_loop(read: Callable[[], T]) -> T:
    """``read()`` on a daemon thread of its own: a read still blocked when the chat ends
    must not keep the process alive, as an executor's thread would."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the reader was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = read(), None
        except BaseException as exc:
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed while it waited
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="mnemo-console-input", daemon=True).start()
    return await future
