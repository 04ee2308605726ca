r"""Injection and invisible-Unicode scanner for text that will reach a system prompt.

Memory entries, skills, SOUL.md and session summaries are replayed into future system
prompts, so anything stored there is a persistent prompt. ``scan(text)`` returns the findings
that make a text unsafe to store:

* an **invisible or bidi control character** (zero-width, word joiner, BOM, embedding and
  isolate controls, Unicode tags), reported with its code point, checked on the raw text;
* a **pattern** from ``PATTERNS`` (the table lives in ``memory.scan.patterns``: prompt
  injection, fake prompt structure, concealment, exfiltration, backdoors, hard-coded
  secrets, hidden HTML), checked case-insensitively on *readings* of the text: NFKC-folded
  (fullwidth and mathematical letters), flattened over line breaks, with Cyrillic/Greek
  homoglyphs, leetspeak, spaced-out letters and broken hyphens undone, reversed, and
  decoded from base64 and rot13.

How it stays fast (``bench/scan_bench.py`` measures it, beside a plain regex table):

* **only the regexes that can match run.** The table's alternations are split into single
  alternatives; for each, ``memory.scan.prefilter`` reads off the parsed regex the literal
  sets every match contains (``\bignore\b[^\n]{0,30}\b(?:all|any)\b`` needs ``ignore``
  and ``all`` or ``any``) and, where it can, the literals every match starts with. One
  Aho-Corasick pass over each case-folded reading lists where the rare literals occur; an
  alternative runs only when every set it needs is there. The result is exactly that of
  running every regex (the tests compare the two on all corpora).
* **in a long text, only where a match can be:** a match attempt at each place a match can
  start, or a search in windows around the rarest literal it needs. An alternative with
  gaps runs as a chain of its parts (``memory.scan.chain``), each part searched for near
  the strings it must hold; a part that is a group of alternatives, alternative by
  alternative. What a part that several alternatives have (a handle, an e-mail address)
  finds in a reading is kept for all of them (``memory.scan.finds``), and the alternatives
  of a last part none of whose strings occur are left out.
* **regexes that skip.** ``re`` skips ahead only to a literal or a set of first characters
  at a pattern's very start, which ``\b`` hides; ``memory.scan.skip`` gives the folded
  regexes that start back (a filter only: they match where they matched).
* **literals listed once, places when asked.** ``memory.scan.listing`` groups the finder's
  hits by string; which literals occur is decided by the first hit whose ``\b`` holds, and a
  literal's places are checked and listed only when a search asks for them.
* **a decoded reading only where it is decoded.** Leetspeak, look-alikes, hyphens: a
  decoded reading of a long text is mostly the base reading (the first read in full)
  again. ``memory.scan.windows.changes_of`` lists where the two differ; a match reading
  none of those places would have been found in the base reading, so only matches near a
  change are looked for.
* **case folded once.** Each reading is folded once (``fold``, index for index); the regexes
  run on it folded and without ``re.IGNORECASE`` (``prefilter.folded_regex``: a few times
  faster on word alternations), the regex as written only to confirm a match. Not for the
  few alternatives with a case-sensitive group (``(?-i:[A-Z]...)``), nor on a text holding
  the one character whose class changes when folded; the tests check every character class
  of the table against every code point.
* **bounded widths.** No alternative can match more than ``MAX_WIDTH`` characters (gaps are
  ``[^\n]{0,N}``, ``\s+`` reads as ``\s{1,4}``), so no search is quadratic; the
  de-obfuscation helpers are bounded the same way.
* **no table at import.** The derived table (``memory.scan.table``: alternatives, literal
  sets, indexes) is built on the first scan, from the stored ``table.json`` when it is
  current; regexes compile, and chains are derived, when a text first calls for them.
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

from memory.scan.chain_run import Run
from memory.scan.excuses import SHORT, excused
from memory.scan.listing import Listing
from memory.scan.patterns import RULES
from memory.scan.prefilter import fold
from memory.scan.readings import DECODE_CAP, flatten, normalise, readings
from memory.scan.table import Pattern, Table, bounded, patterns, table
from memory.scan.windows import Spans, changes_of, near_changes, within

__all__ = [
    "DECODE_CAP",
    "INVISIBLE_CHARS",
    "MAX_WIDTH",
    "PATTERNS",
    "WORK_PER_CHAR",
    "Finding",
    "Pattern",
    "fold",
    "normalise",
    "pattern",
    "scan",
]

#: Zero-width, joiner, invisible operator, BOM, bidi embedding/override and isolate controls,
#: plus the Unicode tag block U+E0000–U+E007F.
INVISIBLE_CHARS: frozenset[str] = frozenset(
    [chr(c) for c in range(0x200B, 0x200E)]
    + [chr(c) for c in range(0x2060, 0x2065)]  # word joiner, invisible operators
    + ["\ufeff"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    # Shown as nothing though not "format" characters: a soft hyphen splits a trigger word
    # ("Ign\u00adore") for the eye and for a scanner, the fillers pass for letters.
    + ["\u00ad", "\u034f", "\u180e", "\u115f", "\u1160", "\u3164", "\uffa0"]
    # Unicode tag characters ("ASCII smuggling"): invisible, and decoded by some models.
    + [chr(c) for c in range(0xE0000, 0xE0080)]
)


def _ranges(chars: frozenset[str]) -> str:
    """``chars`` as a character class of ranges: ``re`` keeps a class of characters past
    U+FFFF as a list it reads through for each character of the text (7.5 ms for 64 KiB
    with the 128 tag characters one by one; 0.3 ms as ranges)."""
    spans: list[list[int]] = []
    for code in sorted(map(ord, chars)):
        if spans and spans[-1][1] == code - 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return "[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in spans) + "]"


_INVISIBLE = re.compile(_ranges(INVISIBLE_CHARS))

#: The longest match any alternative may have (checked by the tests on the parsed regexes).
MAX_WIDTH = 1000


#: Every rule as one regex (compiled when first used: building this costs no parsing).
PATTERNS: tuple[Pattern, ...] = patterns()


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    detail: str


def pattern(finding_id: str) -> Pattern:
    """One rule compiled alone (the credential redactors need only ``hardcoded-secret``),
    without building the whole table."""
    for rule in RULES:
        if rule.id == finding_id:
            source = "|".join(f"(?:{bounded(alt)})" for alt in rule.alternatives)
            return Pattern(rule.id, rule.description, source)
    raise KeyError(finding_id)


_MARGIN = 128  # read past a window's end, for \b, $ and look-aheads
#: Regex work one scan may spend per character of text (a search counts the span it reads,
#: a match attempt the longest match); past it the scan stops with a ``scan-limit`` finding.
#: Real 64 KiB documents and code use about 20 per character.
WORK_PER_CHAR = 64
_WORK_FLOOR = 16_384  # short texts get the budget of this many characters


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


def _near_each(places: list[int], width: int, lists: list[list[int]]) -> list[int]:
    """The ``places`` (sorted) that have a position of each of ``lists`` (each sorted)
    within ``width``: by one sweep of both lists, or a look-up per place in a much longer
    list."""
    given = places
    for other in lists:
        if other is given or not places:
            continue  # a place is near itself
        kept: list[int] = []
        size = len(other)
        if size > 8 * len(places):
            for place in places:
                at = bisect.bisect_left(other, place - width)
                if at < size and other[at] <= place + width:
                    kept.append(place)
        else:
            at = 0
            for place in places:
                low = place - width
                while at < size and other[at] < low:
                    at += 1
                if at < size and other[at] <= place + width:
                    kept.append(place)
        places = kept
    return places


def _regions(tab: Table, number: int, reading: Listing) -> list[tuple[int, int]] | None:
    """Where a match of alternative ``number`` can start, as ``(first, last)`` stretches in
    order (None: anywhere): at the places its leading literals occur, else before the
    occurrences of its rarest required literal that have every other one within its width."""
    alt, needs, width = tab.alternatives[number], tab.needs[number], tab.shape(number).width
    starts = reading.places(tab.starts[number]) if alt.starts else None
    placed = [p for p in map(reading.places, needs) if p is not None]
    rarest = min(placed, key=len, default=None)
    # Every listed literal of a match lies within its width: keep the places that have one
    # of each near (checked against the sparse lists only: a dense one is near everywhere).
    sparse = [p for p in placed if len(p) * (2 * width + 1) < len(reading.text)]
    if rarest is not None and sparse:
        rarest = _near_each(rarest, width, sparse)
    if starts is not None and (rarest is None or len(starts) <= 8 * len(rarest)):
        if rarest is not None and sparse:
            starts = _near_each(starts, width, sparse)
        return [(start, start) for start in starts]
    if rarest is None:
        return None
    regions: list[tuple[int, int]] = []
    for place in rarest:  # a match holding the literal at ``place`` starts before it
        if regions and place - width <= regions[-1][1] + 1:
            regions[-1] = (regions[-1][0], place)
        else:
            regions.append((max(0, place - width), place))
    return regions


def _search(
    tab: Table,
    number: int,
    reading: Listing,
    budget: _Budget,
    changes: Spans | None = None,
) -> re.Match[str] | None:
    """``regex.search(reading.text)`` for alternative ``number``, with as little regex work
    as possible: none when a required literal is missing; in a long reading, only where a
    match can start; an alternative with gaps as a chain (``memory.scan.chain``). With
    ``changes`` (``memory.scan.windows``), a match is looked for only where it would read one."""
    needs = tab.needs[number]
    if not all(map(reading.has, needs)):
        return None
    regex, shape = tab.alternatives[number].regex, tab.shape(number)
    text = reading.text
    short = len(text) <= 4 * shape.width + _MARGIN
    regions = None if short else _regions(tab, number, reading)
    if changes is not None:
        limits = near_changes(changes, shape, len(text))
        # Around many changes the windows cost more than one pass: then they are not used.
        if sum(high - low for low, high in limits) * 2 < len(text):
            regions = within(regions, limits)
            if not regions:
                return None
    if shape.chain is not None:
        if (run := reading.runs.get(number)) is None:
            run = Run(
                shape.chain,
                text,
                budget.spend,
                reading.folded,
                shared=reading.finds,
                worth=tab.shared_parts,
                occurrences=reading.occurrences,
            )
            reading.runs[number] = run
        for first, last in [(0, len(text))] if regions is None else regions:
            if (start := run.first(first, last)) is not None:
                return regex.match(text, start)
        return None
    # The rest runs the folded form on the folded text when there is one (it matches where
    # the regex matches), and the regex itself only to confirm a match and return it.
    fast = tab.alternatives[number].folded if reading.exact else None
    read, find = (text, regex) if fast is None else (reading.folded, fast)
    if regions is None:
        budget.spend(len(text))
        found = find.search(read)
        return None if found is None else regex.match(text, found.start())
    for first, last in regions:
        if first == last:
            budget.spend(shape.width)
            if find.match(read, first) is not None:
                return regex.match(text, first)
            continue
        end = min(len(text), last + shape.width + _MARGIN)
        budget.spend(end - first)
        start = first
        while (match := find.search(read, start, end)) is not None and match.start() <= last:
            # A window's end reads as the end of the text; confirm on the whole reading.
            if find.match(read, match.start()) is not None:
                return regex.match(text, match.start())
            start = match.start() + 1
    return None


# -- the scanner ----------------------------------------------------------------------------

_SHORT = 2048  # up to this size, one finder pass over all readings together decides


def _match_short(texts: list[str]) -> dict[int, re.Match[str]]:
    """A short text: literals are looked up once, over all its readings joined (a literal
    in any reading makes a candidate), then each candidate searches each reading."""
    matched: dict[int, re.Match[str]] = {}
    tab = table()
    together = Listing.of("\n".join(texts), tab)
    # Each reading folded: folding goes character by character, so a slice of the whole.
    folded, start = [], 0
    for reading in texts:
        folded.append(together.folded[start : start + len(reading)])
        start += len(reading) + 1
    for index in tab.candidates(together.present):
        alternative = tab.alternatives[index]
        if alternative.pattern in matched or not all(map(together.has, tab.needs[index])):
            continue
        fast = alternative.folded if together.exact else None
        for reading, low in zip(texts, folded, strict=True):
            if fast is None:
                match = alternative.regex.search(reading)
            elif (found := fast.search(low)) is not None:
                match = alternative.regex.match(reading, found.start())
            else:
                continue
            if match is not None:
                matched[alternative.pattern] = match
                break
    return matched


def _match_long(text: str, texts: list[str]) -> dict[int, re.Match[str]]:
    """A long text: literal positions per reading, and regex work only near them, within
    the work budget. A decoded reading that is mostly the base reading (the first read in
    full) is read only where it differs: elsewhere a match would have been found there."""
    matched: dict[int, re.Match[str]] = {}
    tab = table()
    budget = _Budget(len(text))
    flattened = len(texts) > 1 and texts[1] == flatten(texts[0])
    base = 1 if flattened else 0
    try:
        for number, text_read in enumerate(texts):
            lines_only = number == 0 and flattened
            changes = changes_of(text_read, texts[base]) if number > base else None
            reading = Listing.of(text_read, tab, tab.find_lines if lines_only else None)
            for index in tab.candidates(reading.present):
                alternative = tab.alternatives[index]
                if alternative.pattern in matched:
                    continue
                if lines_only and not alternative.lines:
                    continue  # the flattened reading finds whatever it would here
                if (match := _search(tab, index, reading, budget, changes)) is not None:
                    matched[alternative.pattern] = match
    except _OverBudget as stop:
        stop.matched = matched
        raise
    return matched


def _excused(tab: Table, index: int, texts: list[str]) -> bool:
    rule = tab.patterns[index].id
    regexes = [alt.regex for alt in tab.alternatives if alt.pattern == index]
    return excused(rule, regexes, texts)


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
    tab = table()
    for index in sorted(matched):
        pattern, snippet = tab.patterns[index], matched[index].group(0)
        if not over and len(text) <= SHORT and _excused(tab, index, texts):
            continue
        if len(snippet) > 60:
            snippet = snippet[:57] + "..."
        findings.append(Finding(pattern.id, f"{pattern.description}: {snippet!r}"))
    if over:
        findings.append(
            Finding(
                "scan-limit",
                f"{len(text):,} characters too dense in trigger words to check in full within"
                " the scanner's budget; store less text at once",
            )
        )
    return findings
