"""A loopback TCP proxy that can be cut: a replica's link to Redis that a test severs.

``TcpProxy(host, port)`` listens on 127.0.0.1 (a free port) and pipes every connection to
``host:port``. ``cut()`` closes the listener and every piped connection, as a replica's
crash or a network partition would: the client behind it sees its connections reset and
new ones refused, while the server and every other client carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Self

__all__ = ["TcpProxy"]


class TcpProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.cut()

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if server is not None:
            await server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            up_reader, upstream = await asyncio.open_connection(*self.target)
            self._writers.add(upstream)
            await asyncio.gather(_copy(reader, upstream), _copy(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            for side in (writer, upstream):
                if side is not None:
                    self._writers.discard(side)
                    side.transport.abort()


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while data := await source.read(65536):
        sink.write(data)
        await sink.drain()
    sink.close()
