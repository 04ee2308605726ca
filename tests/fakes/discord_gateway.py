"""The gateway WebSocket of the fake Discord (see ``discord_server``).

``DiscordGateway`` is a mixin over the state ``FakeDiscord`` owns: it serves ``/gateway``
(HELLO, heartbeat ACKs, IDENTIFY -> READY + one GUILD_CREATE per guild, RESUME -> replay +
RESUMED or INVALID_SESSION) and :meth:`~DiscordGateway.dispatch` sends events to every live
session of the shard that owns them.

Sharding, as Discord does it: IDENTIFY may carry ``shard: [id, count]`` (``0 <= id <
count``, else the socket is closed with 4010 ``Invalid shard``); a session without it is
shard 0 of 1. A guild belongs to shard ``(guild_id >> 22) % count`` (``shard_of``): that
session's READY lists it and gets its GUILD_CREATE and every event that names it
(``guild_id``; ``id`` for the GUILD_* events about the guild itself); events of no guild (DMs)
go to shard 0 only. READY echoes ``shard`` when it was given (discord.py's
``AutoShardedClient`` reads it).

A :class:`Session` outlives the :class:`Connection` it was identified on: it numbers
its dispatches and keeps the last ``BUFFERED_EVENTS`` of them for RESUME, until a client
closes it cleanly (1000/1001). A connection asked for ``compress=zlib-stream`` deflates every
frame with its one ``compressobj``, flushed with ``Z_SYNC_FLUSH``, as Discord does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import zlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from tests.fakes.discord_models import FakeChannel, FakeUser, Guild, build_guild

__all__ = ["BUFFERED_EVENTS", "Connection", "DiscordGateway", "Session", "guild_of", "shard_of"]

BUFFERED_EVENTS = 1000
_GUILD_EVENTS = frozenset({"GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE"})


def shard_of(guild_id: int | None, count: int) -> int:
    """The shard a guild's events go to: ``(guild_id >> 22) % count``; no guild: shard 0."""
    return 0 if guild_id is None else (guild_id >> 22) % count


def guild_of(event: str, data: Mapping[str, Any]) -> int | None:
    """The guild an event is about, if it names one that is a snowflake."""
    found = data.get("id") if event in _GUILD_EVENTS else data.get("guild_id")
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    return int(found) if isinstance(found, str) and found.isdigit() else None


class Connection:
    """One gateway WebSocket; frames are sent one at a time (deflated for zlib-stream)."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        compress: str | None,
        transport: asyncio.BaseTransport | None,
    ) -> None:
        self.ws = ws
        self.transport = transport
        self.deflater = zlib.compressobj() if compress == "zlib-stream" else None
        self.lock = asyncio.Lock()
        self.session: Session | None = None
        self.dropped = False

    async def send(self, frame: Mapping[str, Any]) -> None:
        data = json.dumps(frame, separators=(",", ":"))
        async with self.lock:
            if self.ws.closed:
                return
            with contextlib.suppress(ConnectionError):
                if self.deflater is None:
                    await self.ws.send_str(data)
                else:
                    raw = self.deflater.compress(data.encode()) + self.deflater.flush(
                        zlib.Z_SYNC_FLUSH
                    )
                    await self.ws.send_bytes(raw)


@dataclass
class Session:
    """An identified session: it numbers its dispatches and buffers them for RESUME."""

    id: str
    intents: int
    shard: tuple[int, int] = (0, 1)  # [id, count] from IDENTIFY
    seq: int = 0
    alive: bool = True
    conn: Connection | None = None
    buffer: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=BUFFERED_EVENTS))


class DiscordGateway:
    """The gateway half of ``FakeDiscord``, over the state it initialises."""

    token: str
    heartbeat_interval: float
    recommended_shards: int
    bot: FakeUser
    application_id: int
    guilds: dict[int, Guild]
    channels: dict[int, FakeChannel]
    identify: list[dict[str, Any]]
    resumes: list[dict[str, Any]]
    compression: list[str | None]
    handler_errors: list[BaseException]
    _sessions: dict[str, Session]
    _connections: set[Connection]

    if TYPE_CHECKING:  # defined by FakeDiscord

        @property
        def gateway_url(self) -> str: ...

        async def _notify(self) -> None: ...

    async def dispatch(self, event: str, data: Mapping[str, Any]) -> None:
        """Send one dispatch (op 0) to every live session of the shard that owns it
        (``guild_of``, ``shard_of``), buffered for RESUME."""
        guild = guild_of(event, data)
        for session in list(self._sessions.values()):
            if session.alive and self._owns(session, guild):
                await self._dispatch_to(session, event, data)

    @staticmethod
    def _owns(session: Session, guild_id: int | None) -> bool:
        shard, count = session.shard
        return shard_of(guild_id, count) == shard

    async def _dispatch_to(self, session: Session, event: str, data: Mapping[str, Any]) -> None:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.buffer.append(frame)
        if session.conn is not None:
            await session.conn.send(frame)

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        compress = request.query.get("compress")
        self.compression.append(compress)
        conn = Connection(ws, compress, request.transport)
        if compress not in (None, "zlib-stream"):
            await ws.close(code=4000, message=f"unsupported compress={compress}".encode())
            return ws
        self._connections.add(conn)
        try:
            ms = int(self.heartbeat_interval * 1000)
            await conn.send({"op": 10, "d": {"heartbeat_interval": ms}, "s": None, "t": None})
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(conn, json.loads(msg.data))
        except Exception as exc:  # a broken fake must not pass silently
            self.handler_errors.append(exc)
            raise
        finally:
            self._connections.discard(conn)
            session = conn.session
            if session is not None and session.conn is conn:
                session.conn = None
                if not conn.dropped and ws.close_code in (1000, 1001):
                    session.alive = False  # a clean close ends the session
            await self._notify()
        return ws

    async def _on_frame(self, conn: Connection, frame: dict[str, Any]) -> None:
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:
            await conn.send({"op": 11, "d": None, "s": None, "t": None})
        elif op == 2:
            await self._on_identify(conn, data)
        elif op == 6:
            await self._on_resume(conn, data)
        await self._notify()

    async def _on_identify(self, conn: Connection, data: dict[str, Any]) -> None:
        self.identify.append(data)
        if data.get("token") != self.token:
            conn.dropped = True
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        shard = _shard(data.get("shard"))
        if shard is None:
            conn.dropped = True
            await conn.ws.close(code=4010, message=b"Invalid shard.")
            return
        session = Session(secrets.token_hex(16), int(data.get("intents", 0)), shard, conn=conn)
        self._sessions[session.id] = session
        conn.session = session
        guilds = [g for g in self.guilds.values() if self._owns(session, g.id)]
        ready = {
            "v": 10,
            "user": self.bot.payload() | {"verified": True, "mfa_enabled": False, "email": None},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id,
            "resume_gateway_url": self.gateway_url,
            "session_type": "normal",
            "application": {"id": str(self.application_id), "flags": 1 << 19},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
            "auth": {},
        }
        if "shard" in data:
            ready["shard"] = list(shard)
        await self._dispatch_to(session, "READY", ready)
        for guild in guilds:
            channels = [self.channels[c] for c in guild.channels]
            await self._dispatch_to(session, "GUILD_CREATE", build_guild(guild, channels, self.bot))

    async def _on_resume(self, conn: Connection, data: dict[str, Any]) -> None:
        self.resumes.append(data)
        session = self._sessions.get(str(data.get("session_id")))
        if session is None or not session.alive or data.get("token") != self.token:
            await conn.send({"op": 9, "d": False, "s": None, "t": None})
            return
        if session.conn is not None and session.conn is not conn:
            session.conn.dropped = True
            await session.conn.ws.close(code=4000)
        session.conn = conn
        conn.session = session
        seq = int(data.get("seq") or 0)
        for frame in list(session.buffer):
            if frame["s"] > seq:
                await conn.send(frame)
        await self._dispatch_to(session, "RESUMED", {})


def _shard(value: object) -> tuple[int, int] | None:
    """IDENTIFY's ``shard``: absent -> (0, 1); ``[id, count]`` with ``0 <= id < count``;
    anything else None (Discord closes with 4010)."""
    if value is None:
        return (0, 1)
    if not isinstance(value, list) or len(value) != 2:
        return None
    shard, count = value
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (shard, count)):
        return None
    return (shard, count) if 0 <= shard < count else None
