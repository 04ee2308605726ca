r"""The scanner's compiled table: built on first use, from a stored copy when it is current.

``memory.scan.patterns`` is the rule table as people write it. What the scanner runs is
derived from it: every alternative split off on its own, the literal sets each needs
(``memory.scan.prefilter``), the literals its matches start with, an index from literal to
alternative, and for long texts each alternative's width and gap chain (``memory.scan.chain``).
Deriving all of that parses a few thousand regexes, about two seconds of CPU, so it is never
done at import (``import memory.scan`` must stay cheap: the CLI, the log redactor and the
terminal helpers import it) and the slow half is stored:

* ``table.json`` beside this module holds, per alternative, what the short-text path needs:
  its rule, its bounded source, its required and leading literals, whether it reads lines.
  It carries a fingerprint of the rule table; when the rules change and the file was not
  regenerated, the table is derived afresh (correct, only slower) and the test suite fails
  until ``make scan-table`` writes it again.
* Regexes compile when they are first run, and an alternative's width and chain are derived
  the first time a long text needs them, so a scan of a few short entries (``mnemo memory
  show``) compiles only the candidates their literals call for.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.scan.chain import Chain, context, part_sources, split
from memory.scan.finder import Finder
from memory.scan.patterns import RULES
from memory.scan.prefilter import (
    Literal,
    folded_regex,
    leading,
    required,
    split_alternatives,
    width,
)

__all__ = [
    "FLAGS",
    "TABLE_FILE",
    "Alternative",
    "Need",
    "Pattern",
    "Shape",
    "Table",
    "bounded",
    "derive",
    "fingerprint",
    "table",
]

FLAGS = re.IGNORECASE | re.MULTILINE
TABLE_FILE = Path(__file__).with_name("table.json")
#: Bumped when what the stored table holds, or how it is derived, changes.
_FORMAT = 1

# The readings collapse white space, so the table's ``\s+`` / ``\s*`` mean a short run.
_WHITE_RUN = re.compile(r"(?<!\\)((?:\\\\)*)\\s([+*])")
# Too common to be worth indexing: a set holding one of these is checked by a substring test.
_COMMON_WORDS = (
    "the and for with you your are not all any this that these those user can will have was"
    " were its our their them they then than there here what when it at on to in is of as an"
    " or be by do no so we he me my up if us"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def bounded(source: str) -> str:
    """``\\s+`` as ``\\s{1,4}`` and ``\\s*`` as ``\\s{0,4}``: every width stays finite."""
    return _WHITE_RUN.sub(
        lambda m: m.group(1) + ("\\s{1,4}" if m.group(2) == "+" else "\\s{0,4}"), source
    )


@functools.cache
def compiled(source: str) -> re.Pattern[str]:
    """``source`` compiled with the scanner's flags, once per process."""
    return re.compile(source, FLAGS)


@functools.cache
def compiled_folded(source: str) -> re.Pattern[str] | None:
    """``source`` for the folded text (``prefilter.folded_regex``), once per process; None
    when it has no folded form."""
    return folded_regex(source, FLAGS)


def _rare(literal: Literal) -> bool:
    """Worth listing every occurrence of: three characters or more, a whole word, or not
    plain ASCII letters (CJK words are two characters); never a common word or a run of one
    repeated character."""
    text = literal.text
    if text in _COMMON or (len(text) > 1 and len(set(text)) == 1):
        return False
    return len(text) >= 3 or literal.whole_word or not (text.isascii() and text.isalnum())


@dataclass(frozen=True, slots=True)
class Pattern:
    """One rule, all its alternatives in one regex (compiled when first asked for)."""

    id: str
    description: str
    source: str

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.source)


@dataclass(frozen=True, slots=True)
class Alternative:
    """One alternative of one rule, with what the short-text path needs to know of it."""

    pattern: int  # index into the table's patterns
    source: str  # bounded (see ``bounded``)
    needs: tuple[frozenset[Literal], ...]  # one literal of each set is in every match
    starts: frozenset[Literal]  # every match starts with one of these (empty: unknown)
    lines: bool  # reads line structure (^, $, \n): also run on the unflattened reading

    @property
    def regex(self) -> re.Pattern[str]:
        return compiled(self.source)

    @property
    def folded(self) -> re.Pattern[str] | None:
        """The regex to run on the folded text, when it has one (faster: see
        ``prefilter.folded_regex``); it finds what ``regex`` finds on the text."""
        return compiled_folded(self.source)


@dataclass(frozen=True, slots=True)
class Shape:
    """What the long-text path needs of an alternative, derived when first needed."""

    width: int  # the longest match
    chain: Chain | None  # split at its gaps (see memory.scan.chain), when it has any
    behind: int  # how far before its start a match reads (look-behinds, \b)
    ahead: int  # how far past its start a match reads (look-aheads and \b included)


def _reads_lines(source: str) -> bool:
    return bool(re.search(r"(?<!\\)[\^$](?<!\[\^)|\\n(?<!\[\^\\n)", source))


def patterns() -> tuple[Pattern, ...]:
    return tuple(
        Pattern(rule.id, rule.description, "|".join(f"(?:{bounded(a)})" for a in rule.alternatives))
        for rule in RULES
    )


def derive() -> tuple[Alternative, ...]:
    """Every alternative of ``RULES``, derived from the parsed regexes (the slow way)."""
    alternatives: list[Alternative] = []
    for index, rule in enumerate(RULES):
        for whole in rule.alternatives:
            for alt in split_alternatives(bounded(whole)):
                starts = leading(alt, FLAGS) or frozenset()
                if not all(map(_rare, starts)):
                    starts = frozenset()
                alternatives.append(
                    Alternative(index, alt, required(alt, FLAGS), starts, _reads_lines(alt))
                )
    return tuple(alternatives)


def fingerprint() -> str:
    """Of the rule table as written, and of the stored format."""
    rules = [[rule.id, rule.description, list(rule.alternatives)] for rule in RULES]
    data = json.dumps([_FORMAT, rules], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()


def _literals(literals: frozenset[Literal]) -> list[list[Any]]:
    return [[lit.text, lit.edge_before, lit.edge_after] for lit in sorted(literals)]


def _from_json(rows: list[list[Any]]) -> frozenset[Literal]:
    return frozenset(Literal(text, before, after) for text, before, after in rows)


def dump(alternatives: tuple[Alternative, ...]) -> str:
    """The stored form of ``alternatives``: JSON, one alternative per line."""
    lines = [
        json.dumps(
            [a.pattern, a.source, [_literals(n) for n in a.needs], _literals(a.starts), a.lines],
            ensure_ascii=False,
        )
        for a in alternatives
    ]
    body = ",\n".join(lines)
    return f'{{"fingerprint": "{fingerprint()}",\n"alternatives": [\n{body}\n]}}\n'


def load(path: Path = TABLE_FILE) -> tuple[Alternative, ...] | None:
    """The stored alternatives, or None when the file is missing, unreadable or stale."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint():
        return None
    return tuple(
        Alternative(pattern, source, tuple(map(_from_json, needs)), _from_json(starts), lines)
        for pattern, source, needs, starts, lines in data["alternatives"]
    )


@dataclass(frozen=True, slots=True)
class Need:
    """One required set, split into listed literals (by number) and plain substrings."""

    listed: frozenset[int]
    substrings: tuple[str, ...]


class Table:
    """The alternatives, the literal finder over them, and the candidate indexes."""

    def __init__(self, alternatives: tuple[Alternative, ...]) -> None:
        self.patterns = patterns()
        self.alternatives = alternatives
        # The finder lists every occurrence of the rare literals, each known by a number;
        # by folded string: (number, \b before, \b after). Common ones are looked for by a
        # substring test.
        rare = {lit for a in alternatives for r in (*a.needs, a.starts) for lit in r if _rare(lit)}
        self.literals = tuple(sorted(rare))  # by number
        self.numbers = {lit: n for n, lit in enumerate(self.literals)}
        listed: dict[str, tuple[tuple[int, bool, bool], ...]] = {}
        for lit, n in self.numbers.items():
            listed[lit.text] = (*listed.get(lit.text, ()), (n, lit.edge_before, lit.edge_after))
        self.listed = listed
        self.find = Finder(listed)
        # Listed sets first: checking them is a set operation, substrings take a scan each.
        self.needs = tuple(
            tuple(sorted(map(self._need, a.needs), key=lambda need: len(need.substrings)))
            for a in alternatives
        )
        self.starts = tuple(self._need(a.starts) for a in alternatives)
        # Candidates come from two indexes: an alternative is filed under its first and
        # second fully listed sets, and is a candidate when a literal of each occurs.
        self.first: dict[int, set[int]] = {}
        self.second: dict[int, set[int]] = {}
        self.one_set: set[int] = set()  # filed under one set only
        for number, needs in enumerate(self.needs):
            fully = [need.listed for need in needs if not need.substrings]
            for n in fully[0] if fully else ():
                self.first.setdefault(n, set()).add(number)
            for n in fully[1] if len(fully) > 1 else ():
                self.second.setdefault(n, set()).add(number)
            if len(fully) == 1:
                self.one_set.add(number)
        self.unfiled = frozenset(
            i for i, needs in enumerate(self.needs) if all(n.substrings for n in needs)
        )
        self._shapes: dict[int, Shape] = {}
        self._find_lines: Finder | None = None

    def _need(self, literals: frozenset[Literal]) -> Need:
        numbers = self.numbers
        return Need(
            frozenset(numbers[lit] for lit in literals if lit in numbers),
            tuple(sorted(lit.text for lit in literals if lit not in numbers)),
        )

    def shape(self, number: int) -> Shape:
        """Alternative ``number``'s width and chain (derived on first use)."""
        if (shape := self._shapes.get(number)) is None:
            source = self.alternatives[number].source
            behind, ahead = context(source, FLAGS)
            shape = Shape(width(source, FLAGS), split(source, FLAGS), behind, ahead)
            self._shapes[number] = shape
        return shape

    @functools.cached_property
    def shared_parts(self) -> frozenset[str]:
        """The sources of chain parts that two alternatives or more have (what one finds in
        a text is kept for the others: ``memory.scan.finds``)."""
        counts: dict[str, int] = {}
        for alternative in self.alternatives:
            for source in part_sources(alternative.source):
                counts[source] = counts.get(source, 0) + 1
        return frozenset(source for source, count in counts.items() if count > 1)

    def warm(self) -> None:
        """Derive every shape and compile every regex now (about a second of CPU) rather than
        on the first long text that needs them: for timing scans. A process that never scans
        a long text never pays it; one that does pays it once, on that text."""
        for number, alternative in enumerate(self.alternatives):
            alternative.regex  # noqa: B018 - compiled and cached
            self.shape(number)
        for pattern in self.patterns:
            pattern.regex  # noqa: B018
        self.find_lines  # noqa: B018
        self.shared_parts  # noqa: B018

    @property
    def find_lines(self) -> Finder:
        """A finder for the literals of the alternatives that read lines: an unflattened
        reading is only read by those."""
        if self._find_lines is None:
            strings = {
                lit.text
                for a in self.alternatives
                if a.lines
                for r in (*a.needs, a.starts)
                for lit in r
            }
            self._find_lines = Finder(strings & set(self.listed))
        return self._find_lines

    def candidates(self, present: Iterable[int]) -> list[int]:
        """The alternatives whose first two listed sets both occur (``present``: the listed
        literals that occur, by number), and the unfiled ones."""
        first: set[int] = set()
        second: set[int] = set(self.one_set)
        for number in present:
            first.update(self.first.get(number, ()))
            second.update(self.second.get(number, ()))
        return sorted((first & second) | self.unfiled)


@functools.cache
def table() -> Table:
    """The table, built once per process: from ``table.json`` when it is current."""
    return Table(load() or derive())


def main() -> int:
    """``make scan-table``: write ``table.json`` again (when the rules changed)."""
    fresh = dump(derive())
    current = TABLE_FILE.read_text(encoding="utf-8") if TABLE_FILE.exists() else ""
    if current != fresh:
        TABLE_FILE.write_text(fresh, encoding="utf-8")
        print(f"wrote {TABLE_FILE}")
    return 0
