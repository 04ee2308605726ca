r"""Injection and invisible-Unicode scanner for text that will reach a system prompt.

Memory entries, skills, SOUL.md and session summaries are replayed into future system
prompts, so anything stored there is a persistent prompt. ``scan(text)`` returns the findings
that make a text unsafe to store:

* an **invisible or bidi control character** (zero-width, word joiner, BOM, embedding and
  isolate controls, Unicode tags), reported with its code point, checked on the raw text;
* a **pattern** from ``patterns()`` (the table lives in ``memory.scan_patterns``: prompt
  injection, fake prompt structure, concealment, exfiltration, backdoors, hard-coded
  secrets, hidden HTML), checked case-insensitively on *readings* of the text: NFKC-folded
  (fullwidth and mathematical letters), flattened over line breaks, with Cyrillic/Greek
  homoglyphs, leetspeak, spaced-out letters and broken hyphens undone, reversed, and
  decoded from base64 and rot13.

How it stays fast (``bench/scan_bench.py`` measures it, beside a plain regex table):

* **only the regexes that can match run.** The table's alternations are split into single
  alternatives; for each, ``memory.scan_prefilter`` reads off the parsed regex the literal
  sets every match contains (``\bignore\b[^\n]{0,30}\b(?:all|any)\b`` needs ``ignore``
  and ``all`` or ``any``) and, where it can, the literals every match starts with. One
  Aho-Corasick pass over each case-folded reading lists where the rare literals occur; an
  alternative runs only when every set it needs is there. The result is exactly that of
  running every regex (the tests compare the two on all corpora).
* **in a long text, only where a match can be:** a match attempt at each place a match can
  start, or a search in windows around the rarest literal it needs.
* **bounded widths.** No alternative can match more than ``MAX_WIDTH`` characters (gaps are
  ``[^\n]{0,N}``, ``\s+`` reads as ``\s{1,4}``), so no search is quadratic; the
  de-obfuscation helpers are bounded the same way.
* **built once, when first needed.** ``memory.scan_table`` builds the table on the first
  scan, from the literal analysis stored in ``scan_table.json`` (a command that never
  scans pays nothing for it, one that does pays a few hundredths of a second).
* **caps.** The decoded readings (leetspeak, spacing, reversed, rot13) see ``DECODE_CAP``
  characters; the reversed one is made only when the text mentions reading backwards or
  holds a bidi override. A scan spends at most ``WORK_PER_CHAR`` characters of regex work
  per character of text: past that (adversarial text packed with trigger words) it stops
  and reports ``scan-limit``, so the text is refused, never let through unchecked.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from memory.scan_patterns import RULES
from memory.scan_prefilter import edge, fold
from memory.scan_readings import DECODE_CAP, flatten, normalise, readings
from memory.scan_table import Need, Pattern, pattern, patterns
from memory.scan_table import table as compiled_table

__all__ = [
    "DECODE_CAP",
    "INVISIBLE_CHARS",
    "MAX_WIDTH",
    "WORK_PER_CHAR",
    "Finding",
    "Pattern",
    "fold",
    "normalise",
    "pattern",
    "patterns",
    "scan",
]

#: Zero-width, joiner, invisible operator, BOM, bidi embedding/override and isolate controls,
#: plus the Unicode tag block U+E0000–U+E007F.
INVISIBLE_CHARS: frozenset[str] = frozenset(
    [chr(c) for c in range(0x200B, 0x200E)]
    + ["\u2060"]
    + [chr(c) for c in range(0x2062, 0x2065)]
    + ["\ufeff"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    # Unicode tag characters ("ASCII smuggling"): invisible, and decoded by some models.
    + [chr(c) for c in range(0xE0000, 0xE0080)]
)
_INVISIBLE = re.compile(
    "[\u200b-\u200d\u2060\u2062-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)

#: The longest match any alternative may have (checked by the tests on the parsed regexes).
MAX_WIDTH = 1000


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    detail: str


def _candidates(reading: _Reading) -> list[int]:
    """The alternatives whose first two listed sets both occur, and the unfiled ones."""
    first: set[int] = set()
    table = compiled_table()
    second: set[int] = set(table.one_set)
    for number in reading.at:
        first.update(table.first.get(number, ()))
        second.update(table.second.get(number, ()))
    return sorted((first & second) | table.unfiled)


_DENSE = 1024  # past this many occurrences a literal's positions are no longer listed
_MARGIN = 128  # read past a window's end, for \b, $ and look-aheads
#: Regex work one scan may spend per character of text (a search counts the span it reads,
#: a match attempt the longest match); past it the scan stops with a ``scan-limit`` finding.
#: Real 64 KiB documents and code use about 20 per character.
WORK_PER_CHAR = 64
_WORK_FLOOR = 16_384  # short texts get the budget of this many characters


@dataclass(slots=True)
class _Reading:
    """One reading, its folded form, and where the listed literals occur in it."""

    text: str
    folded: str
    at: dict[int, list[int]]
    dense: set[int]

    @classmethod
    def of(cls, text: str) -> _Reading:
        reading = cls(text, fold(text), {}, set())
        at = reading.at
        dense = reading.dense
        table = compiled_table()
        for start, string in table.find(reading.folded):
            for number, before, after in table.listed[string]:
                if number in dense:
                    continue
                if before and not edge(text, start):
                    continue
                if after and not edge(text, start + len(string)):
                    continue
                if (hits := at.get(number)) is None:
                    at[number] = [start]
                elif len(hits) < _DENSE:
                    hits.append(start)
                else:
                    dense.add(number)
        return reading

    def has(self, need: Need) -> bool:
        """Whether one literal of ``need`` occurs (for a substring, \b is left to the regex)."""
        if not need.listed.isdisjoint(self.at):
            return True
        return any(sub in self.folded for sub in need.substrings)

    def places(self, need: Need) -> list[int] | None:
        """Every position of ``need`` (None when it is not all listed, or too dense)."""
        if need.substrings or not need.listed.isdisjoint(self.dense):
            return None
        return sorted({p for n in need.listed for p in self.at.get(n, ())})


class _OverBudget(Exception):
    def __init__(self) -> None:
        super().__init__("over the scanner's work budget")
        self.matched: dict[int, re.Match[str]] = {}


class _Budget:
    def __init__(self, size: int) -> None:
        self.left = WORK_PER_CHAR * max(size, _WORK_FLOOR)

    def spend(self, chars: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise _OverBudget


def _near(place: int, width: int, places: list[int]) -> bool:
    """Whether ``places`` (sorted) holds a position within ``width`` of ``place``."""
    at = bisect.bisect_left(places, place - width)
    return at < len(places) and places[at] <= place + width


def _search(number: int, reading: _Reading, budget: _Budget) -> re.Match[str] | None:
    """``regex.search(reading.text)`` for alternative ``number``, with as little regex work
    as possible: none when a required literal is missing; in a long reading, a match attempt
    only where a match can start, or a search only around the rarest required literal."""
    table = compiled_table()
    alt, needs = table.alternatives[number], table.needs[number]
    if not all(map(reading.has, needs)):
        return None
    regex = table.regex(number)
    text = reading.text
    if len(text) <= 4 * alt.width + _MARGIN:
        budget.spend(len(text))
        return regex.search(text)
    starts = reading.places(table.starts[number]) if alt.starts else None
    placed = [p for p in map(reading.places, needs) if p is not None]
    rarest = min(placed, key=len, default=None)
    if rarest is not None:  # every listed literal of a match lies within its width
        rarest = [p for p in rarest if all(_near(p, alt.width, other) for other in placed)]
    if starts is not None and (rarest is None or len(starts) <= 8 * len(rarest)):
        if rarest is not None:
            starts = [p for p in starts if all(_near(p, alt.width, other) for other in placed)]
        for start in starts:
            budget.spend(alt.width)
            if (match := regex.match(text, start)) is not None:
                return match
        return None
    if rarest is None:
        budget.spend(len(text))
        return regex.search(text)
    windows: list[list[int]] = []
    for place in rarest:
        if windows and place - alt.width <= windows[-1][1]:
            windows[-1][1] = place + alt.width + _MARGIN
        else:
            windows.append([max(0, place - alt.width), place + alt.width + _MARGIN])
    for first, end in windows:
        budget.spend(min(end, len(text)) - first)
        start = first
        while (match := regex.search(text, start, min(end, len(text)))) is not None:
            # A window's end reads as the end of the text; confirm on the whole reading.
            if (whole := regex.match(text, match.start())) is not None:
                return whole
            start = match.start() + 1
    return None


# -- the scanner ----------------------------------------------------------------------------

_SHORT = 2048  # up to this size, one finder pass over all readings together decides


def _match_short(texts: list[str]) -> dict[int, re.Match[str]]:
    """A short text: literals are looked up once, over all its readings joined (a literal
    in any reading makes a candidate), then each candidate searches each reading."""
    matched: dict[int, re.Match[str]] = {}
    together = _Reading.of("\n".join(texts))
    table = compiled_table()
    for index in _candidates(together):
        alternative = table.alternatives[index]
        if alternative.pattern in matched or not all(map(together.has, table.needs[index])):
            continue
        regex = table.regex(index)
        for reading in texts:
            if (match := regex.search(reading)) is not None:
                matched[alternative.pattern] = match
                break
    return matched


def _match_long(text: str, texts: list[str]) -> dict[int, re.Match[str]]:
    """A long text: literal positions per reading, and regex work only near them, within
    the work budget."""
    matched: dict[int, re.Match[str]] = {}
    budget = _Budget(len(text))
    flattened = len(texts) > 1 and texts[1] == flatten(texts[0])
    table = compiled_table()
    try:
        for number, reading in enumerate(map(_Reading.of, texts)):
            for index in _candidates(reading):
                alternative = table.alternatives[index]
                if alternative.pattern in matched:
                    continue
                if number == 0 and flattened and not alternative.lines:
                    continue  # the flattened reading finds whatever it would here
                if (match := _search(index, reading, budget)) is not None:
                    matched[alternative.pattern] = match
    except _OverBudget as stop:
        stop.matched = matched
        raise
    return matched


def scan(text: str) -> list[Finding]:
    """Return every finding for ``text`` (empty list = safe to store).

    Invisible characters come first, one finding per distinct code point; then one finding
    per pattern id that matches, in table order; then ``scan-limit`` if the text was too
    large and too dense in trigger words to check within ``WORK_PER_CHAR``.
    """
    findings: list[Finding] = []
    seen: set[str] = set()
    for hit in () if text.isascii() else _INVISIBLE.finditer(text):
        char = hit.group()
        if char not in seen:
            seen.add(char)
            name = unicodedata.name(char, "UNNAMED")
            findings.append(
                Finding("invisible-unicode", f"U+{ord(char):04X} {name} at position {hit.start()}")
            )
    texts = readings(text)
    try:
        matched = _match_short(texts) if len(text) <= _SHORT else _match_long(text, texts)
        over = False
    except _OverBudget as stop:
        matched, over = stop.matched, True
    for index in sorted(matched):
        rule, snippet = RULES[index], matched[index].group(0)
        if len(snippet) > 60:
            snippet = snippet[:57] + "..."
        findings.append(Finding(rule.id, f"{rule.description}: {snippet!r}"))
    if over:
        findings.append(
            Finding(
                "scan-limit",
                f"{len(text):,} characters too dense in trigger words to check in full within"
                " the scanner's budget; store less text at once",
            )
        )
    return findings
