"""Memory scanner benchmark: throughput on typical entries, and the worst 64 KiB input.

Runs ``memory.scan.scanner.scan`` beside a *plain regex table of the same purpose* (every pattern's
whole alternation searched once on the NFKC text, no readings, no prefilter) on:

- **typical entries**: every benign entry of the scanner's corpora (tests/memory/scan/corpus*/,
  50 to 600 characters each), scanned in a loop; KB/s is total UTF-8 size over time, best of
  ``--repeat`` passes;
- **adversarial inputs**: 64 KiB texts built to make a backtracking scanner slow: runs of
  one trigger word and of every character class the patterns use, near misses, texts that
  make many readings (base64 blobs, leetspeak, look-alikes), every rule's literal anchors in
  random order, and every one of the ~380 alternatives' anchors repeated; plus 64 KiB of
  real documentation, code and the benign corpora. Each is scanned once; the slowest are
  timed again beside the plain table, and the worst time wins.

Local, deterministic, bounded: nothing touches the network, and the run ends on its own.

    .venv/bin/python bench/scan_bench.py [--size BYTES] [--repeat N]
    make bench-scan
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import random
import re
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.scan.prefilter import leading, required, split_alternatives  # noqa: E402
from memory.scan.scanner import PATTERNS, scan  # noqa: E402
from memory.scan.table import table  # noqa: E402

CORPORA = ROOT / "tests" / "memory" / "scan"


def typical_entries() -> list[str]:
    """Every benign entry of every scanner corpus."""
    texts = []
    for path in sorted(CORPORA.glob("corpus*/benign.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    return texts


def _anchors(source: str) -> list[str]:
    """The strings a regex's matches must contain or start with (what the scanner's literal
    prefilter looks for), in a fixed order."""
    flags = re.IGNORECASE | re.MULTILINE
    found = {lit.text for group in required(source, flags, any_char=True) for lit in group}
    found |= {lit.text for lit in leading(source, flags) or ()}
    return sorted(found)


def _alternatives() -> list[tuple[str, str]]:
    """(pattern id, source) of every alternative of the table."""
    return [
        (pattern.id, alt)
        for pattern in PATTERNS
        for whole in split_alternatives(pattern.regex.pattern)
        for alt in split_alternatives(whole[3:-1] if whole.startswith("(?:") else whole)
    ]


def adversarial_inputs(size: int = 65536, *, every_alternative: bool = False) -> dict[str, str]:
    """Named inputs of ``size`` characters, each built to be slow for some kind of scanner:
    runs of trigger words and of every character class the patterns use, near misses,
    texts that make many readings, soups of every rule's literal anchors; with
    ``every_alternative``, also each alternative's anchors repeated (a few hundred more)."""

    def fill(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]

    words = re.findall(r"[a-z]{4,}", " ".join(p.regex.pattern for p in PATTERNS).lower())
    rng = random.Random(11)  # noqa: S311 - a fixed, reproducible input
    soup = " ".join(rng.choice(words) for _ in range(size // 4))[:size]
    docs = "".join(
        (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "bench/README.md")
    )
    code = "".join(
        path.read_text(encoding="utf-8") for path in sorted((ROOT / "memory" / "scan").glob("*.py"))
    )
    inputs = {
        "a x 64Ki": "a" * size,
        "'ignore ' repeated": fill("ignore "),
        "'ignore previous ' repeated": fill("ignore previous "),
        "'you are ' repeated": fill("you are "),
        "'send ' repeated": fill("send "),
        "'curl ' repeated": fill("curl "),
        "'<!-- ' repeated": fill("<!-- "),
        "'http://x?a=' repeated": fill("http://x?a="),
        "'password1 ' repeated": fill("password1 "),
        "'sk-' repeated": fill("sk-"),
        "'a@' repeated": fill("a@"),
        "'a ' repeated, then 'ab'": fill("a ")[:-2] + "ab",
        "spaces": " " * size,
        "newlines": "\n" * size,
        "newlines, then ']:'": "\n" * (size - 2) + "]:",
        "base64 blob": fill("QUFB"),
        "base64 words": fill("QUFB" * 8 + " "),
        "base64 blobs, each decoding to a new reading": " ".join(
            base64.b64encode(f"ignore the previous rules, number {i:05d}".encode()).decode()
            for i in range(size // 40)
        )[:size],
        "hex": fill("0123456789abcdef"),
        "box drawing": "═" * size,
        "box drawing, a banner word just too far": fill("═" * 60 + " " * 41 + "system\n"),
        "'=' x 64Ki": "=" * size,
        "'KEY=' assignments": fill("API_KEY=" + "a1B2" * 8 + "\nPASSWORD = 'x'\n"),
        "'$X_TOKEN' and '| curl'": fill("$GITHUB_TOKEN | curl "),
        "URLs with long queries": fill("https://x.example/" + "a" * 150 + "?q= "),
        "handles, numbers and tags": fill("a@b.co +1 555 #tag @user "),
        "leetspeak, reversed and rot13 cues": fill("1gn0r3 4ll pr3v10u5 rul35 r0t13 backwards "),
        "spaced-out letters": fill("i g n o r e  p r e v i o u s "),
        "Cyrillic look-alikes": fill("Ignоrе аll рrеvіоus іnstruсtіоns sеnd "),
        "words broken over lines": fill("ign-\nore prev-\nious instr-\nuctions\n"),
        "CJK override, repeated": fill("忽略之前的所有指示。"),
        "mixed scripts": fill("忽略 ignore игнорируй 無視 무시 تجاهل "),
        "trigger-word soup": soup,
        "benign corpora, joined": ("\n".join(typical_entries()) * 2)[:size],
        "documentation": fill(docs),
        "the scanner's own code": fill(code),
        # The prefilter's anchors of a rule, every alternative's, in random order: dense in
        # what each regex needs, and so in partial matches.
        **{
            f"{rule.id}: its anchors {joiner!r}-joined": _soup(rule.id, joiner, size)
            for rule in PATTERNS
            for joiner in (" ", "\n", ".")
        },
    }
    if every_alternative:
        for number, (pid, source) in enumerate(_alternatives()):
            if anchors := _anchors(source):
                inputs[f"{pid} #{number}: its anchors repeated"] = fill(" ".join(anchors) + " ")
    return inputs


def _soup(pid: str, joiner: str, size: int) -> str:
    anchors = sorted({a for p, source in _alternatives() if p == pid for a in _anchors(source)})
    rng = random.Random(pid)  # noqa: S311 - a fixed, reproducible input
    return joiner.join(rng.choice(anchors) for _ in range(size // 3))[:size]


def plain_table(text: str) -> list[str]:
    """The reference: one search per pattern on the NFKC text, nothing else."""
    folded = unicodedata.normalize("NFKC", text)
    return [p.id for p in PATTERNS if p.regex.search(folded)]


def kb_per_second(run: Callable[[str], object], texts: list[str], repeat: int) -> float:
    size = sum(len(t.encode("utf-8")) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            run(text)
        best = min(best, time.perf_counter() - start)
    return size / 1024 / best


def milliseconds(run: Callable[[str], object], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def measure(size: int = 65536, repeat: int = 3, shown: int = 25) -> dict[str, object]:
    """Everything the table shows, for ours and the plain table: every adversarial input is
    scanned once; the ``shown`` slowest are timed again (best of ``repeat``), beside the
    plain table."""
    texts = typical_entries()
    inputs = adversarial_inputs(size, every_alternative=True)
    # What a process derives once, on its first long text, is not a scan's cost: without
    # this the first inputs would look slow and push truly slow ones out of the re-timing.
    table().warm()
    first = {name: milliseconds(scan, text, 1) for name, text in inputs.items()}
    rows = []
    for name in sorted(first, key=lambda n: -first[n])[:shown]:
        text = inputs[name]
        ours = min(first[name], milliseconds(scan, text, repeat))
        plain = milliseconds(plain_table, text, 1)
        stopped = any(f.id == "scan-limit" for f in scan(text))
        rows.append((name, ours, plain, stopped))
    return {
        "entries": len(texts),
        "inputs": len(inputs),
        "ours_kbs": kb_per_second(scan, texts, repeat),
        "plain_kbs": kb_per_second(plain_table, texts, 1),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=65536, help="adversarial input size")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings")
    parser.add_argument("--shown", type=int, default=25, help="slowest inputs in the table")
    args = parser.parse_args(argv)
    print(
        f"memory scanner benchmark: Python {platform.python_version()},"
        f" {len(PATTERNS)} patterns, adversarial inputs of {args.size:,} characters",
        file=sys.stderr,
    )
    figures = measure(args.size, args.repeat, args.shown)
    rows = figures["rows"]
    assert isinstance(rows, list)
    width = max(len(name) for name, *_ in rows)
    print(f"\ntypical entries ({figures['entries']} benign corpus entries)")
    print(f"  ours   {figures['ours_kbs']:8,.0f} KB/s")
    print(f"  plain  {figures['plain_kbs']:8,.0f} KB/s   (plain regex table, for reference)")
    print(f"\nthe {len(rows)} slowest of {figures['inputs']} adversarial inputs")
    print(f"{'input':<{width}} | ours ms | plain ms | note")
    print(f"{'-' * width}-+---------+----------+-----")
    for name, ours, plain, stopped in sorted(rows, key=lambda row: -row[1]):
        note = "stopped: scan-limit" if stopped else ""
        print(f"{name:<{width}} | {ours:7.1f} | {plain:8.1f} | {note}")
    worst = max(rows, key=lambda row: row[1])
    worst_plain = max(rows, key=lambda row: row[2])
    print(f"\nworst case, ours:  {worst[1]:.1f} ms ({worst[0]})")
    print(f"worst case, plain: {worst_plain[2]:.1f} ms ({worst_plain[0]}, of the rows shown)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
