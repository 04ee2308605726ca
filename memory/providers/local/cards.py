"""Person cards: a bounded, model-written picture of a person, one per memory subject.

USER.md holds what a person said about themselves ("I live in Lyon", "answer in French").
The card holds what shows over time: their goals, habits, working patterns, what to pay
attention to with them. The review model rewrites it when a session ends, from that
session and the previous card (``CardWriter``, implemented in ``agent_core.card``); it is
the local provider's session ``context``. A card is model output about a person, so it is
scanned like a memory entry before it is stored and kept within ``limit`` characters; a
rewrite that fails the scan keeps the previous card.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.archive import Archive
from memory.scan import scan

__all__ = ["Card", "CardStore", "CardWriter"]

log = logging.getLogger(__name__)


class CardWriter(Protocol):
    """Rewrites a card from the previous one and a session's (role, text) lines."""

    def __call__(
        self, previous: str, said: Sequence[tuple[str, str]], limit: int
    ) -> Awaitable[str]: ...


@dataclass(frozen=True, slots=True)
class Card:
    subject: str
    text: str
    session_id: str | None
    updated_at: float


class CardStore:
    """Cards in ``archive``'s database (table ``local_cards``, made by ``VectorStore``)."""

    def __init__(self, archive: Archive, limit: int = 1500) -> None:
        self.archive = archive
        self.limit = limit

    async def get(self, subject: str) -> Card | None:
        async with self.archive.reader() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT text, session_id, updated_at FROM local_cards WHERE subject = ?",
                    (subject,),
                )
            )
        if not rows:
            return None
        text, session_id, updated_at = rows[0]
        return Card(subject, str(text), session_id, float(updated_at))

    async def put(self, subject: str, text: str, session_id: str | None) -> Card | None:
        """Store ``text`` as the subject's card (cut to the limit), unless it is empty or the
        scanner finds something in it; the stored card, or None when nothing was stored."""
        text = text.strip()
        if len(text) > self.limit:
            text = text[: self.limit - 1].rstrip() + "…"
        if not text:
            return None
        findings = scan(text)
        if findings:
            log.warning("person card for a subject not stored: the scanner found %s",
                        ", ".join(sorted({f.id for f in findings})))  # fmt: skip
            return None
        now = time.time()

        def run(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO local_cards(subject, text, session_id, updated_at)"
                " VALUES (?, ?, ?, ?)",
                (subject, text, session_id, now),
            )

        await self.archive.transact(run)
        return Card(subject, text, session_id, now)

    async def count(self) -> int:
        async with self.archive.reader() as db:
            rows = list(await db.execute_fetchall("SELECT count(*) FROM local_cards"))
        return int(rows[0][0])
