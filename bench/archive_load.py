"""How the archive benchmark writes its data set, and what the files weigh afterwards:
through the archive's API (``start_session`` / ``append_exchange``, one transaction per
exchange), in bulk with ``executemany`` into the same schema (leaving the state the API
would), into the plain single-table FTS5 baseline, and as JSONL records for
``import_records``; then the size of a database with its WAL, and per group of SQLite
objects from ``dbstat``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.archive_common import BATCH_MESSAGES, Progress
from bench.archive_data import Dataset, SessionPlan
from memory.archive.cjk import backfill
from memory.archive.database import Archive, NewMessage, SessionSpec, scope_token
from memory.archive.records import title_of
from memory.archive.writer import PRAGMAS

# -- loading: the archive API, bulk executemany into the same schema, the baseline ------------


def session_spec(plan: SessionPlan) -> SessionSpec:
    return SessionSpec(
        id=plan.id,
        platform=plan.platform,
        chat_id=plan.chat_id,
        chat_type="group" if plan.group else "private",
        people=(plan.owner,),
        session_key=f"{plan.platform}:{plan.chat_id}",
        started_at=plan.started_at,
    )


def scope_of(members: set[str]) -> str:
    return " ".join(scope_token(p) for p in sorted(members))


@dataclass(slots=True)
class LoadState:
    """Which sessions exist and who is in them, shared by the API and the bulk loaders."""

    members: dict[str, set[str]] = field(default_factory=dict)
    first_ids: list[int] = field(default_factory=list)  # first message id of each exchange

    def note(self, plan: SessionPlan, speaker: str) -> None:
        self.members.setdefault(plan.id, {plan.owner}).add(speaker)


async def load_api(archive: Archive, data: Dataset, stop: int, state: LoadState) -> float:
    """Exchanges [0, stop) through start_session / append_exchange; returns seconds."""
    total = data.message_count(stop)
    progress = Progress("ingest ours (append_exchange)", total)
    done = 0
    start = time.perf_counter()
    for exchange in data.exchanges[:stop]:
        plan = data.sessions[exchange.session]
        if exchange.first:
            await archive.start_session(session_spec(plan))
        ids = await archive.append_exchange(plan.id, exchange.messages, people=(exchange.speaker,))
        state.first_ids.append(ids[0])
        state.note(plan, exchange.speaker)
        done += len(ids)
        progress.update(done)
    return time.perf_counter() - start


def connect_sync(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in PRAGMAS:
        db.execute(pragma)
    return db


MESSAGE_INSERT = (
    "INSERT INTO messages (session_id, role, speaker, content, tool_calls, tool_call_id,"
    " tool_name, created_at, prompt_tokens, completion_tokens, cached_tokens, external_id,"
    " scope) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def message_row(session_id: str, m: NewMessage, scope: str) -> tuple[Any, ...]:
    calls = json.dumps(list(m.tool_calls), ensure_ascii=False) if m.tool_calls else None
    return (
        session_id,
        m.role,
        m.speaker,
        m.content,
        calls,
        m.tool_call_id,
        m.tool_name,
        m.created_at,
        m.prompt_tokens,
        m.completion_tokens,
        m.cached_tokens,
        m.external_id,
        scope,
    )


def load_bulk(
    db: sqlite3.Connection,
    data: Dataset,
    *,
    begin: int,
    stop: int,
    state: LoadState,
    label: str,
) -> float:
    """Exchanges [begin, stop) with executemany, BATCH_MESSAGES rows per transaction.

    Ends in the same state the API would leave: session rows with counts, titles and
    scopes, ``session_people``, and earlier messages re-scoped when someone joins.
    """
    total = data.message_count(stop) - data.message_count(begin)
    progress = Progress(label, total)
    next_id = (db.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]) + 1
    done = 0
    start = time.perf_counter()
    index = begin
    while index < stop:
        db.execute("BEGIN IMMEDIATE")
        batch_after = next_id - 1  # the CJK gram rows of this batch are added at its end
        rows: list[tuple[Any, ...]] = []
        touched: dict[str, list[Any]] = {}  # id -> [count, last, title]
        batch = 0
        while index < stop and batch < BATCH_MESSAGES:
            exchange = data.exchanges[index]
            plan = data.sessions[exchange.session]
            if exchange.first:
                db.execute(
                    "INSERT OR IGNORE INTO sessions (id, root_id, session_key, platform, chat_id,"
                    " chat_type, started_at, last_active_at) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        plan.id,
                        plan.id,
                        f"{plan.platform}:{plan.chat_id}",
                        plan.platform,
                        plan.chat_id,
                        "group" if plan.group else "private",
                        plan.started_at,
                        plan.started_at,
                    ),
                )
                db.execute(
                    "INSERT OR IGNORE INTO session_people VALUES (?, ?)", (plan.id, plan.owner)
                )
            members = state.members.setdefault(plan.id, {plan.owner})
            if exchange.speaker not in members:
                members.add(exchange.speaker)
                db.executemany(MESSAGE_INSERT, rows)
                rows.clear()
                db.execute(
                    "INSERT OR IGNORE INTO session_people VALUES (?, ?)",
                    (plan.id, exchange.speaker),
                )
                scope = scope_of(members)
                db.execute(
                    "UPDATE messages SET scope = ? WHERE session_id = ? AND scope != ?",
                    (scope, plan.id, scope),
                )
            scope = scope_of(members)
            state.first_ids.append(next_id)
            for message in exchange.messages:
                rows.append(message_row(plan.id, message, scope))
            next_id += len(exchange.messages)
            entry = touched.setdefault(plan.id, [0, 0.0, None, scope])
            entry[0] += len(exchange.messages)
            entry[1] = max(entry[1], *(m.created_at or 0.0 for m in exchange.messages))
            entry[2] = entry[2] or title_of(exchange.messages[0].content)
            entry[3] = scope
            batch += len(exchange.messages)
            index += 1
        db.executemany(MESSAGE_INSERT, rows)
        db.executemany(
            "UPDATE sessions SET message_count = message_count + ?, last_active_at ="
            " max(last_active_at, ?), title = COALESCE(title, ?), scope = ? WHERE id = ?",
            [(c, last, title, scope, sid) for sid, (c, last, title, scope) in touched.items()],
        )
        backfill(db, after=batch_after)  # as the writer does, with the scopes as they are now
        db.execute("COMMIT")
        done += batch
        progress.update(done)
    elapsed = time.perf_counter() - start
    got = db.execute("SELECT max(id) FROM messages").fetchone()[0]
    if got != next_id - 1:
        raise RuntimeError(f"bulk load: expected last id {next_id - 1}, got {got}")
    return elapsed


BASELINE_SCHEMA = (
    "CREATE TABLE msgs(id INTEGER PRIMARY KEY, person TEXT, session TEXT, content TEXT)",
    "CREATE VIRTUAL TABLE msgs_fts USING fts5(content, content='msgs', content_rowid='id',"
    " tokenize='unicode61')",
    "CREATE TRIGGER msgs_ai AFTER INSERT ON msgs BEGIN"
    " INSERT INTO msgs_fts(rowid, content) VALUES (new.id, new.content); END",
)


def load_baseline(path: Path, data: Dataset, stop: int | None = None) -> float:
    """The plain single table + one unicode61 FTS5 index, executemany in big transactions."""
    rows = [
        (data.sessions[e.session].owner, data.sessions[e.session].id, m.content)
        for e in data.exchanges[:stop]
        for m in e.messages
    ]
    db = connect_sync(path)
    for statement in BASELINE_SCHEMA:
        db.execute(statement)
    progress = Progress("ingest baseline", len(rows))
    start = time.perf_counter()
    for offset in range(0, len(rows), BATCH_MESSAGES):
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "INSERT INTO msgs(person, session, content) VALUES (?,?,?)",
            rows[offset : offset + BATCH_MESSAGES],
        )
        db.execute("COMMIT")
        progress.update(offset + BATCH_MESSAGES)
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def import_lines(data: Dataset, stop: int) -> list[str]:
    """User and assistant messages of exchanges [0, stop) as JSONL import records."""
    lines: list[str] = []
    for exchange in data.exchanges[:stop]:
        plan = data.sessions[exchange.session]
        for message in exchange.messages:
            if message.role not in ("user", "assistant"):
                continue
            stamp = datetime.fromtimestamp(message.created_at or 0.0, UTC).isoformat()
            person = exchange.speaker if message.role == "user" else plan.owner
            record = {
                "session": plan.id,
                "person": person,
                "platform": plan.platform,
                "chat": plan.chat_id,
                "role": message.role,
                "content": message.content,
                "created_at": stamp,
                "external_id": f"x{len(lines)}",
            }
            lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def wal_bytes(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def db_bytes(path: Path) -> int:
    return path.stat().st_size + wal_bytes(path)


def object_sizes(path: Path) -> dict[str, int]:
    """Bytes per group of SQLite objects (dbstat), main file only."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    groups: dict[str, int] = {}
    for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        if name.startswith("messages_fts"):
            key = "word index (messages_fts*)"
        elif name.startswith("messages_trigram"):
            key = "trigram index (messages_trigram*)"
        elif name.startswith("messages_cjk"):
            key = "CJK gram index (messages_cjk*)"
        elif name == "messages":
            key = "messages table"
        elif name.startswith("messages"):
            key = "messages b-tree indexes"
        elif name.startswith("msgs_fts"):
            key = "baseline FTS5 (msgs_fts*)"
        elif name == "msgs":
            key = "baseline table (msgs)"
        elif name.startswith("session"):
            key = "sessions + session_people"
        else:
            key = "other (schema, freelist)"
        groups[key] = groups.get(key, 0) + int(size)
    db.close()
    return groups
