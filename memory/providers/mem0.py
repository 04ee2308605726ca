"""mem0 as the memory provider, through the HTTP client of its official SDK, ``mem0ai``
(``AsyncMemoryClient``), never its local ``Memory`` (which would run a vector store and an LLM
of its own in this process).

What leaves the machine: to ``base_url`` (a server speaking mem0's Platform API, else mem0's
cloud, ``https://api.mem0.ai``), over HTTP with ``Authorization: Token <api key>`` (the key
given, else ``$MEM0_API_KEY``), go a key check when the client starts (``GET /v1/ping/``), the
person's message and the bot's reply of every turn (``sync_turn``), each incoming message as
a search query (``prefetch``) and, at a session's start, a listing of the person's memories
(``context``). mem0's telemetry (PostHog, on unless ``MEM0_TELEMETRY`` says otherwise) is
switched off before the SDK is imported, and again after in case something imported it
first, so nothing goes anywhere else.

How our ids become mem0's: a subject's key (a person, ``telegram-5001``, or a group chat's
store, ``telegram-chat--100123``) is the ``user_id`` every memory of it is added under and
every search and listing is filtered by (mem0 ids are free text: no mapping). The session id
travels in each memory's metadata (``{"session_id": …}``), not as ``run_id``: a memory added
under a run is scoped to it, and a ``user_id`` filter alone would not find it again in the
next session.

What importing the SDK costs (done once, at the first construction, not when this module is
imported): about a second and some 800 modules (its package ``__init__`` also imports the
local ``Memory``, hence qdrant-client, numpy, grpc and posthog); it creates ``$MEM0_DIR``
(else ``~/.mem0``) and writes an anonymous id there, so unless ``MEM0_DIR`` is set it is
pointed at a private temporary directory removed at exit (a read-only home, as under
``ProtectHome=``, would break the import); and it adds a global warnings filter, undone here.

The client checks its key when constructed, with a blocking ``requests`` call without a
timeout: so it is constructed in a thread of its own at the first hook, awaited at most
``timeout_s`` (a check that never ends parks one daemon thread, never the event loop), and
tried again at the next hook after a failure. Every call after it goes through an
``httpx.AsyncClient`` of ours with ``timeout_s``.

The hooks: ``context`` lists the person's memories (the newest, a short list); ``prefetch``
searches them for the new message; ``sync_turn`` adds the message and the reply (mem0
extracts the memories); ``tools`` offers ``recall(query)``, the same search.
``on_session_end`` and ``on_memory_write`` send nothing (each says why).

Errors: any failure of the SDK (an HTTP error status, no connection, no answer within
``timeout_s``, an answer that is not JSON or not of the expected shape) raises
``ProviderError`` naming the hook and the kind of failure, never the API key. (The SDK also
logs each HTTP failure itself, at ERROR, under ``mem0.client.utils``, with the URL and never
the key.)
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import httpx

from memory.providers.base import Exchange, ProviderError, ProviderTool, SessionEnd, Subject

__all__ = ["Mem0Provider"]

T = TypeVar("T")

_CONTEXT_LIMIT = 20  # memories listed for a session's context
_SEARCH_LIMIT = 5  # memories a prefetch or a recall asks for
_QUERY_CHARS = 1000  # a search query is the start of the message
_LINE_CHARS = 300  # one memory, as a line


@functools.cache
def _client_class() -> Any:
    """mem0's ``AsyncMemoryClient``, imported once: telemetry off, its folder private (see the
    module doc), the warnings filter it adds at import undone."""
    os.environ["MEM0_TELEMETRY"] = "False"  # read once, when mem0's telemetry is imported
    if not os.environ.get("MEM0_DIR"):
        folder = tempfile.mkdtemp(prefix="mnemo-mem0-")  # 0700
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["MEM0_DIR"] = folder
    try:
        with warnings.catch_warnings():
            from mem0.client.main import AsyncMemoryClient  # noqa: PLC0415 (a second: see above)
            from mem0.memory import telemetry  # noqa: PLC0415
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"the mem0 provider needs mem0ai ({exc}): pip install 'mnemo[mem0]'", name=exc.name
        ) from exc
    telemetry.MEM0_TELEMETRY = False  # checked at every event, whoever imported mem0 first
    telemetry.client_telemetry.close()  # a PostHog client made at import, if any
    return AsyncMemoryClient


def _line(text: str) -> str:
    """A memory as one line of a list: whitespace runs folded, cut to its budget."""
    line = " ".join(text.split())
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1].rstrip() + "…"


class _Unexpected(Exception):
    """An answer that is JSON but not of the shape mem0 documents."""


def _memories(answer: Any, user_id: str) -> list[str]:
    """The memory texts of a search or listing answer (``{"results": [...]}``, or a bare
    list), as lines; any memory another user's id is on is dropped, whatever the server."""
    items = answer.get("results") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise _Unexpected(type(answer).__name__)
    lines = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("memory"), str):
            continue
        if item.get("user_id", user_id) != user_id:
            continue
        if line := _line(item["memory"]):
            lines.append(line)
    return lines


class Mem0Provider:
    """mem0 behind the ``Provider`` contract (see the module doc)."""

    name = "mem0"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        key = api_key or os.environ.get("MEM0_API_KEY")
        if not key:
            raise ValueError("mem0 needs an API key (or MEM0_API_KEY in the environment)")
        self._api_key = key
        self._host = base_url.rstrip("/") if base_url else None  # the SDK appends "/v1/ping/"
        self._timeout_s = timeout_s
        self._client_class = _client_class()
        self._http = httpx.AsyncClient(timeout=timeout_s)
        self._client: Any = None
        self._starting: asyncio.Future[Any] | None = None

    # -- the hooks ------------------------------------------------------------------------

    async def context(self, subject: Subject) -> str:
        client = await self._connected("context")
        answer = await self._sdk(
            "context",
            client.get_all(filters={"user_id": subject.key}, page=1, page_size=_CONTEXT_LIMIT),
            subject,
        )
        return "\n".join(f"- {line}" for line in answer)

    async def prefetch(self, subject: Subject, message: str) -> str:
        return "\n".join(f"- {line}" for line in await self._search(subject, message, "prefetch"))

    async def sync_turn(self, exchange: Exchange) -> None:
        client = await self._connected("sync_turn")
        messages = [
            {"role": "user", "content": exchange.user},
            {"role": "assistant", "content": exchange.reply},
        ]
        await self._sdk(
            "sync_turn",
            client.add(
                messages,
                user_id=exchange.subject.key,
                metadata={"session_id": exchange.session_id},
                timestamp=int(exchange.at),
            ),
        )

    async def on_session_end(self, end: SessionEnd) -> None:
        # Nothing to send: mem0 extracts memories from each turn as sync_turn adds it, and
        # keeps no session of ours that would need closing.
        return None

    async def on_memory_write(self, subject: Subject, action: str, target: str, entry: str) -> None:
        # Nothing to send: mem0 extracts its memories from the turn that led to this write
        # (sync_turn sends it); adding the entry as well would keep the fact twice, and a
        # replace or a remove names no mem0 memory id.
        return None

    def tools(self, subject: Subject) -> Sequence[ProviderTool]:
        async def recall(query: str) -> dict[str, Any]:
            """Search what mem0 remembers about this person from earlier conversations.

            Args:
                query: words or a question to look for in their memories
            """
            try:
                found = await self._search(subject, query, "recall")
            except ProviderError as exc:
                return {"success": False, "error": str(exc)}
            return {"success": True, "found": found}

        return (recall,)

    async def aclose(self) -> None:
        # A key check still under way keeps its thread; it ends with the request, unheard.
        await self._http.aclose()

    # -- helpers --------------------------------------------------------------------------

    async def _search(self, subject: Subject, query: str, hook: str) -> list[str]:
        """Lines of the person's memories that match ``query`` (none for a blank one)."""
        query = " ".join(query.split())[:_QUERY_CHARS]
        if not query:
            return []
        client = await self._connected(hook)
        work = client.search(query, filters={"user_id": subject.key}, top_k=_SEARCH_LIMIT)
        lines: list[str] = await self._sdk(hook, work, subject)
        return lines

    async def _connected(self, hook: str) -> Any:
        """The SDK's client, constructed (key check included) in a thread of its own."""
        if self._client is not None:
            return self._client
        if self._starting is None or self._starting.done():
            self._starting = _in_thread(self._construct, "mem0-client")
            self._starting.add_done_callback(self._constructed)
        try:
            async with asyncio.timeout(self._timeout_s):
                return await asyncio.shield(self._starting)
        except TimeoutError:
            raise self._failure(hook, "the key check (GET /v1/ping/)", TimeoutError()) from None
        except Exception as exc:
            raise self._failure(hook, "the key check (GET /v1/ping/)", exc) from exc

    def _construct(self) -> Any:
        """In the thread: the SDK's client on our ``httpx`` client (the SDK sets its base URL
        and headers); it checks the key with a blocking request."""
        return self._client_class(api_key=self._api_key, host=self._host, client=self._http)

    def _constructed(self, starting: asyncio.Future[Any]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            self._client = starting.result()

    async def _sdk(self, hook: str, work: Awaitable[Any], subject: Subject | None = None) -> Any:
        """``work`` (a call of the SDK), its failures as ``ProviderError``; with ``subject``,
        the answer read as memory lines of that subject's."""
        try:
            answer = await work
            return answer if subject is None else _memories(answer, subject.key)
        except Exception as exc:  # the SDK raises its own errors, httpx's, json's, ValueError
            raise self._failure(hook, "", exc) from exc

    def _failure(self, hook: str, step: str, exc: BaseException) -> ProviderError:
        where = f" at {step}" if step else ""
        message = f"mem0 {hook} failed{where}: {_reason(exc, self._timeout_s)}"
        return ProviderError(message.replace(self._api_key, "[api key]"))


def _in_thread(work: Callable[[], T], name: str) -> asyncio.Future[T]:
    """``work()`` in a daemon thread, as a future of the running loop (settled from the
    thread; never, quietly, if the loop has closed by then)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def succeed(result: T) -> None:
        if not future.done():
            future.set_result(result)

    def fail(exc: Exception) -> None:
        if not future.done():
            future.set_exception(exc)

    def run() -> None:
        try:
            result = work()
        except Exception as exc:  # handed to the loop, raised to whoever awaits
            settle: Callable[[], object] = functools.partial(fail, exc)
        else:
            settle = functools.partial(succeed, result)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(settle)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def _reason(exc: BaseException, timeout_s: float) -> str:
    """What went wrong, in a few words of ours (no text of the server's): the first telling
    error of ``exc``'s chain (the SDK wraps httpx's and requests' errors in its own)."""
    chain = _chain(exc)
    for error in chain:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if isinstance(status, int):
            refused = ", the API key was refused" if status in (401, 403) else ""
            return f"HTTP {status}{refused}"
    for error in chain:
        if isinstance(error, json.JSONDecodeError):
            return "the answer was not JSON"
        if isinstance(error, _Unexpected):
            return "an answer of an unexpected shape"
        if isinstance(error, httpx.TimeoutException | TimeoutError):
            return f"no answer within {timeout_s:g} s"
        if isinstance(error, httpx.TransportError | OSError):  # requests' errors are OSErrors
            return "no connection"
    return type(exc).__name__


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it was raised from or during, newest first."""
    chain: list[BaseException] = []
    error: BaseException | None = exc
    while error is not None and error not in chain and len(chain) < 10:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain
