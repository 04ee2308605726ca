#!/usr/bin/env python3
"""Recall of planted facts asked by paraphrase: the words alone beside the local memory
provider, on the same data in the same run (issue 14's measure: "recall@3 of planted facts
asked by paraphrase (the archive benchmark's paraphrase recall is 0.56 today)").

The data is the archive benchmark's (``bench/archive_data.py``, ``bench/archive_facts.py``):
generated chat among ``--people`` people (the archive benchmark's density: 1M messages among
2,000 people is 500 a person), with ``--facts`` facts planted once each in a random private
session ("I parked the car on level 4 of the Oak Street garage"), two decoys per fact that
share its obvious keyword, and each fact asked three times by its owner as its template says
(15 of the 16 templates: one direct question and two paraphrases, "where did I leave my
car?"; one: two direct and one paraphrase). Every path is scoped to the owner:

* **words**: ``Searcher.find``, the archive's word search: is the fact's session among its
  first three sessions (the archive benchmark's row);
* **recall tool**: the provider's ``recall(query)`` tool, called as the model calls it (its
  messages, none under ``recall_similarity``): the fact's session among their first three;
* **prefetch**: the provider's ``prefetch``, what is appended to the user's message before
  the model call (at most three messages, none under ``prefetch_similarity``, the word
  search within its 25 ms budget): does it hold the fact's text;
* **session_search + local**: the ``session_search`` tool at its default ``limit`` (3), with
  the provider's ranking by meaning fused in, as the agent runs it: the fact's session among
  its results (the ranking's outcomes are counted: one that was late is words alone).

Caveat: the generator's background chatter is word salad with chat's word frequencies, not
its meaning; a sentence model finds a fact among it more easily than among real talk about
the same things. The decoys are real sentences on the fact's topic. ``bench/recall_bench.py
--local`` measures the harder case (questions that name the person, natural chatter).

    make bench-facts          # 50,000 messages, 100 people, 100 facts: about 10 minutes
    .venv/bin/python bench/facts_bench.py --messages 20000 --people 40 --facts 40
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from agent_core.recall import Recall
from agent_core.tools.search import SearchTool
from bench.archive_data import generate
from bench.archive_load import LoadState, connect_sync, load_bulk
from bench.recall_systems import tools_for
from memory.archive import Archive, Searcher
from memory.providers import Subject
from memory.providers.local import Embedder, LocalProvider

PATHS = ("words", "recall tool", "prefetch", "session_search + local")
TOP = 3  # sessions, as the model asks by default


@dataclass(slots=True)
class Tally:
    asked: int = 0
    found: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PATHS, 0))


def first_sessions(session_ids: Sequence[str], n: int = TOP) -> list[str]:
    """The first ``n`` distinct sessions, in order."""
    return list(dict.fromkeys(session_ids))[:n]


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    data = generate(args.seed, args.messages, args.people, args.facts)
    db_path = workdir / "state.db"
    async with await Archive.open(db_path):
        pass  # the schema
    db = connect_sync(db_path)
    load_bulk(db, data, begin=0, stop=len(data.exchanges), state=LoadState(), label="load")
    db.close()
    owners = sorted({fact.owner for fact in data.facts})
    seconds: dict[str, float] = {}
    tallies: dict[str, Tally] = {}
    examples: list[str] = []
    async with await Archive.open(db_path) as archive:
        provider = LocalProvider(archive, embedder=Embedder(threads=args.threads))
        await provider.start(index=False)
        started = time.perf_counter()
        embedded = await provider.reindex()
        seconds["embed"] = time.perf_counter() - started
        provider.embedder = Embedder(threads=1)  # questions as in the gateway: one core
        searcher = Searcher(archive)
        outcomes: Counter[str] = Counter()

        def observe(provider_name: str, hook: str, outcome: str, seconds: float) -> None:
            outcomes[outcome] += 1

        ranker = Recall(provider, observe=observe).ranker()
        tools = tools_for(SearchTool(archive, semantic=ranker), {o: () for o in owners})
        started = time.perf_counter()
        for fact in data.facts:
            sid = data.sessions[fact.session].id
            for question, kind in fact.questions:
                subject = Subject(fact.owner)
                hits, _ = await searcher.find(question, viewer=fact.owner, limit=TOP)
                (recall,) = provider.tools(subject)  # the model's tool, as it calls it
                recalled = (await recall(query=question))["results"]
                prefetched = await provider.prefetch(subject, question)  # the block's text
                payload = json.loads(
                    await tools[fact.owner].invoke(json.dumps({"query": question}))
                )
                if payload.get("success") is not True:
                    raise RuntimeError(f"session_search failed: {payload}")
                shown = [result["session_id"] for result in payload.get("results", [])]
                ok = {
                    "words": sid in first_sessions([h.session_id for h in hits]),
                    "recall tool": sid in first_sessions([r["session_id"] for r in recalled]),
                    "prefetch": " ".join(fact.text.split())[:50] in prefetched,
                    "session_search + local": sid in shown[:TOP],
                }
                for key in (kind, "all"):
                    tally = tallies.setdefault(key, Tally())
                    tally.asked += 1
                    for path, hit in ok.items():
                        tally.found[path] += hit
                if kind == "paraphrase" and not ok["recall tool"] and len(examples) < args.examples:
                    examples.append(f"  missed: {question!r}  (fact: {fact.text!r})")
        seconds["ask"] = time.perf_counter() - started
        await provider.aclose()
    return {
        "messages": data.messages,
        "people": args.people,
        "facts": len(data.facts),
        "embedded": embedded,
        "seconds": seconds,
        "recall": {
            kind: {"asked": t.asked, **{p: t.found[p] / t.asked for p in PATHS}}
            for kind, t in tallies.items()
        },
        "examples": examples,
        "ranking_outcomes": dict(outcomes),
    }


def render(result: dict[str, Any]) -> str:
    lines = [
        f"planted facts: {result['facts']} facts among {result['messages']:,} messages of"
        f" {result['people']} people ({platform.python_implementation()}"
        f" {platform.python_version()}), asked by their owners; the fact's session among the"
        f" first {TOP} (prefetch: the fact's own message recalled)",
        f"{'kind':<12} {'n':>5} " + " ".join(f"{p:>22}" for p in PATHS),
    ]
    for kind in ("direct", "paraphrase", "all"):
        row = result["recall"].get(kind)
        if row is None:
            continue
        lines.append(f"{kind:<12} {row['asked']:>5} " + " ".join(f"{row[p]:>22.3f}" for p in PATHS))
    seconds = result["seconds"]
    lines.append(
        f"embedded {result['embedded']:,} messages in {seconds['embed']:.0f} s;"
        f" asked every path in {seconds['ask']:.0f} s"
    )
    outcomes = result["ranking_outcomes"]
    lines.append(
        "session_search's ranking by meaning answered: "
        + (", ".join(f"{name} {n}" for name, n in sorted(outcomes.items())) or "never asked")
    )
    if result["examples"]:
        lines += ["paraphrases the recall tool missed:", *result["examples"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--facts", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2, help="the model's, for the backfill")
    parser.add_argument("--examples", type=int, default=6, help="misses to print")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    missing = Embedder.installed()
    if missing:
        print(f"facts_bench: {missing}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mnemo-facts-bench-") as tmp:
        result = asyncio.run(run(args, Path(tmp)))
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
