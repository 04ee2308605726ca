"""The local provider's vectors: one per archived message, in the archive's own file.

Tables (created by ``VectorStore.prepare``; they live in ``state.db`` beside the messages, so
a backup of the home folder holds them, and a deleted message takes its vector with it):

* ``local_vectors(message_id → messages.id ON DELETE CASCADE, vector)``: the message's unit
  vector as float16 bytes (768 bytes a message; cosine differences from float32 are below
  1e-3, far under what separates a relevant message from another);
* ``local_cards(subject, text, session_id, updated_at)``: each person's card
  (``memory.providers.local.cards``);
* ``local_meta(key, value)``: the model the vectors were made with and how far the indexer
  got (the highest message id it has looked at). A different model id means the vectors
  are from another space: they are dropped and the archive is indexed again.

Only what people and the bot *said* is embedded (user and assistant messages with text); the
header line the agent adds to user messages is not part of it (``without_header``).

Search is exact (a matrix product over the person's vectors, no approximate index): at
100,000 messages a person that is 38M multiply-adds, a few milliseconds on one core. Each
person's matrix is read once and then kept, in float32, in a cache bounded in bytes
(least recently used out first); new vectors are appended to a cached matrix as they come.
Which messages a person may see is decided by the archive's own rule in SQL
(``visible_clause``: sessions the person took part in) when the matrix is read, and again
when hits are read back, so a stale cache can never show another person's message.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.archive import Archive, visible_clause, without_header

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Ids = npt.NDArray[np.int64]

__all__ = ["Pending", "VectorStore", "searchable"]

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS local_vectors (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        vector BLOB NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS local_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS local_cards (
        subject TEXT PRIMARY KEY,
        text TEXT NOT NULL,
        session_id TEXT,
        updated_at REAL NOT NULL
    )""",
)
#: What is embedded: text people and the bot said.
SAID = "m.role IN ('user', 'assistant') AND m.content != ''"
EMBED_CHARS = 1000  # the model reads 64 tokens (~250 characters of English); a margin


def searchable(role: str, content: str) -> str:
    """The text of a message that is embedded (and shown): without the header line."""
    text = without_header(content) if role == "user" else content
    return text[:EMBED_CHARS]


@dataclass(frozen=True, slots=True)
class Pending:
    """Messages not yet embedded: (id, text) in id order, and the id to resume after."""

    items: tuple[tuple[int, str], ...]
    last_id: int


@dataclass(slots=True)
class _Cached:
    ids: Ids
    matrix: Matrix
    upto: int  # the highest local_vectors message id read into it


class VectorStore:
    """Vectors in ``archive``'s database, and a bounded cache of each person's matrix."""

    def __init__(
        self, archive: Archive, model_id: str, dimension: int, *, cache_bytes: int = 256 << 20
    ) -> None:
        self.archive = archive
        self.model_id = model_id
        self.dimension = dimension
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[str, _Cached] = OrderedDict()

    async def prepare(self) -> None:
        """Create the tables; drop vectors made by another model."""

        def run(db: sqlite3.Connection) -> None:
            for statement in SCHEMA:
                db.execute(statement)
            row = db.execute("SELECT value FROM local_meta WHERE key = 'model'").fetchone()
            if row is not None and row[0] != self.model_id:
                db.execute("DELETE FROM local_vectors")
                db.execute("DELETE FROM local_meta WHERE key = 'cursor'")
            db.execute(
                "INSERT OR REPLACE INTO local_meta(key, value) VALUES ('model', ?)",
                (self.model_id,),
            )

        await self.archive.transact(run)
        self._cache.clear()

    async def pending(self, limit: int) -> Pending:
        """Up to ``limit`` messages past the cursor that should have a vector."""
        async with self.archive.reader() as db:
            rows = list(
                await db.execute_fetchall("SELECT value FROM local_meta WHERE key = 'cursor'")
            )
            cursor = int(rows[0][0]) if rows else 0
            found = await db.execute_fetchall(
                f"SELECT m.id, m.role, m.content FROM messages m WHERE m.id > ? AND {SAID}"
                " ORDER BY m.id LIMIT ?",
                (cursor, limit),
            )
        items = tuple((int(r[0]), searchable(r[1], r[2])) for r in found)
        return Pending(items, items[-1][0] if items else cursor)

    async def save(self, ids: Sequence[int], vectors: Matrix, last_id: int) -> None:
        """Store vectors for ``ids`` (messages deleted meanwhile are skipped) and move the
        cursor to ``last_id``, in one transaction."""
        import numpy as np  # noqa: PLC0415

        blobs = [row.astype(np.float16).tobytes() for row in vectors]

        def run(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO local_vectors(message_id, vector)"
                " SELECT ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)",
                [(i, blob, i) for i, blob in zip(ids, blobs, strict=True)],
            )
            db.execute(
                "INSERT OR REPLACE INTO local_meta(key, value) VALUES ('cursor', ?)",
                (str(last_id),),
            )

        await self.archive.transact(run)

    async def clear(self) -> None:
        """Drop every vector and start the indexer from the first message again."""

        def run(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM local_vectors")
            db.execute("DELETE FROM local_meta WHERE key = 'cursor'")

        await self.archive.transact(run)
        self._cache.clear()

    async def counts(self) -> tuple[int, int]:
        """(messages with a vector, messages that should have one)."""
        async with self.archive.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    f"SELECT (SELECT count(*) FROM local_vectors),"
                    f" (SELECT count(*) FROM messages m WHERE {SAID})"
                )
            )
        return int(rows[0][0]), int(rows[0][1])

    async def matrix(self, viewer: str) -> tuple[Ids, Matrix]:
        """The message ids and vectors ``viewer`` may see (cached; new vectors appended).

        ``upto`` of a cached matrix is the newest vector id it has *looked at*, the viewer's
        or not: when no vector is newer (one indexed lookup), the cache is answered as it is,
        without the scoped join."""
        import numpy as np  # noqa: PLC0415

        cached = self._cache.get(viewer)
        upto = cached.upto if cached is not None else 0
        async with self.archive.reader() as db:
            found = list(await db.execute_fetchall("SELECT max(message_id) FROM local_vectors"))
            newest = int(found[0][0] or 0)
            rows = []
            if cached is None or newest > upto:
                rows = list(
                    await db.execute_fetchall(
                        "SELECT v.message_id, v.vector FROM local_vectors v"
                        " JOIN messages m ON m.id = v.message_id"
                        f" WHERE v.message_id > :upto AND v.message_id <= :newest"
                        f" AND {visible_clause('m.session_id')} ORDER BY v.message_id",
                        {"upto": upto, "newest": newest, "viewer": viewer},
                    )
                )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
        fresh = vectors.reshape(len(rows), self.dimension).astype(np.float32)
        if cached is not None:
            ids = np.concatenate([cached.ids, ids]) if rows else cached.ids
            fresh = np.concatenate([cached.matrix, fresh]) if rows else cached.matrix
        entry = _Cached(ids, fresh, max(newest, upto))
        self._cache[viewer] = entry
        self._cache.move_to_end(viewer)
        self._trim()
        return entry.ids, entry.matrix

    def _trim(self) -> None:
        total = sum(c.matrix.nbytes + c.ids.nbytes for c in self._cache.values())
        while len(self._cache) > 1 and total > self.cache_bytes:
            _, dropped = self._cache.popitem(last=False)
            total -= dropped.matrix.nbytes + dropped.ids.nbytes
