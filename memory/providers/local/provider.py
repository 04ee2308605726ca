"""``LocalProvider``: semantic recall over a person's own archive and a person card, here.

What it answers, and from where (nothing leaves the machine):

* ``context`` (session start): the subject's person card (``cards``), or nothing;
* ``prefetch`` (each turn): the few past messages closest to the new one, by meaning and by
  words fused (reciprocal-rank fusion of the vector ranking and the archive's word ranking,
  with ``session_search``'s weights: ``memory.archive.fusion``; a session's further
  messages only from the fused top ten), kept only when they are close enough in meaning
  to be worth the tokens, and never from a person's private session that is running (its
  messages are in the conversation already);
* the ``recall(query)`` tool: the same search, more results, for the model to call;
* ``rank_messages`` (for ``session_search``, which fuses it with its own word search): the
  vector ranking alone, the ids of the subject's messages closest in meaning to a query;
* ``sync_turn``: wakes the indexer (the archive already holds the exchange);
* ``on_session_end``: the card is rewritten from the session and the previous card.

The indexer is one background task: it embeds archived messages past its cursor in batches,
in a worker thread on one core, so a turn never waits for it (``mnemo provider reindex``
runs the same loop to the end in the foreground). Every read of messages is scoped by the
archive's rule (the sessions the subject took part in), in SQL. A query is embedded with the
person's own names in it made first-person (``person``: "does Maya" -> "does I"), since what
answers a question about them is what they said of themselves; the words are searched as
asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.archive import (
    FUSION,
    HITS_PER_SESSION,
    Archive,
    Fusion,
    Searcher,
    fused,
    read_deadline,
    visible_clause,
    when,
)
from memory.providers.base import Exchange, ProviderTool, SessionEnd, Subject
from memory.providers.local.cards import Card, CardStore, CardWriter
from memory.providers.local.embedder import Embedder
from memory.providers.local.person import first_person
from memory.providers.local.vectors import VectorStore, searchable

__all__ = ["LocalProvider", "LocalSettings", "Recalled"]

log = logging.getLogger(__name__)

READ_PAGE = 50  # fused message ids read back (scoped) at a time


@dataclass(frozen=True, slots=True)
class LocalSettings:
    card_chars: int = 1500
    prefetch_results: int = 3
    recall_results: int = 6
    prefetch_similarity: float = 0.35  # cosine below which a message is not worth a prefetch
    recall_similarity: float = 0.15
    rank_similarity: float = 0.1  # rank_messages leaves out messages below this cosine
    candidates: int = 40  # the word ranking's first messages that are fused with the vectors
    prefetch_words_ms: int = 25  # a prefetch's word search gives up after this (vectors stay)
    batch: int = 8  # texts per model run (of similar length; larger runs were slower here)
    poll_s: float = 5.0  # the indexer looks for new messages at least this often
    excerpt_chars: int = 300


@dataclass(frozen=True, slots=True)
class Recalled:
    """A past message found for a query: its cosine to the query and its fused rank score."""

    message_id: int
    session_id: str
    role: str
    created_at: float
    text: str
    similarity: float
    score: float


class LocalProvider:
    """The ``local`` memory provider (see the module doc)."""

    name = "local"

    def __init__(
        self,
        archive: Archive,
        *,
        embedder: Embedder | None = None,
        writer: CardWriter | None = None,
        settings: LocalSettings | None = None,
    ) -> None:
        self.archive = archive
        self.embedder = embedder or Embedder()
        self.writer = writer
        self.settings = settings or LocalSettings()
        self.vectors = VectorStore(archive, self.embedder.model_id, self.embedder.dimension)
        self.cards = CardStore(archive, self.settings.card_chars)
        self.searcher = Searcher(archive)
        #: how the vectors and the words are fused: as ``session_search`` fuses them
        self.fusion: Fusion = FUSION
        self._wake = asyncio.Event()
        self._indexer: asyncio.Task[None] | None = None
        self._running: dict[str, str] = {}  # subject key -> its session that last synced
        self._warming: set[asyncio.Task[None]] = set()
        self.last_error: str | None = None

    # -- life -----------------------------------------------------------------------------

    async def start(self, *, index: bool = True) -> None:
        """Load the model, create the tables, and (``index``) start the background indexer.
        Raises ``LocalUnavailable`` when the extra is not installed."""
        await asyncio.to_thread(self.embedder.load)
        await self.vectors.prepare()
        if index and self._indexer is None:
            self._indexer = asyncio.create_task(self._index_forever(), name="local-indexer")

    async def aclose(self) -> None:
        for warming in list(self._warming):
            warming.cancel()
        task, self._indexer = self._indexer, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the index ------------------------------------------------------------------------

    async def index_some(self, limit: int = 256) -> int:
        """Embed up to ``limit`` messages past the cursor; how many were embedded."""
        import numpy as np  # noqa: PLC0415

        pending = await self.vectors.pending(limit)
        if not pending.items:
            return 0
        # similar lengths in one model run: less padding to compute
        items = sorted(pending.items, key=lambda item: len(item[1]))
        ids: list[int] = []
        parts = []
        size = self.settings.batch
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            parts.append(await asyncio.to_thread(self.embedder.embed, [t for _, t in chunk]))
            ids.extend(i for i, _ in chunk)
        await self.vectors.save(ids, np.concatenate(parts), pending.last_id)
        return len(ids)

    async def reindex(self, *, fresh: bool = False, progress: Any = None) -> int:
        """Index everything not indexed yet (``fresh``: drop all vectors first); the count.
        ``progress(done, total)`` is called after each batch."""
        if fresh:
            await self.vectors.clear()
        done = 0
        indexed, total = await self.vectors.counts()
        while count := await self.index_some():
            done += count
            if progress is not None:
                progress(indexed + done, total)
        return done

    async def _index_forever(self) -> None:
        while True:
            try:
                count = await self.index_some()
                self.last_error = None
            except Exception as exc:  # keep serving; say so once per kind of failure
                message = f"{type(exc).__name__}: {str(exc)[:200]}"
                if message != self.last_error:
                    log.warning("local provider: indexing failed: %s", message)
                self.last_error = message
                count = 0
            if count:
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.poll_s):  # 3.11 wait_for loses cancels
                    await self._wake.wait()

    # -- search ---------------------------------------------------------------------------

    async def search(
        self,
        subject: Subject,
        query: str,
        *,
        limit: int,
        min_similarity: float,
        exclude_session: str | None = None,
        words_within_s: float | None = None,
    ) -> list[Recalled]:
        """The best ``limit`` of the subject's past messages for ``query``, fused;
        ``words_within_s``: the word search's budget (past it, the vector ranking alone)."""
        if not query.strip() or limit <= 0:
            return []
        async with asyncio.TaskGroup() as group:  # one fails: the other is cancelled
            meaning = group.create_task(self._meaning(subject, query))
            by_words = group.create_task(
                self._words(subject, query, words_within_s, exclude_session)
            )
        (ids, sims), (words, loose) = meaning.result(), by_words.result()
        fusion = self.fusion
        n = min(fusion.candidates, len(ids))
        by_meaning = [int(ids[i]) for i in _top(sims, n)] if n else []
        similarity = _lookup(ids, sims)
        ranked = [
            (message_id, score)
            for message_id, score in fused(words, by_meaning, fusion, loose=loose)
            if similarity(message_id) >= min_similarity
        ]
        # as ``memory.archive.fusion.grouped`` keeps a discover's matches (by session here,
        # by lineage there): at most HITS_PER_SESSION a session, a further one only among
        # the first ``further_within`` messages the subject may see (a weak second match
        # does not push another one out)
        results: list[Recalled] = []
        taken: dict[str, int] = {}
        shown = 0
        for start in range(0, len(ranked), READ_PAGE):  # most searches read one page
            page = ranked[start : start + READ_PAGE]
            found = await self._read(subject, [m for m, _ in page], exclude_session)
            for message_id, score in page:
                row = found.get(message_id)
                if row is None:
                    continue
                rank, shown = shown, shown + 1
                count = taken.get(row[1], 0)
                if count and (count >= HITS_PER_SESSION or 0 < fusion.further_within <= rank):
                    continue
                taken[row[1]] = count + 1
                cosine = similarity(message_id)
                results.append(Recalled(*row, similarity=cosine, score=score))
                if len(results) == limit:
                    return results
        return results

    async def rank_messages(self, subject: Subject, query: str, limit: int) -> list[int]:
        """The ids of the subject's messages closest in meaning to ``query``, best first, at
        most ``limit``, none under ``rank_similarity``: the vector ranking alone, for a
        search that fuses its own words (``session_search``, through
        ``agent_core.recall.Recall.ranker``, which bounds it in time)."""
        if not query.strip() or limit <= 0:
            return []
        ids, sims = await self._meaning(subject, query)
        floor = self.settings.rank_similarity
        return [int(ids[i]) for i in _top(sims, min(limit, len(ids))) if sims[i] >= floor]

    async def _meaning(self, subject: Subject, query: str) -> tuple[Any, Any]:
        """The subject's message ids (sorted) and their cosines to ``query``, embedded with
        the subject's names in the first person (``person.first_person``)."""
        import numpy as np  # noqa: PLC0415

        text = first_person(query[:2000], subject.names)
        async with asyncio.TaskGroup() as group:  # one fails: the other is cancelled
            vectors = group.create_task(self.vectors.matrix(subject.key))
            embedded = group.create_task(asyncio.to_thread(self.embedder.embed, [text]))
        (ids, matrix), q = vectors.result(), embedded.result()[0]
        return ids, (matrix @ q if len(ids) else np.zeros(0, dtype=np.float32))

    async def _words(
        self,
        subject: Subject,
        query: str,
        within_s: float | None,
        exclude_session: str | None = None,
    ) -> tuple[list[int], set[int]]:
        """Message ids the archive's word search ranks first for ``query``, and those only a
        loose step found (none when it takes over ``within_s``: SQLite interrupts it, so no
        reader stays busy with it)."""
        budget = contextlib.nullcontext() if within_s is None else read_deadline(within_s)
        try:
            with budget:
                hits, loose = await self.searcher.word_ranking(
                    query,
                    viewer=subject.key,
                    limit=self.settings.candidates // HITS_PER_SESSION,  # lineages to fill it
                    exclude_session=exclude_session,  # the running one must not use it up
                    conversation_only=True,
                )
        except sqlite3.OperationalError as exc:
            if within_s is None or "interrupt" not in str(exc):
                log.warning("local provider: word search failed: %s", exc)
            return [], set()
        except Exception as exc:  # the vector ranking still answers
            log.warning("local provider: word search failed: %s", type(exc).__name__)
            return [], set()
        return [hit.message_id for hit in hits[: self.settings.candidates]], loose

    async def _read(
        self, subject: Subject, ids: Sequence[int], exclude_session: str | None
    ) -> dict[int, tuple[int, str, str, float, str]]:
        """The messages among ``ids`` the subject may see (scoped in SQL)."""
        if not ids:
            return {}
        params: dict[str, Any] = {f"m{n}": message_id for n, message_id in enumerate(ids)}
        params.update(viewer=subject.key, exclude=exclude_session)
        sql = (
            "SELECT m.id, m.session_id, m.role, m.created_at, m.content FROM messages m"
            f" WHERE m.id IN ({','.join(':' + name for name in params if name[0] == 'm')})"
            f" AND {visible_clause('m.session_id')} AND m.role IN ('user', 'assistant')"
        )
        if exclude_session is not None:
            sql += " AND m.session_id != :exclude"
        async with self.archive.reader() as db:
            rows = await db.execute_fetchall(sql, params)
        return {
            int(r[0]): (int(r[0]), str(r[1]), str(r[2]), float(r[3]), searchable(r[2], r[4]))
            for r in rows
        }

    # -- the hooks ------------------------------------------------------------------------

    async def context(self, subject: Subject) -> str:
        card = await self.cards.get(subject.key)
        # a session starts here: read the subject's vectors now, not on the first prefetch
        task = asyncio.create_task(self._warm(subject), name="local-warm")
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)
        return card.text if card is not None else ""

    async def _warm(self, subject: Subject) -> None:
        with contextlib.suppress(Exception):
            await self.vectors.matrix(subject.key)

    async def prefetch(self, subject: Subject, message: str) -> str:
        found = await self.search(
            subject,
            message,
            limit=self.settings.prefetch_results,
            min_similarity=self.settings.prefetch_similarity,
            exclude_session=self._running.get(subject.key),
            words_within_s=self.settings.prefetch_words_ms / 1000,
        )
        return "\n".join(self._line(item) for item in found)

    def _line(self, item: Recalled) -> str:
        who = "they said" if item.role == "user" else "you replied"
        text = " ".join(item.text.split())
        cut = self.settings.excerpt_chars
        if len(text) > cut:
            text = text[: cut - 1] + "…"
        return f"- {when(item.created_at)}, {who}: {text}"

    async def sync_turn(self, exchange: Exchange) -> None:
        if not exchange.subject.group:
            # a person has one private session at a time; a group's members may each have
            # a session of the group's own subject, so no one of them is "the running one"
            self._running[exchange.subject.key] = exchange.session_id
        self._wake.set()

    async def on_session_end(self, end: SessionEnd) -> None:
        if self._running.get(end.subject.key) == end.session_id:
            del self._running[end.subject.key]
        if self.writer is None or not any(role == "user" for role, _ in end.messages):
            return
        previous = await self.cards.get(end.subject.key)
        text = await self.writer(
            previous.text if previous else "", end.messages, self.settings.card_chars
        )
        await self.cards.put(end.subject.key, text, end.session_id)

    async def on_memory_write(self, subject: Subject, action: str, target: str, entry: str) -> None:
        """Nothing to mirror: the built-in memory is in the prompt already, and the card is
        about what the person did not state as a fact."""

    def tools(self, subject: Subject) -> Sequence[ProviderTool]:
        settings = self.settings
        running = self._running

        async def recall(query: str) -> dict[str, Any]:
            """Search everything this person and you said in past conversations by meaning,
            not only by words: finds what was said in other words than the query's. Use it
            when session_search finds nothing or the question is vague; each result gives the
            session_id and message_id to open with session_search."""
            found = await self.search(
                subject,
                query,
                limit=settings.recall_results,
                min_similarity=settings.recall_similarity,
                exclude_session=running.get(subject.key),
            )
            return {
                "results": [
                    {
                        "session_id": item.session_id,
                        "message_id": item.message_id,
                        "when": when(item.created_at),
                        "role": item.role,
                        "text": self._line(item).split(": ", 1)[1],
                    }
                    for item in found
                ]
            }

        return (recall,)

    # -- for operators --------------------------------------------------------------------

    async def card(self, subject: Subject) -> Card | None:
        return await self.cards.get(subject.key)

    async def status(self) -> dict[str, Any]:
        indexed, total = await self.vectors.counts()
        return {
            "provider": self.name,
            "model": self.embedder.model_id,
            "indexed": indexed,
            "to_index": max(0, total - indexed),
            "cards": await self.cards.count(),
            "indexer": "running" if self._indexer is not None else "stopped",
            "last_error": self.last_error,
        }


def _top(values: Any, n: int) -> list[int]:
    """Indexes of the ``n`` largest values, largest first."""
    import numpy as np  # noqa: PLC0415

    if n >= len(values):
        return [int(i) for i in np.argsort(-values)]
    part = np.argpartition(-values, n - 1)[:n]
    return [int(i) for i in part[np.argsort(-values[part])]]


def _lookup(ids: Any, sims: Any) -> Any:
    """``message id -> cosine`` over the sorted ``ids`` (0 for an id without a vector)."""
    import numpy as np  # noqa: PLC0415

    def similarity(message_id: int) -> float:
        at = int(np.searchsorted(ids, message_id))
        if at < len(ids) and int(ids[at]) == message_id:
            return float(sims[at])
        return 0.0

    return similarity
