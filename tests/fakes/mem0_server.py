"""A loopback fake of the mem0 Platform API, the endpoints ``memory/providers/mem0.py`` calls
through the real ``mem0ai`` SDK (``AsyncMemoryClient``), with their state in memory::

    async with FakeMem0(api_key="k") as server:
        provider = Mem0Provider(base_url=server.base_url, api_key="k")

Endpoints (paths and shapes as ``mem0/client/main.py`` of mem0ai 2.2 sends them and the
Platform API reference documents the answers), all behind ``Authorization: Token <key>``:

* ``GET /v1/ping/``: the key check the client makes when it is constructed (with
  ``requests``, blocking); answers ``{"status": "ok", "org_id", "project_id", "user_email"}``;
* ``POST /v3/memories/add/`` ``{"messages": [{"role", "content"}], "user_id", "metadata"?,
  "timestamp"?, …}``: entity ids at the top level, as the SDK sends them; answers
  ``{"status": "PENDING", "event_id"}`` like the Platform, which extracts memories later;
* ``POST /v3/memories/search/`` ``{"query", "filters", "top_k"?}``: entity ids only inside
  ``filters`` (at the top level: 400, as the v3 API answers), ``{"user_id": …}`` or an
  ``{"AND": [...]}`` holding one; answers ``{"results": [memory + "score"]}``, best first;
* ``POST /v3/memories/`` ``{"filters"}`` with ``?page=&page_size=``: the user's memories,
  newest first, as ``{"count", "next", "previous", "results"}``.

What stands in for mem0's extraction: each ``user`` message added becomes one memory, its
text verbatim, under the request's ``user_id`` (the assistant's messages are context only). A
memory matches a query by the words they share (case-folded); ``score`` is the share of the
query's words it holds. ``leaky_search = True`` makes a search answer every user's memories
(a server that got the scoping wrong, to show the provider passes none of them on).
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes.memory_service import MemoryServiceFake, detail

__all__ = ["FakeMem0"]

_WORD = re.compile(r"\w+")
_ENTITIES = ("user_id", "agent_id", "app_id", "run_id")


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _user_of(filters: Any) -> str | None:
    """The ``user_id`` a v3 filter names: ``{"user_id": x}`` or ``{"AND": [..., {"user_id":
    x}, ...]}`` (None when it names none)."""
    if not isinstance(filters, dict):
        return None
    if isinstance(filters.get("user_id"), str):
        return str(filters["user_id"])
    for part in filters.get("AND") or ():
        if isinstance(part, dict) and isinstance(part.get("user_id"), str):
            return str(part["user_id"])
    return None


class FakeMem0(MemoryServiceFake):
    name = "the fake mem0 server"
    scheme = "Token"

    def __init__(self, *, api_key: str | None = None, shutdown_timeout: float = 2.0) -> None:
        super().__init__(api_key=api_key, shutdown_timeout=shutdown_timeout)
        self.memories: list[dict[str, Any]] = []  # oldest first
        self.leaky_search = False  # True: a search answers every user's memories
        self._ids = itertools.count(1)

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/v1/ping/", self._ping)
        app.router.add_post("/v3/memories/add/", self._add)
        app.router.add_post("/v3/memories/search/", self._search)
        app.router.add_post("/v3/memories/", self._list)

    def memories_of(self, user_id: str) -> list[str]:
        """The texts kept for ``user_id``, oldest first."""
        return [m["memory"] for m in self.memories if m["user_id"] == user_id]

    async def _ping(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"status": "ok", "org_id": "org-fake", "project_id": "proj-fake", "user_email": None}
        )

    async def _add(self, request: web.Request) -> web.Response:
        body = await request.json()
        messages, user_id = body.get("messages"), body.get("user_id")
        if not isinstance(messages, list) or not messages:
            return detail(400, "messages: a non-empty list is required")
        if not isinstance(user_id, str) or not user_id:
            return detail(400, "at least one of user_id, agent_id, app_id, run_id is required")
        at = body.get("timestamp")
        created = (
            datetime.fromtimestamp(at, UTC) if isinstance(at, int | float) else datetime.now(UTC)
        ).isoformat()
        for message in messages:
            if message.get("role") == "user" and str(message.get("content", "")).strip():
                self.memories.append(
                    {"id": f"mem-{next(self._ids)}", "memory": str(message["content"]),
                     "user_id": user_id, "metadata": body.get("metadata") or {},
                     "categories": [], "created_at": created, "updated_at": created}
                )  # fmt: skip
        return web.json_response({"status": "PENDING", "event_id": f"evt-{next(self._ids)}"})

    async def _search(self, request: web.Request) -> web.Response:
        body = await request.json()
        if any(key in body for key in _ENTITIES):
            return detail(400, "entity ids must be passed inside filters")
        user_id = _user_of(body.get("filters"))
        if user_id is None:
            return detail(400, "filters must name at least one entity id")
        query = _words(str(body.get("query", "")))
        scored = []
        for n, memory in enumerate(self.memories):
            shared = len(query & _words(memory["memory"]))
            if (memory["user_id"] == user_id or self.leaky_search) and shared:
                scored.append((shared / len(query), n, memory))
        scored.sort(key=lambda s: (-s[0], -s[1]))
        top_k = int(body.get("top_k") or 10)
        return web.json_response(
            {"results": [{**m, "score": round(score, 3)} for score, _, m in scored[:top_k]]}
        )

    async def _list(self, request: web.Request) -> web.Response:
        body = await request.json()
        if any(key in body for key in _ENTITIES):
            return detail(400, "entity ids must be passed inside filters")
        user_id = _user_of(body.get("filters"))
        if user_id is None:
            return detail(400, "filters must name at least one entity id")
        page = int(request.query.get("page", 1))
        size = int(request.query.get("page_size", 100))
        mine = [m for m in reversed(self.memories) if m["user_id"] == user_id]
        start = (page - 1) * size
        more = start + size < len(mine)
        return web.json_response(
            {"count": len(mine), "previous": None, "results": mine[start : start + size],
             "next": f"{request.url.with_query(page=page + 1, page_size=size)}" if more else None}
        )  # fmt: skip
