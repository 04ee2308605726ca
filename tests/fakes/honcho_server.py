"""A loopback fake of the Honcho API (v3), the endpoints ``memory/providers/honcho.py`` calls
through the real ``honcho-ai`` SDK, with their state in memory::

    async with FakeHoncho(api_key="k") as server:
        provider = HonchoProvider(base_url=server.base_url, api_key="k")

Endpoints (paths and JSON shapes as ``honcho/http/routes.py`` and ``honcho/api_types.py`` of
honcho-ai 2.7 have them):

* ``POST /v3/workspaces`` ``{"id"}``: get or create a workspace (the SDK calls it once, before
  its first workspace-scoped call);
* ``POST /v3/workspaces/{ws}/peers`` ``{"id", "metadata"?, "configuration"?}``: get or create a
  peer (a configuration given replaces the stored one);
* ``POST /v3/workspaces/{ws}/sessions`` ``{"id", "peers"?: {peer: config}}``: get or create a
  session, its peers (created as needed) added;
* ``POST /v3/workspaces/{ws}/sessions/{session}/messages`` ``{"messages": [{"peer_id",
  "content", "created_at"?, "metadata"?}]}``: 1 to 100 messages, answered as a list;
* ``POST /v3/workspaces/{ws}/peers/{peer}/search`` ``{"query", "filters", "limit"}``: the
  messages *that peer wrote*, best first: a message matches by the words it shares with the
  query (case-folded), more shared words first, then the newest;
* ``GET /v3/workspaces/{ws}/peers/{peer}/context``: ``{"peer_id", "target_id",
  "representation", "peer_card"}``.

What stands in for Honcho's reasoning: the representation of a peer is a list of what it
said ("Explicit observations:" and its last ten messages), unless the peer is configured
``observe_me: false``; the peer card is whatever a test puts in ``cards[(workspace, peer)]``.
``leaky_search = True`` makes a peer's search answer every peer's messages (a server that got
the scoping wrong, to show the provider passes none of them on).
Names are checked against Honcho's ``^[a-zA-Z0-9_-]+$`` (422 otherwise), and a call on a
workspace, peer or session that was never created answers 404.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes.memory_service import MemoryServiceFake, detail

__all__ = ["FakeHoncho"]

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,512}")
_WORD = re.compile(r"\w+")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _invalid(name: Any) -> web.Response | None:
    if isinstance(name, str) and _NAME.fullmatch(name):
        return None
    problem = [{"loc": ["body", "id"], "msg": "String should match pattern '^[a-zA-Z0-9_-]+$'"}]
    return detail(422, problem)


class FakeHoncho(MemoryServiceFake):
    name = "the fake Honcho server"
    scheme = "Bearer"

    def __init__(self, *, api_key: str | None = None, shutdown_timeout: float = 2.0) -> None:
        super().__init__(api_key=api_key, shutdown_timeout=shutdown_timeout)
        self.workspaces: dict[str, str] = {}  # id -> created_at
        self.peers: dict[tuple[str, str], dict[str, Any]] = {}
        self.sessions: dict[tuple[str, str], dict[str, Any]] = {}
        self.messages: list[dict[str, Any]] = []  # MessageResponse shapes, oldest first
        self.cards: dict[tuple[str, str], list[str]] = {}
        self.leaky_search = False  # True: a peer's search answers every peer's messages
        self._ids = itertools.count(1)

    def routes(self, app: web.Application) -> None:
        base = "/v3/workspaces"
        app.router.add_post(base, self._workspace)
        app.router.add_post(base + "/{ws}/peers", self._peer)
        app.router.add_post(base + "/{ws}/sessions", self._session)
        app.router.add_post(base + "/{ws}/sessions/{session}/messages", self._add_messages)
        app.router.add_post(base + "/{ws}/peers/{peer}/search", self._search)
        app.router.add_get(base + "/{ws}/peers/{peer}/context", self._context)

    def said_by(self, peer: str, workspace: str = "mnemo") -> list[str]:
        """What ``peer`` wrote in ``workspace``, oldest first."""
        return [
            m["content"]
            for m in self.messages
            if m["workspace_id"] == workspace and m["peer_id"] == peer
        ]

    # -- state --------------------------------------------------------------------------

    def _get_or_create_peer(self, ws: str, name: str) -> dict[str, Any]:
        return self.peers.setdefault(
            (ws, name),
            {"id": name, "workspace_id": ws, "created_at": _now(), "metadata": {},
             "configuration": {}},
        )  # fmt: skip

    def _missing(self, request: web.Request, *kinds: str) -> web.Response | None:
        ws = request.match_info["ws"]
        if ws not in self.workspaces:
            return detail(404, f"Workspace {ws} not found")
        if "peer" in kinds and (ws, request.match_info["peer"]) not in self.peers:
            return detail(404, f"Peer {request.match_info['peer']} not found")
        if "session" in kinds and (ws, request.match_info["session"]) not in self.sessions:
            return detail(404, f"Session {request.match_info['session']} not found")
        return None

    # -- handlers -----------------------------------------------------------------------

    async def _workspace(self, request: web.Request) -> web.Response:
        body = await request.json()
        if (bad := _invalid(body.get("id"))) is not None:
            return bad
        created = self.workspaces.setdefault(body["id"], _now())
        return web.json_response(
            {"id": body["id"], "metadata": {}, "configuration": {}, "created_at": created}
        )

    async def _peer(self, request: web.Request) -> web.Response:
        if (missing := self._missing(request)) is not None:
            return missing
        body = await request.json()
        if (bad := _invalid(body.get("id"))) is not None:
            return bad
        peer = self._get_or_create_peer(request.match_info["ws"], body["id"])
        if body.get("configuration") is not None:
            peer["configuration"] = dict(body["configuration"])
        if body.get("metadata") is not None:
            peer["metadata"] = dict(body["metadata"])
        return web.json_response(peer)

    async def _session(self, request: web.Request) -> web.Response:
        if (missing := self._missing(request)) is not None:
            return missing
        ws, body = request.match_info["ws"], await request.json()
        if (bad := _invalid(body.get("id"))) is not None:
            return bad
        peers: dict[str, Any] = body.get("peers") or {}
        for name in peers:
            if (bad := _invalid(name)) is not None:
                return bad
        session = self.sessions.setdefault(
            (ws, body["id"]),
            {"id": body["id"], "workspace_id": ws, "is_active": True, "metadata": {},
             "configuration": {}, "created_at": _now(), "peers": {}},
        )  # fmt: skip
        for name, config in peers.items():
            self._get_or_create_peer(ws, name)
            session["peers"][name] = dict(config)
        return web.json_response({k: v for k, v in session.items() if k != "peers"})

    async def _add_messages(self, request: web.Request) -> web.Response:
        if (missing := self._missing(request, "session")) is not None:
            return missing
        ws, sid = request.match_info["ws"], request.match_info["session"]
        body = await request.json()
        messages = body.get("messages")
        if not isinstance(messages, list) or not 1 <= len(messages) <= 100:
            return detail(422, "messages: 1 to 100 items")
        added = []
        for message in messages:
            if (bad := _invalid(message.get("peer_id"))) is not None:
                return bad
            self._get_or_create_peer(ws, message["peer_id"])
            self.sessions[(ws, sid)]["peers"].setdefault(message["peer_id"], {})
            content = str(message.get("content", ""))
            added.append(
                {"id": f"msg{next(self._ids)}", "content": content,
                 "peer_id": message["peer_id"], "session_id": sid, "workspace_id": ws,
                 "metadata": message.get("metadata") or {},
                 "created_at": message.get("created_at") or _now(),
                 "token_count": len(content.split())}
            )  # fmt: skip
        self.messages.extend(added)
        return web.json_response(added)

    async def _search(self, request: web.Request) -> web.Response:
        if (missing := self._missing(request, "peer")) is not None:
            return missing
        ws, peer = request.match_info["ws"], request.match_info["peer"]
        body = await request.json()
        query, limit = _words(str(body.get("query", ""))), int(body.get("limit") or 10)
        scored = [
            (len(query & _words(m["content"])), n, m)
            for n, m in enumerate(self.messages)
            if m["workspace_id"] == ws and (m["peer_id"] == peer or self.leaky_search)
        ]
        best = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], -s[1]))
        return web.json_response([m for _, _, m in best[:limit]])

    async def _context(self, request: web.Request) -> web.Response:
        if (missing := self._missing(request, "peer")) is not None:
            return missing
        ws, peer = request.match_info["ws"], request.match_info["peer"]
        observed = self.peers[(ws, peer)]["configuration"].get("observe_me") is not False
        said = self.said_by(peer, ws)[-10:] if observed else []
        representation = "Explicit observations:\n" + "\n".join(f"- {s}" for s in said)
        return web.json_response(
            {"peer_id": peer, "target_id": request.query.get("target", peer),
             "representation": representation if said else "",
             "peer_card": self.cards.get((ws, peer))}
        )  # fmt: skip
