"""The scanner's compiled rule table, built on the first scan, and its stored analysis.

``memory.scan_patterns`` is the table as data; here each row becomes a ``Pattern`` (one
regex per rule, for ``patterns()`` and ``pattern(id)``) and each of its top-level
alternatives an ``Alternative`` with the literals every match needs (``Table``, the
prefilter ``memory.scan`` runs on). Nothing is built on import: ``table()`` is built on the
first scan, ``pattern(id)`` compiles one rule alone (the credential redactors need only
``hardcoded-secret``).

Reading the required and leading literals off 382 parsed alternatives
(``memory.scan_prefilter.shape``) takes about 0.2 s, most of what ``mnemo memory show``
would cost. It depends only on the alternatives' sources, so it is computed ahead of time
into ``scan_table.json`` beside this module, with a fingerprint of those sources: ``load``
returns it only for exactly the table being built. An edited table whose file was not
regenerated is analysed at run time (slower, never wrong), and ``tests/memory/test_scan.py``
fails until it is regenerated with ``make scan-index``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.scan_patterns import RULES, Rule
from memory.scan_prefilter import Finder, Literal, Shape, shape, split_alternatives

__all__ = [
    "FLAGS",
    "INDEX",
    "Alternative",
    "Need",
    "Pattern",
    "Table",
    "alternative_sources",
    "analyse",
    "dumps",
    "fingerprint",
    "load",
    "main",
    "pattern",
    "patterns",
    "table",
]


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    description: str
    regex: re.Pattern[str]


# -- the compiled table ---------------------------------------------------------------------

FLAGS = re.IGNORECASE | re.MULTILINE  # every pattern's
# The readings collapse white space, so the table's ``\s+`` / ``\s*`` mean a short run.
_WHITE_RUN = re.compile(r"(?<!\\)((?:\\\\)*)\\s([+*])")
# Too common to be worth indexing: a set holding one of these is checked by a substring test.
_COMMON_WORDS = (
    "the and for with you your are not all any this that these those user can will have was"
    " were its our their them they then than there here what when it at on to in is of as an"
    " or be by do no so we he me my up if us"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def _bounded(source: str) -> str:
    """``\\s+`` as ``\\s{1,4}`` and ``\\s*`` as ``\\s{0,4}``: every width stays finite."""
    return _WHITE_RUN.sub(
        lambda m: m.group(1) + ("\\s{1,4}" if m.group(2) == "+" else "\\s{0,4}"), source
    )


def _rare(literal: Literal) -> bool:
    """Worth listing every occurrence of: three characters or more, a whole word, or not
    plain ASCII letters (CJK words are two characters); never a common word or a run of one
    repeated character."""
    text = literal.text
    if text in _COMMON or (len(text) > 1 and len(set(text)) == 1):
        return False
    return len(text) >= 3 or literal.whole_word or not (text.isascii() and text.isalnum())


@dataclass(frozen=True, slots=True)
class Alternative:
    pattern: int  # index into RULES
    source: str  # compiled when it is first a candidate (``Table.regex``)
    width: int  # the longest match
    needs: tuple[frozenset[Literal], ...]  # one literal of each set is in every match
    index: frozenset[Literal]  # the set it is filed under (empty: always a candidate)
    starts: frozenset[Literal]  # every match starts with one of these (empty: unknown)
    lines: bool  # reads line structure (^, $, \n): also run on the unflattened reading


def _reads_lines(source: str) -> bool:
    return bool(re.search(r"(?<!\\)[\^$](?<!\[\^)|\\n(?<!\[\^\\n)", source))


def _source(rule: Rule) -> str:
    return "|".join(f"(?:{_bounded(alt)})" for alt in rule.alternatives)


@functools.cache
def pattern(rule_id: str) -> Pattern:
    """One rule of the table, compiled alone: cheap, for callers that need one regex (the
    credential shapes of ``hardcoded-secret`` that redact logs) and not the scanner."""
    rule = next(rule for rule in RULES if rule.id == rule_id)
    return Pattern(rule.id, rule.description, re.compile(_source(rule), FLAGS))


def patterns() -> tuple[Pattern, ...]:
    """The whole table, one compiled regex per rule, in table order."""
    return tuple(pattern(rule.id) for rule in RULES)


@dataclass(frozen=True, slots=True)
class Need:
    """One required set, split into listed literals (by number) and plain substrings."""

    listed: frozenset[int]
    substrings: tuple[str, ...]

    @classmethod
    def of(cls, literals: frozenset[Literal], numbers: dict[Literal, int]) -> Need:
        listed = frozenset(numbers[lit] for lit in literals if lit in numbers)
        return cls(listed, tuple(sorted(lit.text for lit in literals if lit not in numbers)))


@dataclass(frozen=True, slots=True)
class Table:
    """The compiled table: every alternative, the literals it needs, and their finder."""

    alternatives: tuple[Alternative, ...]
    # Every rare literal, known by a number; by folded string: (number, \b before, \b after).
    # Common ones are looked for by a substring test.
    listed: dict[str, tuple[tuple[int, bool, bool], ...]]
    find: Finder
    needs: tuple[tuple[Need, ...], ...]  # per alternative, listed sets first
    starts: tuple[Need, ...]
    # Candidates come from two indexes: an alternative is filed under its first and second
    # fully listed sets, and is a candidate when a literal of each occurs (set operations).
    first: dict[int, set[int]]
    second: dict[int, set[int]]
    one_set: frozenset[int]  # filed under one set only
    unfiled: frozenset[int]
    compiled: list[re.Pattern[str] | None]  # per alternative, once it has been a candidate

    def regex(self, index: int) -> re.Pattern[str]:
        compiled = self.compiled[index]
        if compiled is None:
            compiled = self.compiled[index] = re.compile(self.alternatives[index].source, FLAGS)
        return compiled


def alternative_sources() -> list[tuple[int, str]]:
    """``(rule index, source)`` of every alternative of the table, in order."""
    return [
        (index, part)
        for index, rule in enumerate(RULES)
        for whole in map(_bounded, rule.alternatives)
        for part in split_alternatives(whole)
    ]


def analyse(sources: Sequence[str]) -> list[Shape]:
    """The prefilter's reading of each alternative (stored in ``scan_table.json``)."""
    return [shape(source, FLAGS) for source in sources]


@functools.cache
def table() -> Table:
    """Built on the first scan, not on import: commands that never scan (``mnemo --help``,
    ``mnemo sessions list``) do not pay for it; the analysis comes precomputed (``load``)
    and each regex is compiled when it is first a candidate."""
    indexed = alternative_sources()
    sources = [source for _, source in indexed]
    shapes = load(sources, FLAGS) or analyse(sources)
    alternatives: list[Alternative] = []
    for (index, source), read in zip(indexed, shapes, strict=True):
        filed = next((r for r in read.required if all(map(_rare, r))), frozenset())
        starts = read.leading or frozenset()
        if not all(map(_rare, starts)):
            starts = frozenset()
        alternatives.append(
            Alternative(
                index, source, read.width, read.required, filed, starts, _reads_lines(source)
            )
        )
    numbers = {
        lit: n
        for n, lit in enumerate(
            sorted(
                {lit for a in alternatives for r in (*a.needs, a.starts) for lit in r if _rare(lit)}
            )
        )
    }
    listed: dict[str, tuple[tuple[int, bool, bool], ...]] = {}
    for lit, n in numbers.items():
        listed[lit.text] = (*listed.get(lit.text, ()), (n, lit.edge_before, lit.edge_after))
    # Listed sets first: checking them is a set operation, substrings take a scan each.
    needs = tuple(
        tuple(sorted((Need.of(r, numbers) for r in a.needs), key=lambda n: len(n.substrings)))
        for a in alternatives
    )
    first: dict[int, set[int]] = {}
    second: dict[int, set[int]] = {}
    one_set: set[int] = set()
    for number, sets in enumerate(needs):
        full = [need.listed for need in sets if not need.substrings]
        for n in full[0] if full else ():
            first.setdefault(n, set()).add(number)
        for n in full[1] if len(full) > 1 else ():
            second.setdefault(n, set()).add(number)
        if len(full) == 1:
            one_set.add(number)
    return Table(
        alternatives=tuple(alternatives),
        listed=listed,
        find=Finder(listed),
        needs=needs,
        starts=tuple(Need.of(a.starts, numbers) for a in alternatives),
        first=first,
        second=second,
        one_set=frozenset(one_set),
        unfiled=frozenset(i for i, sets in enumerate(needs) if all(n.substrings for n in sets)),
        compiled=[None] * len(alternatives),
    )


# -- the stored analysis ------------------------------------------------------------------

INDEX = Path(__file__).with_name("scan_table.json")


def fingerprint(sources: Sequence[str], flags: int) -> str:
    """Names the table an index was computed for: every alternative's source, and the flags."""
    text = json.dumps([flags, *sources], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _literals(literals: frozenset[Literal]) -> list[list[Any]]:
    return [[lit.text, lit.edge_before, lit.edge_after] for lit in sorted(literals)]


def dumps(sources: Sequence[str], flags: int, shapes: Sequence[Shape]) -> str:
    """The index file's text: one line per alternative, so a diff shows what changed."""
    rows = [
        json.dumps(
            [
                shape.width,
                [_literals(needed) for needed in shape.required],
                None if shape.leading is None else _literals(shape.leading),
            ],
            ensure_ascii=False,
        )
        for shape in shapes
    ]
    head = json.dumps({"fingerprint": fingerprint(sources, flags)})[:-1]
    return head + ', "shapes": [\n' + ",\n".join(rows) + "\n]}\n"


def _set(rows: list[list[Any]]) -> frozenset[Literal]:
    return frozenset(Literal(text, before, after) for text, before, after in rows)


def load(sources: Sequence[str], flags: int, path: Path = INDEX) -> list[Shape] | None:
    """The stored shapes of ``sources``, or None when there is no index for exactly them."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("fingerprint") != fingerprint(sources, flags):
        return None
    shapes = data["shapes"]
    if len(shapes) != len(sources):
        return None
    return [
        Shape(tuple(map(_set, required)), None if leading is None else _set(leading), width)
        for width, required, leading in shapes
    ]


def main() -> None:
    """Write ``scan_table.json`` for the table as it is now (``make scan-index``)."""
    sources = [source for _, source in alternative_sources()]
    fresh = analyse(sources)
    INDEX.write_text(dumps(sources, FLAGS, fresh), encoding="utf-8")
    print(f"wrote {INDEX} ({len(fresh)} alternatives)")
