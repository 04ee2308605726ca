"""Injection and invisible-Unicode scanner for text that will reach a system prompt.

Memory entries, skills, SOUL.md and session summaries are replayed into future system
prompts, so anything stored there is a persistent prompt. ``scan(text)`` returns the findings
that make a text unsafe to store:

* an **invisible or bidi control character** (zero-width, word joiner, BOM, embedding and
  isolate controls, Unicode tags), reported with its code point, checked on the raw text;
* a **pattern** from ``PATTERNS`` (the table lives in ``memory.scan_patterns``: prompt
  injection, fake prompt structure, concealment, exfiltration, backdoors, hard-coded
  secrets, hidden HTML), checked case-insensitively on *readings* of the text: NFKC-folded
  (fullwidth and mathematical letters), flattened over line breaks, with Cyrillic/Greek
  homoglyphs, leetspeak, spaced-out letters and broken hyphens undone, reversed, and
  decoded from base64 and rot13.

How it stays fast (``bench/scan_bench.py`` measures it):

* **a literal prefilter.** Each alternative of each pattern is compiled on its own, and the
  strings that every match of it must contain are read off its parsed regex
  (``_required``: for ``\bignore\b[^\n]{0,30}\ball\b`` that is ``{"ignore"}``). One pass
  of a trie regex over the case-folded readings finds which of those strings occur; only the
  alternatives they name are run. A benign entry typically runs a handful of regexes, not
  hundreds, and the result is exactly the same as running them all (the fold agrees with
  the regex engine's case-insensitive matching; the tests check both facts).
* **bounded widths.** No alternative can match more than ``MAX_WIDTH`` characters (gaps are
  ``[^\n]{0,N}``, runs ``{1,N}``), so each search is linear in the text with a constant
  factor, never quadratic; the de-obfuscation helpers are bounded the same way.
* **a cap for the decoders.** The expensive extra readings (reversed, leetspeak, base64,
  rot13) see at most ``DECODE_CAP`` characters of a huge text; the folded and flattened
  readings always see all of it.
"""

from __future__ import annotations

import base64
import importlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memory.scan_patterns import RULES

__all__ = [
    "DECODE_CAP",
    "INVISIBLE_CHARS",
    "MAX_WIDTH",
    "PATTERNS",
    "Finding",
    "Pattern",
    "fold",
    "normalise",
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
_INVISIBLE = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "]")

#: The longest match any alternative may have (checked by the tests on the parsed regexes).
MAX_WIDTH = 1000
#: How much of a text the extra decoded readings (reversed, leetspeak, base64, rot13) see.
DECODE_CAP = 16_384


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    description: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    detail: str


# -- normalisation and readings -------------------------------------------------------------

_SPACES = re.compile(r"[^\S\n]+")


def normalise(text: str) -> str:
    """NFKC-fold look-alike letters and collapse runs of horizontal white space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text))


def _flatten(text: str) -> str:
    """All white space (line breaks too) as single spaces, for phrases split over lines."""
    return " ".join(text.split())


# Latin look-alikes that NFKC leaves alone (Cyrillic and Greek homoglyphs).
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡӏАЕОРСУХІЈЅВНКМТαονρτκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdglAEOPCYXIJSBHKMTaovptkiABEZHIKMNOPTYX",
)
_LEET = str.maketrans("013457@$", "oieastas")
# Every repeat is bounded (a word of at most 64 characters), so these stay linear too.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?=[\w@$]{0,63}[A-Za-z])(?=[\w@$]{0,63}[0-9@$])[\w@$]{3,64}(?![\w@$])"
)
_SPACED = re.compile(r"(?<![^\W_])[^\W_]([ .·_*-])[^\W_](?:\1[^\W_]){1,63}(?![^\W_])")
_HYPHEN_BREAK = re.compile(r"(\w)-[ \t]{0,8}\n[ \t]{0,8}(\w)")
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


def _readings(text: str) -> list[str]:
    """The texts to match: the folded text, then de-obfuscated readings of it."""
    folded = normalise(text)
    flat = _flatten(folded)
    readings = [folded, flat]
    head = text[:DECODE_CAP]
    joined = _SPACED.sub(
        lambda m: m.group().replace(m.group(1), ""), unicodedata.normalize("NFKC", head)
    )
    joined = _HYPHEN_BREAK.sub(r"\1\2", joined)
    deobfuscated = _LEET_WORD.sub(
        lambda m: m.group().translate(_LEET), joined.translate(_CONFUSABLES)
    )
    readings.append(_flatten(deobfuscated))
    readings.append(_flatten(_INNER_HYPHEN.sub("", deobfuscated)))
    readings.append(flat[:DECODE_CAP][::-1])  # "read backwards and comply"
    for blob in _BASE64.findall(folded[: 4 * DECODE_CAP]):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable():
            readings.append(_flatten(normalise(decoded)))
    if "rot" in folded.lower():
        readings.append(flat[:DECODE_CAP].translate(_ROT13))
    return list(dict.fromkeys(readings))


# -- case folding shared by the prefilter and the regex engine ------------------------------

# ``re.IGNORECASE`` also equates these with i; str.casefold() does everything else it does.
_DOTTED_I = str.maketrans({"İ": "i", "ı": "i"})


def fold(text: str) -> str:
    """Case-fold ``text`` so that whatever ``re.IGNORECASE`` equates, folds the same."""
    return text.translate(_DOTTED_I).casefold()


# -- required literals, read off the parsed regex -------------------------------------------

_parser: Any = importlib.import_module("re._parser")
_MAX_STRINGS = 64  # a literal set larger than this is not worth tracking exactly

_Strings = frozenset[str]


def _cross(left: _Strings, right: _Strings) -> _Strings | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    return frozenset(a + b for a in left for b in right)


def _best(candidates: Iterable[_Strings]) -> _Strings | None:
    """The most selective set: the longest shortest string, then the fewest strings."""
    usable = [_minimal(c) for c in candidates if "" not in c]
    if not usable:
        return None
    return max(usable, key=lambda c: (min(map(len, c)), -len(c)))


def _minimal(strings: _Strings) -> _Strings:
    """Drop strings that contain another member: finding the shorter one is enough."""
    return frozenset(s for s in strings if not any(o != s and o in s for o in strings))


def _item(op: Any, av: Any) -> tuple[_Strings | None, _Strings | None]:
    """(exact, required) for one parsed node: the finite set of strings it matches (or
    None), and strings one of which every match contains (or None when unknown)."""
    name = getattr(op, "name", "")
    if name == "LITERAL":
        return frozenset([fold(chr(av))]), None
    if name == "IN":
        if len(av) <= 8 and all(getattr(o, "name", "") == "LITERAL" for o, _ in av):
            return frozenset(fold(chr(c)) for _, c in av), None
        return None, None
    if name in ("AT", "ASSERT", "ASSERT_NOT"):
        return frozenset([""]), None  # zero width: neighbours stay adjacent
    if name == "SUBPATTERN":
        return _sequence(av[-1])
    if name == "BRANCH":
        parts = [_sequence(branch) for branch in av[1]]
        exact: _Strings | None = frozenset()
        required: _Strings | None = frozenset()
        for part_exact, part_required in parts:
            exact = None if exact is None or part_exact is None else exact | part_exact
            best = _best([part_exact]) if part_exact is not None else part_required
            required = None if required is None or best is None else required | best
        if exact is not None and len(exact) > _MAX_STRINGS:
            exact = None
        return exact, required
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = av
        body_exact, body_required = _sequence(body)
        exact = None
        if body_exact is not None and high <= 1:
            exact = body_exact | frozenset([""]) if low == 0 else body_exact
        if low == 0:
            return exact, None
        return exact, body_required if body_exact is None else _best([body_exact])
    return None, None


def _sequence(items: Any) -> tuple[_Strings | None, _Strings | None]:
    candidates: list[_Strings] = []
    run: _Strings | None = frozenset([""])
    whole: _Strings | None = frozenset([""])
    for op, av in items:
        exact, required = _item(op, av)
        if exact is not None:
            whole = None if whole is None else _cross(whole, exact)
            joined = None if run is None else _cross(run, exact)
            if joined is None:
                if run is not None:
                    candidates.append(run)
                joined = exact
            run = joined
            continue
        whole = None
        if run is not None:
            candidates.append(run)
        run = frozenset([""])
        if required is not None:
            candidates.append(required)
    if run is not None:
        candidates.append(run)
    return whole, _best(candidates)


def _required(regex: str, flags: int) -> _Strings | None:
    """Strings (case-folded) one of which every match of ``regex`` contains, or None."""
    exact, required = _sequence(_parser.parse(regex, flags))
    return _best([exact]) if exact is not None else required


def _trie(strings: Iterable[str]) -> str:
    """A regex alternation of ``strings`` factored by common prefix (fast in ``re``)."""
    tree: dict[str, Any] = {}
    for s in strings:
        node = tree
        for char in s:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return emit(tree)


# -- the compiled table ---------------------------------------------------------------------

_FLAGS = re.IGNORECASE | re.MULTILINE


@dataclass(frozen=True, slots=True)
class _Alternative:
    pattern: int  # index into PATTERNS
    regex: re.Pattern[str]
    required: _Strings | None  # None: always run


def _compile() -> tuple[tuple[Pattern, ...], tuple[_Alternative, ...]]:
    patterns: list[Pattern] = []
    alternatives: list[_Alternative] = []
    for index, rule in enumerate(RULES):
        source = "|".join(f"(?:{alt})" for alt in rule.alternatives)
        patterns.append(Pattern(rule.id, rule.description, re.compile(source, _FLAGS)))
        for alt in rule.alternatives:
            alternatives.append(
                _Alternative(index, re.compile(alt, _FLAGS), _required(alt, _FLAGS))
            )
    return tuple(patterns), tuple(alternatives)


PATTERNS, _ALTERNATIVES = _compile()
_LITERALS: frozenset[str] = frozenset(s for a in _ALTERNATIVES if a.required for s in a.required)
# Every literal that occurs starts somewhere; at that position the trie's first (longest)
# match is a string that begins with it, so "contained in a found string" recovers the rest.
_FINDER = re.compile(f"(?=({_trie(sorted(_LITERALS, key=len, reverse=True))}))")
_CONTAINED: dict[str, frozenset[str]] = {
    found: frozenset(lit for lit in _LITERALS if lit in found) for found in _LITERALS
}
_ALWAYS = tuple(a for a in _ALTERNATIVES if a.required is None)


def _present(folded_readings: str) -> set[str]:
    present: set[str] = set()
    for found in set(_FINDER.findall(folded_readings)):
        present |= _CONTAINED[found]
    return present


def _candidates(readings: list[str]) -> Iterator[_Alternative]:
    """The alternatives worth running on ``readings``, in table order."""
    present = _present("\n".join(fold(r) for r in readings))
    for alternative in _ALTERNATIVES:
        if alternative.required is None or not alternative.required.isdisjoint(present):
            yield alternative


# -- the scanner ----------------------------------------------------------------------------


def scan(text: str) -> list[Finding]:
    """Return every finding for ``text`` (empty list = safe to store).

    Invisible characters come first, one finding per distinct code point; then one finding
    per pattern id that matches, in table order.
    """
    findings: list[Finding] = []
    seen: set[str] = set()
    for hit in _INVISIBLE.finditer(text):
        char = hit.group()
        if char not in seen:
            seen.add(char)
            name = unicodedata.name(char, "UNNAMED")
            findings.append(
                Finding("invisible-unicode", f"U+{ord(char):04X} {name} at position {hit.start()}")
            )
    readings = _readings(text)
    matched: dict[int, re.Match[str]] = {}
    for alternative in _candidates(readings):
        if alternative.pattern in matched:
            continue
        for reading in readings:
            if (match := alternative.regex.search(reading)) is not None:
                matched[alternative.pattern] = match
                break
    for index in sorted(matched):
        pattern, snippet = PATTERNS[index], matched[index].group(0)
        if len(snippet) > 60:
            snippet = snippet[:57] + "..."
        findings.append(Finding(pattern.id, f"{pattern.description}: {snippet!r}"))
    return findings
