"""The console adapter in-process, on a pipe: one line at a time, Ctrl-C, the end of input.
(On a real pseudo-terminal, through ``mnemo chat``: tests/gateway/cli/test_chat_terminal.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from adapters.base import Forbidden
from adapters.console import ConsoleAdapter
from adapters.messages import InboundMessage, OutboundMessage


class Gate:
    """A sink and a ``Control``: records what was handed over; ``idle`` waits for
    ``answer()``, as the gateway's does until the reply is out."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.events: list[str] = []  # hand-overs and waits, in order
        self.cancelled: list[str] = []
        self.arrived = asyncio.Event()
        self._answered = asyncio.Event()

    async def sink(self, message: InboundMessage) -> None:
        self.received.append(message.text)
        self.events.append(message.text)
        self.arrived.set()

    async def idle(self, message: InboundMessage) -> None:
        self.events.append("wait")
        await self._answered.wait()
        self._answered.clear()
        self.events.append("answered")

    def cancel(self, message: InboundMessage) -> bool:
        self.cancelled.append(message.text)
        return True

    async def next(self) -> None:
        await self.arrived.wait()
        self.arrived.clear()

    def answer(self) -> None:
        self._answered.set()


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe for stdin. Closed write end first (a read still blocked wakes at its end),
    then the reading threads are awaited, then the read end: else a thread that had not
    yet called ``os.read`` could read the next test's pipe, which reuses the number."""
    read, write = os.pipe()
    yield read, write
    with contextlib.suppress(OSError):  # closed by the test already
        os.close(write)
    for thread in threading.enumerate():
        if thread.name == "mnemo-console-input":
            thread.join(timeout=5)
    with contextlib.suppress(OSError):
        os.close(read)


@pytest.fixture
async def console(pipe: tuple[int, int]) -> AsyncIterator[tuple[ConsoleAdapter, Gate, io.StringIO]]:
    out = io.StringIO()
    adapter = ConsoleAdapter(user_id="ada", chat_id="console-ada", stdin=pipe[0], stdout=out)
    gate = Gate()
    adapter.bind(gate)
    await adapter.start(gate.sink)
    yield adapter, gate, out
    await adapter.stop()


async def test_a_line_is_handed_over_only_once_the_one_before_is_answered(
    console: tuple[ConsoleAdapter, Gate, io.StringIO], pipe: tuple[int, int]
) -> None:
    adapter, gate, out = console
    assert not adapter.terminal and adapter.connected
    os.write(pipe[1], b"first\n\nsecond\n/QUIT\nnever\n")
    await gate.next()
    await adapter.typing("console-ada")  # nothing on a pipe
    await adapter.send(OutboundMessage("console", "console-ada", "reply one"))
    gate.answer()
    await gate.next()
    gate.answer()
    await adapter.wait_closed()  # /quit ends it; the line after it is never read
    # each line waited for its answer before the next was handed over; the blank one is none
    assert gate.events == ["first", "wait", "answered", "second", "wait", "answered"]
    assert adapter.closed and out.getvalue() == "reply one\n"


async def test_ctrl_c_cancels_the_running_turn_and_at_the_prompt_ends_the_chat(
    console: tuple[ConsoleAdapter, Gate, io.StringIO], pipe: tuple[int, int]
) -> None:
    adapter, gate, _out = console
    os.write(pipe[1], b"a long question\n")
    await gate.next()
    adapter.interrupt()
    assert gate.cancelled == ["a long question"] and not adapter.closed
    gate.answer()  # the gateway said "(cancelled)"; the console reads on
    os.write(pipe[1], b"next\n")
    await gate.next()
    assert gate.received == ["a long question", "next"]
    gate.answer()


async def test_ctrl_c_with_nothing_running_ends_the_chat(
    console: tuple[ConsoleAdapter, Gate, io.StringIO],
) -> None:
    adapter, gate, _out = console
    adapter.interrupt()  # at the prompt, waiting for a line
    await adapter.wait_closed()
    assert gate.cancelled == [] and gate.received == []


async def test_the_end_of_input_ends_the_chat_and_a_private_chat_is_this_one(
    console: tuple[ConsoleAdapter, Gate, io.StringIO], pipe: tuple[int, int]
) -> None:
    adapter, gate, _out = console
    os.write(pipe[1], "ünïcode without a newline at the end".encode())
    os.close(pipe[1])
    await gate.next()
    gate.answer()
    await adapter.wait_closed()
    assert gate.received == ["ünïcode without a newline at the end"]
    assert await adapter.private_chat("ada") == "console-ada"
    with pytest.raises(Forbidden):
        await adapter.private_chat("bob")


async def test_leaving_async_with_stops_reading(pipe: tuple[int, int]) -> None:
    out = io.StringIO()
    gate = Gate()
    adapter = ConsoleAdapter(user_id="ada", chat_id="console-ada", stdin=pipe[0], stdout=out)
    adapter.bind(gate)
    # The states are compared as tuples: `assert not adapter.connected` would narrow it to
    # False for mypy until the end of the test (a call does not undo a narrowing), and the
    # rest of the test would go unchecked as unreachable.
    async with adapter as entered:
        assert (entered, adapter.connected) == (adapter, False)  # entering does not start it
        await adapter.start(gate.sink)
        os.write(pipe[1], b"inside\n")
        await gate.next()
        gate.answer()
        assert adapter.connected
    assert (adapter.connected, adapter.closed) == (False, True)
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "console:input"]
    assert gate.received == ["inside"]
    with pytest.raises(RuntimeError, match="the block failed"):  # not swallowed
        async with adapter:
            raise RuntimeError("the block failed")
