"""The archive benchmark's report: ``Row`` (one metric, ours beside the baseline, with an
optional target), ``fmt`` for a number or a dash, ``table`` for a plain-text table with
aligned columns, and ``main_table``, which adds the ours/baseline ratio and whether the
target is met.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
