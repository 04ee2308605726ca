"""The systems the recall benchmark asks through ``session_search``, and the local provider.

``ask_tool`` puts every question to its owner's ``session_search`` tool (``ours``, and
``ours + local`` below): the ranking is the order of the matches in the JSON, *+ context*
every id the JSON shows; it times each call and measures the JSON.

With ``--local``, after every message is embedded (timed; the model on one core, as the
gateway's indexer):

* **ours + local**: the real ``session_search`` tool with the provider's ranking by meaning
  fused into discover, wired as the agent wires it (``SearchTool(semantic=
  Recall(provider).ranker())``: the prefetch's time bound, counted per outcome), invoked
  exactly as *ours* is;
* **local**: the provider's own fused search (``LocalProvider.search``, ``min_similarity``
  0: a ranking, not a prefetch's cut).

``CachedEmbedder`` keeps the archive's embeddings in a file (``--embed-cache DIR``), keyed by
the model id, the tokens it reads and the text's hash, so a second run on the same bank
skips the minutes of CPU the model takes; questions are never taken from it (their
embedding is part of the tool's latency). Bench code only: the product embeds every time.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.recall import Recall
from agent_core.tools import Tool
from agent_core.tools.search import SearchTool, session_search_tool
from memory.archive import FUSION, Archive, Fusion
from memory.providers import Subject
from memory.providers.local import Embedder, LocalProvider, embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "LIMIT",
    "CachedEmbedder",
    "Calls",
    "ask_tool",
    "fused_tools",
    "hit_ids",
    "local_search",
    "shown_ids",
    "start_provider",
]

LIMIT = 10  # results asked of the tool (its maximum), messages taken from a baseline


@dataclass
class Calls:
    """What one tool system cost: each discover call's latency and JSON size (``limit``
    10), the JSON size of the default call (the question alone), and outcomes counted."""

    latencies_ms: list[float] = field(default_factory=list)
    output_chars: list[int] = field(default_factory=list)
    default_chars: list[int] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)


class CachedEmbedder(Embedder):
    """An ``Embedder`` that reads and writes ``path`` while ``caching`` is on."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vector BLOB)")
        self.caching = True
        self.hits = self.misses = 0

    def _key(self, text: str) -> str:
        name = f"{self.model_id}\0{embedder.MAX_TOKENS}\0{text}"
        return hashlib.sha256(name.encode("utf-8")).hexdigest()

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np  # noqa: PLC0415

        if not self.caching:
            return super().embed(texts)
        keys = [self._key(text) for text in texts]
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(f"SELECT key, vector FROM v WHERE key IN ({marks})", keys)  # noqa: S608
        found = {key: np.frombuffer(blob, dtype=np.float32) for key, blob in rows}
        missing = [n for n, key in enumerate(keys) if key not in found]
        if missing:
            made = super().embed([texts[n] for n in missing])
            self.db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)",
                [(keys[n], made[i].astype(np.float32).tobytes()) for i, n in enumerate(missing)],
            )
            found.update((keys[n], made[i]) for i, n in enumerate(missing))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        return np.stack([found[key] for key in keys]).astype(np.float32)


def hit_ids(payload: dict[str, Any]) -> list[int]:
    """The matches of each result (best first), results in order."""
    return [m["id"] for result in payload.get("results", []) for m in result["matches"]]


def shown_ids(payload: Any) -> list[int]:
    """Every message id the JSON shows, in order of appearance (first time only)."""
    seen: dict[int, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "id" in node and "role" in node and isinstance(node["id"], int):
                seen.setdefault(node["id"], None)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(payload)
    return list(seen)


def tools_for(search: SearchTool, people: Mapping[str, Sequence[str]]) -> dict[str, Tool]:
    """Each person's ``session_search`` tool over ``search``, as the agent binds it (with
    what the person is called: ``people`` maps person id -> names)."""
    return {
        person: session_search_tool(
            search, person=person, current_session=lambda: None, names=partial(tuple, names)
        )
        for person, names in people.items()
    }


async def ask_tool(
    tools: dict[str, Tool],
    questions: Sequence[Any],
    to_gid: dict[int, str],
    rankings: tuple[dict[str, list[str]], dict[str, list[str]]],
    calls: Calls,
) -> None:
    """Every question through its owner's ``session_search`` tool: ``rankings`` gets the
    matches and every id shown; ``calls`` the latency and size of each call."""
    matches, shown = rankings
    for question in questions:
        tool = tools[question.person]
        started = time.perf_counter()
        text = await tool.invoke(json.dumps({"query": question.text, "limit": LIMIT}))
        calls.latencies_ms.append((time.perf_counter() - started) * 1000)
        calls.output_chars.append(len(text))
        payload = json.loads(text)
        if payload.get("success") is not True or payload.get("mode") != "discover":
            raise RuntimeError(f"{question.id}: session_search failed: {text[:300]}")
        matches[question.id] = [to_gid[i] for i in hit_ids(payload)]
        shown[question.id] = [to_gid[i] for i in shown_ids(payload)]
        plain = await tool.invoke(json.dumps({"query": question.text}))
        calls.default_chars.append(len(plain))


async def start_provider(archive: Archive, cache: Path | None) -> tuple[LocalProvider, float]:
    """The local provider over ``archive`` with every message embedded; the seconds that
    took (``cache``: a directory for ``CachedEmbedder``)."""
    model = CachedEmbedder(cache / "embeddings.db") if cache is not None else Embedder()
    provider = LocalProvider(archive, embedder=model)
    await provider.start(index=False)
    started = time.perf_counter()
    await provider.reindex()
    seconds = time.perf_counter() - started
    if isinstance(model, CachedEmbedder):
        model.caching = False  # a question's embedding is part of what is measured
    return provider, seconds


def fused_tools(
    archive: Archive,
    provider: LocalProvider,
    people: Mapping[str, Sequence[str]],
    calls: Calls,
    fusion: Fusion = FUSION,
) -> dict[str, Tool]:
    """Each person's ``session_search`` tool with the provider's ranking fused in, wired as
    the agent wires it; each ranking call's outcome is counted into ``calls``."""

    def observe(provider_name: str, hook: str, outcome: str, seconds: float) -> None:
        calls.outcomes[outcome] += 1

    ranker = Recall(provider, observe=observe).ranker()
    return tools_for(SearchTool(archive, semantic=ranker, fusion=fusion), people)


async def local_search(
    provider: LocalProvider,
    questions: Sequence[Any],
    to_gid: dict[int, str],
    people: Mapping[str, Sequence[str]],
) -> dict[str, list[str]]:
    """The provider's own fused search per question, as the person who owns it (the
    subject with the person's names, as the agent tells a provider)."""
    ranking = {}
    for question in questions:
        subject = Subject(question.person, names=tuple(people[question.person]))
        found = await provider.search(subject, question.text, limit=LIMIT, min_similarity=0.0)
        ranking[question.id] = [to_gid[item.message_id] for item in found]
    return ranking
