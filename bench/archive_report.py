"""The archive benchmark's report: ``Figures``, everything one run measured (one typed
part per phase: generate, breakdown, baseline, ingest, latency, quality, sizes), and
``report``, which prints it to stdout: a header, the main table of metrics (ours beside
the baseline, the ratio, the issue's target and whether it is met), then the ingest
breakdown, latency by query kind, database size by object and recall by question kind.
``Row``, ``fmt``, ``table`` and ``main_table`` format the tables. It measures nothing.
"""

from __future__ import annotations

import os
import platform
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.archive_common import (
    TARGET_CJK_SCOPED_P50,
    TARGET_INGEST,
    TARGET_SCOPED_P50,
    TARGET_SCOPED_P95,
)
from bench.archive_queries import QUERY_KINDS, Timings, merged

MB = 1024 * 1024

# -- the report -----------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    metric: str
    ours: float | None
    base: float | None = None
    target: str = ""
    ok: bool | None = None
    digits: int = 2
    ratio: bool = True


def fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main_table(rows: Sequence[Row]) -> str:
    out = []
    for row in rows:
        ratio = (
            f"{row.ours / row.base:.2f}" if row.ratio and row.ours is not None and row.base else "—"
        )
        ok = "" if row.ok is None else ("yes" if row.ok else "NO")
        out.append(
            [
                row.metric,
                fmt(row.ours, row.digits),
                fmt(row.base, row.digits),
                ratio,
                row.target or "—",
                ok,
            ]
        )
    return table(("metric", "ours", "baseline", "ratio", "target", "ok?"), out)


# -- what a run measured --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DataFigures:
    """The generated data set."""

    messages: int
    tool_messages: int
    cjk_messages: int  # messages in CJK sessions
    sessions: int
    facts: int
    seconds: float  # to generate it


@dataclass(frozen=True, slots=True)
class BreakdownFigures:
    """The ingest breakdown (``archive_breakdown.ingest_breakdown``); no rows when skipped."""

    messages: int  # the prefix it ran on
    rows: list[list[str]]
    note: str


@dataclass(frozen=True, slots=True)
class BaselineFigures:
    """Loading all N messages into the baseline."""

    seconds: float
    bytes: int  # db + WAL right after loading


@dataclass(frozen=True, slots=True)
class ImportFigures:
    """``import_records`` on a prefix, in a separate database."""

    count: int  # records imported (user and assistant messages)
    rate: float  # messages/s
    baseline_rate: float | None  # the baseline over the same prefix, when it is not all N
    seconds: float


@dataclass(frozen=True, slots=True)
class IngestFigures:
    """Ours: the API for the first messages, bulk for the rest, and the import."""

    api_messages: int
    api_seconds: float
    bulk_seconds: float
    bytes: int  # db + WAL right after loading
    wal: int
    imported: ImportFigures | None  # None when --import-messages 0


@dataclass(frozen=True, slots=True)
class LatencyFigures:
    """Search timings; by query kind where a dict is keyed by kind."""

    ours_global: dict[str, Timings]
    ours_scoped: dict[str, Timings]
    base_global: dict[str, Timings]
    base_scoped: dict[str, Timings]
    assembled: Timings  # SearchTool.call discover
    scroll: Timings  # SearchTool.call around a message
    cjk: dict[str, Timings]  # "ours 2-char scoped", "base 3+-char global", ...


@dataclass(frozen=True, slots=True)
class QualityFigures:
    """Recall of the planted facts."""

    counts: dict[str, list[int]]  # question kind (and "all") -> [asked, ours, naive AND, OR]
    examples: list[str]  # a few paraphrased questions and whether ours found the fact


@dataclass(frozen=True, slots=True)
class SizeFigures:
    """Measured after the archive is closed."""

    objects: dict[str, int]  # ours, main file, by group of SQLite objects (dbstat)
    baseline_objects: dict[str, int]
    baseline_wal: int


@dataclass(frozen=True, slots=True)
class Figures:
    """Everything one run measured, and the arguments the report names."""

    people: int
    queries: int
    seed: int
    work: Path
    data: DataFigures
    breakdown: BreakdownFigures
    baseline: BaselineFigures
    ingest: IngestFigures
    latency: LatencyFigures
    quality: QualityFigures
    sizes: SizeFigures
    deadline_hit: bool  # some query sets were cut short
    seconds: float  # the whole run


# -- printing -------------------------------------------------------------------------------


def report(fig: Figures) -> None:
    """Print the run's tables to stdout."""
    print()
    print_header(fig)
    print()
    print(main_table(main_rows(fig)))
    print()
    print("ratio = ours / baseline (ingest and recall: higher is better; ms and MB: lower).")
    print(
        "Targets are the issue's, stated for 1M messages on 2 cores; baseline CJK = naive"
        " MATCH of the raw term on the unicode61 index (no substring search)."
    )
    if fig.breakdown.rows:
        print()
        print(
            f"Ingest breakdown on the first {fig.breakdown.messages:,} messages (same data,"
            " fresh files):"
        )
        print(table(("path", "msg/s", "µs/exchange", "vs API"), fig.breakdown.rows))
        print(fig.breakdown.note)
    print()
    print("Latency by query kind (ms; hits = share of queries with a result):")
    print(kind_table(fig.latency))
    if "scan 2-char scoped" in fig.latency.cjk:
        print()
        print("CJK 2-character terms: the gram index (m007) vs the LIKE scan before it, same run:")
        print(cjk_table(fig.latency.cjk))
    print()
    print("Database size by object (main file, dbstat):")
    print(size_table(fig.sizes))
    print()
    print("Recall@3 of planted facts by question kind (asked by the fact's owner):")
    print(quality_table(fig.quality))
    print("Examples (paraphrased questions):")
    print("\n".join(fig.quality.examples))
    print()
    ingest = fig.ingest
    import_seconds = 0.0 if ingest.imported is None else ingest.imported.seconds
    print(
        f"Phases: generate {fig.data.seconds:.0f}s, baseline {fig.baseline.seconds:.0f}s, API"
        f" {ingest.api_seconds:.0f}s, bulk {ingest.bulk_seconds:.0f}s, import"
        f" {import_seconds:.0f}s; total {fig.seconds:.0f}s."
    )


def print_header(fig: Figures) -> None:
    data, ingest = fig.data, fig.ingest
    print(
        f"mnemo archive benchmark — N={data.messages:,} messages ({data.tool_messages:,} tool,"
        f" {data.cjk_messages:,} in CJK sessions), {data.sessions:,} sessions,"
        f" {fig.people:,} people, Q={fig.queries}, K={data.facts} facts, seed {fig.seed}"
    )
    print(
        f"SQLite {sqlite3.sqlite_version}, Python {platform.python_version()},"
        f" {os.cpu_count()} CPUs, {platform.machine()}; work dir {fig.work}"
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"load average (1, 5, 15 min) at the end: {load} — this benchmark alone keeps it near"
        " 1; more means something else shared the CPUs and the timings are pessimistic"
    )
    if ingest.api_messages != data.messages:
        print(
            f"NOTE: only the first {ingest.api_messages:,} messages went through"
            f" append_exchange; the other {data.messages - ingest.api_messages:,} were"
            f" bulk-loaded into the same schema ({ingest.bulk_seconds:.0f}s) to measure search"
            " at full size."
        )
    if fig.deadline_hit:
        print("NOTE: the time budget ran out; some query sets are incomplete.")


def main_rows(fig: Figures) -> list[Row]:
    return [
        *ingest_rows(fig),
        *discover_rows(fig.latency),
        *cjk_rows(fig.latency.cjk),
        *recall_rows(fig.quality),
    ]


def ingest_rows(fig: Figures) -> list[Row]:
    """Messages, ingest rates and times, database sizes."""
    n, ingest, base = fig.data.messages, fig.ingest, fig.baseline
    api_rate = ingest.api_messages / ingest.api_seconds
    base_rate = n / base.seconds
    api_note = "" if ingest.api_messages == n else f" (first {ingest.api_messages:,})"
    target = f">= {TARGET_INGEST:,.0f}"
    rows = [
        Row("messages", n, n, digits=0, ratio=False),
        Row(
            f"ingest msg/s, append_exchange 1 txn/exchange{api_note}",
            api_rate,
            base_rate,
            target,
            api_rate >= TARGET_INGEST,
            0,
        ),
    ]
    imported = ingest.imported
    if imported is not None:
        rows.append(
            Row(
                f"ingest msg/s, import_records JSONL ({imported.count:,} user+assistant)",
                imported.rate,
                base_rate if imported.baseline_rate is None else imported.baseline_rate,
                target,
                imported.rate >= TARGET_INGEST,
                0,
            )
        )
    return [
        *rows,
        Row(f"ingest time s, append_exchange{api_note}", ingest.api_seconds, None, digits=1),
        Row(
            "ingest time s, all N (ours: API part + bulk rest)",
            ingest.api_seconds + ingest.bulk_seconds,
            base.seconds,
            digits=1,
        ),
        Row("database size MB (db + wal)", ingest.bytes / MB, base.bytes / MB, digits=1),
        Row(
            "  of which WAL MB",
            ingest.wal / MB,
            fig.sizes.baseline_wal / MB,
            digits=1,
            ratio=False,
        ),
        Row("bytes per message", ingest.bytes / n, base.bytes / n, digits=0),
    ]


def discover_rows(lat: LatencyFigures) -> list[Row]:
    """Searcher.find global and scoped, SearchTool.call discover and scroll."""

    def q(t: dict[str, Timings], p: float) -> float | None:
        return merged(t).pct(p)

    scoped50, scoped95 = q(lat.ours_scoped, 0.5), q(lat.ours_scoped, 0.95)
    return [
        Row(
            "discover global p50 ms (Searcher.find)",
            q(lat.ours_global, 0.5),
            q(lat.base_global, 0.5),
        ),
        Row("discover global p95 ms", q(lat.ours_global, 0.95), q(lat.base_global, 0.95)),
        Row(
            "discover scoped p50 ms (Searcher.find)",
            scoped50,
            q(lat.base_scoped, 0.5),
            f"<= {TARGET_SCOPED_P50:.0f}",
            None if scoped50 is None else scoped50 <= TARGET_SCOPED_P50,
        ),
        Row(
            "discover scoped p95 ms",
            scoped95,
            q(lat.base_scoped, 0.95),
            f"<= {TARGET_SCOPED_P95:.0f}",
            None if scoped95 is None else scoped95 <= TARGET_SCOPED_P95,
        ),
        Row("discover scoped p50 ms, SearchTool.call (assembly)", lat.assembled.pct(0.5)),
        Row("discover scoped p95 ms, SearchTool.call (assembly)", lat.assembled.pct(0.95)),
        Row("scroll p50 ms, SearchTool.call", lat.scroll.pct(0.5)),
        Row("scroll p95 ms, SearchTool.call", lat.scroll.pct(0.95)),
    ]


CJK_KEYS = tuple(
    f"{label} {scope_name}"
    for label in ("2-char", "3+-char")
    for scope_name in ("scoped", "global")
)  # the keys of LatencyFigures.cjk without "ours " / "base "


def cjk_rows(cjk: dict[str, Timings]) -> list[Row]:
    """CJK p50 for each set and scope, then the share of queries with a result."""
    rows = [
        Row(f"CJK {key} p50 ms", cjk["ours " + key].pct(0.5), cjk["base " + key].pct(0.5))
        for key in CJK_KEYS
    ]
    scoped = rows[0].ours
    rows[0].target = f"<= {TARGET_CJK_SCOPED_P50:.0f}"
    rows[0].ok = None if scoped is None else scoped <= TARGET_CJK_SCOPED_P50
    for key in CJK_KEYS:
        ours = cjk["ours " + key].hit_rate
        rows.append(
            Row(
                f"CJK {key}: share of queries with a result",
                ours,
                cjk["base " + key].hit_rate,
                "1.00",
                None if ours is None else ours == 1.0,
                digits=3,
                ratio=False,
            )
        )
    return rows


def cjk_table(cjk: dict[str, Timings]) -> str:
    """p50 / p95 / share with a result of the 2-character CJK set, index and scan."""
    out = []
    for scope_name in ("scoped", "global"):
        for path, prefix in (("gram index", "ours"), ("scan (before m007)", "scan")):
            t = cjk.get(f"{prefix} 2-char {scope_name}", Timings())
            out.append(
                [
                    f"{scope_name}, {path}",
                    fmt(t.pct(0.5), 2),
                    fmt(t.pct(0.95), 2),
                    fmt(t.hit_rate, 3),
                    str(len(t.ms)),
                ]
            )
    return table(("2-char CJK term", "p50 ms", "p95 ms", "hits", "n"), out)


def recall_rows(quality: QualityFigures) -> list[Row]:
    everything = quality.counts.get("all", [0, 0, 0, 0])
    asked = max(1, everything[0])
    return [
        Row(
            f"recall@3 planted facts, owner-scoped ({everything[0]} questions)",
            everything[1] / asked,
            everything[2] / asked,
            digits=3,
            ratio=False,
        ),
        Row(
            "recall@3, vs baseline OR of content words (info)",
            everything[1] / asked,
            everything[3] / asked,
            digits=3,
        ),
    ]


def kind_table(lat: LatencyFigures) -> str:
    """p50 / p95 / hit rate by English query kind, ours and the baseline, global and scoped."""
    kind_rows = []
    for kind in QUERY_KINDS:
        cells = [kind]
        for timings in (lat.ours_global, lat.ours_scoped, lat.base_global, lat.base_scoped):
            t = timings.get(kind, Timings())
            cells.append(f"{fmt(t.pct(0.5), 1)} / {fmt(t.pct(0.95), 1)} / {fmt(t.hit_rate, 2)}")
        kind_rows.append(cells)
    return table(
        ("kind", "ours global p50/p95/hits", "ours scoped", "base global", "base scoped"),
        kind_rows,
    )


def size_table(sizes: SizeFigures) -> str:
    """Ours by object, largest first, with its share; then the baseline's."""
    ours = sizes.objects
    size_rows = [
        [k, f"{v / MB:,.1f}", f"{100 * v / sum(ours.values()):.0f}%"]
        for k, v in sorted(ours.items(), key=lambda kv: -kv[1])
    ]
    size_rows += [
        [k, f"{v / MB:,.1f}", "—"]
        for k, v in sorted(sizes.baseline_objects.items(), key=lambda kv: -kv[1])
    ]
    return table(("object", "MB", "share"), size_rows)


def quality_table(quality: QualityFigures) -> str:
    quality_rows = [
        [kind, str(c[0]), f"{c[1] / c[0]:.3f}", f"{c[2] / c[0]:.3f}", f"{c[3] / c[0]:.3f}"]
        for kind, c in sorted(quality.counts.items())
    ]
    return table(("questions", "n", "ours", "baseline AND", "baseline OR"), quality_rows)
