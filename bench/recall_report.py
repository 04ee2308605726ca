"""The recall benchmark's report: recall@k, the table by kind and system, the tools' cost
(latency and JSON size per call), misses to look at (``tune`` only) and the figures
``--json`` writes. ``bench/recall_bench.py`` runs the benchmark and says what it measures.
"""

from __future__ import annotations

import math
import platform
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bench.recall_bank_base import KINDS
from bench.recall_systems import LIMIT

if TYPE_CHECKING:
    from bench.recall_bench import Result

__all__ = ["KS", "figures", "header", "misses", "percentile", "recall_at", "render"]

KS = (3, 5, 10)


def recall_at(ranking: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The fraction of ``evidence`` among the first ``k`` ids of ``ranking``."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    return len(wanted.intersection(ranking[:k])) / len(wanted)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def header(result: Result) -> str:
    config = result.config
    return (
        f"recall benchmark: bank {config.bank}, {config.people} people, {result.sessions}"
        f" sessions, {result.messages:,} messages, {len(result.questions)} questions"
        f" (seed {config.seed}{'' if config.headers else ', no time headers'}"
        f"{'' if config.names else ', no names'});"
        f" Python {platform.python_version()},"
        f" SQLite {sqlite3.sqlite_version}"
    )


def render(result: Result) -> str:
    """The recall table (kinds x systems), then the tool's latency and output size."""
    counts = result.counts()
    cell = 18
    rows = [
        f"{'':12}{'':>5}" + "".join(f" | {system:<{cell - 3}}" for system in result.systems),
        f"{'kind':12}{'n':>5}"
        + "".join(" | " + "".join(f"{'@' + str(k):>5}" for k in KS) for _ in result.systems),
    ]
    for kind in (*KINDS, None):
        n = counts[kind] if kind is not None else len(result.questions)
        line = f"{kind or 'all':12}{n:>5}"
        for system in result.systems:
            line += " | " + "".join(f"{result.recall(system, kind, k):5.2f}" for k in KS)
        rows.append(line)
    rows.insert(2, "-" * len(rows[1]))
    rows.insert(len(rows) - 1, "-" * len(rows[1]))
    rows.append("")
    for system in ("ours + context", "ours + local + context"):
        if system not in result.rankings:
            continue
        shown = [len(ids) for ids in result.rankings[system].values()]
        every = {kind or "all": result.recall(system, kind, 10**6) for kind in (*KINDS, None)}
        rows.append(
            f"{system}, every id the JSON shows (mean {sum(shown) / max(1, len(shown)):.1f}"
            " ids a call): " + ", ".join(f"{kind} {value:.2f}" for kind, value in every.items())
        )
    for system, calls in result.calls.items():
        latency, output, default = calls.latencies_ms, calls.output_chars, calls.default_chars
        rows += [
            f"{system}: discover, limit {LIMIT}: latency p50 {percentile(latency, 50):.1f} ms,"
            f" p95 {percentile(latency, 95):.1f} ms; output mean {_mean(output):,.0f} chars,"
            f" p95 {percentile(output, 95):,.0f}, max {max(output, default=0):,}"
            f" ({len(latency)} calls)",
            f"{system}: discover, default arguments (limit 3): output mean"
            f" {_mean(default):,.0f} chars, p95 {percentile(default, 95):,.0f},"
            f" max {max(default, default=0):,}",
        ]
        if calls.outcomes:
            counted = ", ".join(f"{name} {n}" for name, n in sorted(calls.outcomes.items()))
            rows.append(f"{system}: the ranking by meaning answered: {counted}")
    rows.append(
        "seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in result.seconds.items())
    )
    return "\n".join(rows)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / max(1, len(values))


def misses(result: Result, per_kind: int, system: str = "ours") -> str:
    """Up to ``per_kind`` questions of each kind that ``system`` (a tool) missed at @10, with
    their evidence and what it showed instead (for developing on ``tune``; never used on
    ``heldout``)."""
    if result.config.bank == "heldout":
        raise ValueError("the held-out bank is not inspected: use --bank tune")
    lines = []
    for kind in KINDS:
        shown = 0
        for question in result.questions:
            ours = result.rankings[system][question.id]
            if question.kind != kind or recall_at(ours, question.evidence, 10) == 1.0:
                continue
            if shown == per_kind:
                break
            shown += 1
            lines.append(f"[{kind}] {question.id}: {question.text}  ->  {question.answer}")
            for mid in question.evidence:
                session = mid.rsplit("/", 1)[0]
                same = [hit for hit in ours if hit.rsplit("/", 1)[0] == session]
                where = (
                    f"found at {ours.index(mid) + 1}"
                    if mid in ours
                    else f"its session at {ours.index(same[0]) + 1} as {same[0]}"
                    if same
                    else "its session not in the results"
                )
                lines.append(f"    evidence {mid} ({where}): {result.texts[mid]}")
            for rank, mid in enumerate(ours[:3], 1):
                lines.append(f"    ours {rank}. {mid}: {result.texts[mid]}")
    return "\n".join(lines)


def figures(result: Result) -> dict[str, Any]:
    """What ``--json`` writes."""
    config = result.config
    return {
        "bank": config.bank,
        "people": config.people,
        "sessions_per_person": config.sessions,
        "seed": config.seed,
        "headers": config.headers,
        "names": config.names,
        "sessions": result.sessions,
        "messages": result.messages,
        "questions": result.counts() | {"all": len(result.questions)},
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "recall": {
            system: {
                kind or "all": {str(k): round(result.recall(system, kind, k), 4) for k in KS}
                for kind in (*KINDS, None)
            }
            for system in result.systems
        },
        "tools": {
            system: {
                "latency_ms": {
                    "p50": round(percentile(calls.latencies_ms, 50), 2),
                    "p95": round(percentile(calls.latencies_ms, 95), 2),
                },
                "default_chars": _sizes(calls.default_chars),
                "output_chars": _sizes(calls.output_chars),
                "ranking_outcomes": dict(calls.outcomes),
            }
            for system, calls in result.calls.items()
        },
        "seconds": {name: round(value, 2) for name, value in result.seconds.items()},
    }


def _sizes(values: Sequence[int]) -> dict[str, float]:
    return {
        "mean": round(_mean(values), 1),
        "p95": percentile(values, 95),
        "max": max(values, default=0),
    }
