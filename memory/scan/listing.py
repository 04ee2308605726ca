r"""Where the table's literals occur in one reading: the scanner's literal prefilter, per text.

``Listing.of(text, table)`` runs the finder (``memory.scan.finder``: one Aho-Corasick pass
over the folded text) and keeps where each string ends. A literal of the table is a string
and whether ``\b`` must hold on either side (``memory.scan.prefilter.Literal``); which
literals occur at all is decided at once, by the first hit of each string where its ``\b``
holds (usually the first hit). Every place of a literal, each hit checked, is listed only
when the scanner asks for it (``places``: to search only where a match can be), from a
mask of the text's word characters made once.

Dropping a hit only ever spares regex work (the regexes decide what matches), so these lists
are a filter: exact in that they hold every place a literal of a match can be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.scan.chain_run import Run
from memory.scan.finder import Finder
from memory.scan.finds import Finds
from memory.scan.prefilter import Literal, fold, folds_exactly
from memory.scan.table import Need, Table

__all__ = ["DENSE", "Listing", "word_mask"]

#: Past this many occurrences a literal's places are no longer listed (``places`` is None).
DENSE = 1024
_MASK_PAST = 4096  # a text past ASCII gets a word mask for a literal with this many hits

# \w for each ASCII character (a byte per code; none above 127 is ASCII).
_ASCII_WORD = bytes(int(chr(c).isalnum() or c == ord("_")) for c in range(128)) + bytes(128)
_WORDS_PAST_ASCII = re.compile(r"[^\W\x00-\x7f]+")


def word_mask(text: str) -> bytes:
    """A zero byte, then a byte per character of ``text`` (1 where re's ``\\w`` matches),
    then a zero byte: the edges of the text read as non-word characters, as for ``\\b``."""
    mask = b"\x00" + text.encode("ascii", "replace").translate(_ASCII_WORD) + b"\x00"
    if text.isascii():
        return mask
    marked = bytearray(mask)  # each character past ASCII is a "?" there: mark the words
    for run in _WORDS_PAST_ASCII.finditer(text):
        marked[run.start() + 1 : run.end() + 1] = b"\x01" * (run.end() - run.start())
    return bytes(marked)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what re's \w means for str


def _edges(text: str, start: int, end: int, before: bool, after: bool) -> bool:
    """Whether ``\\b`` holds where asked around the hit from ``start`` to ``end`` (its last
    character)."""
    if before and (start > 0 and _word(text[start - 1])) == _word(text[start]):
        return False
    return not after or (end + 1 < len(text) and _word(text[end + 1])) != _word(text[end])


def _holds(text: str, ends: list[int], back: int, before: bool, after: bool) -> bool:
    """Whether, at one of the hits ending at ``ends``, ``\\b`` holds where asked."""
    return any(_edges(text, end - back, end, before, after) for end in ends)


@dataclass(slots=True)
class Listing:
    """One reading, its folded form, and where the table's literals occur in it."""

    text: str
    folded: str
    exact: bool  # whether folded regexes may read ``folded`` (``prefilter.folds_exactly``)
    literals: tuple[Literal, ...]  # the table's listed literals, by number
    ends: dict[str, list[int]]  # where each string occurs, by its last character
    present: set[int]  # the literals that occur (their \b holding)
    at: dict[int, list[int]] = field(default_factory=dict)  # listed when asked: see places
    dense: set[int] = field(default_factory=set)  # those with more than DENSE places
    runs: dict[int, Run] = field(default_factory=dict)  # the chains run here, by alternative
    finds: dict[tuple[str, bool], Finds] = field(default_factory=dict)  # their parts' finds
    mask: bytes = b""  # word_mask(text), made when first needed
    looked_for: frozenset[str] = frozenset()  # the strings the finder looked for
    seen: dict[str, list[int]] = field(default_factory=dict)  # see occurrences
    asked: dict[Need, list[int] | None] = field(default_factory=dict)  # places, by need

    @classmethod
    def of(cls, text: str, tab: Table, finder: Finder | None = None) -> Listing:
        """``text`` with its literals found (by ``finder``: all of them by default)."""
        folded = fold(text)
        ends = (finder or tab.find).ends(folded)
        present: set[int] = set()
        for string, hits in ends.items():
            back = len(string) - 1
            for number, before, after in tab.listed[string]:
                if not (before or after) or _holds(text, hits, back, before, after):
                    present.add(number)
        finder = finder or tab.find
        reading = cls(text, folded, folds_exactly(text), tab.literals, ends, present)
        reading.looked_for = finder.strings
        return reading

    def occurrences(self, string: str) -> list[int]:
        """Every place of ``string`` in the folded text (shared by the chains run here: a
        part's scout strings): the finder's hits when it looked for the string."""
        if (found := self.seen.get(string)) is None:
            if string in self.looked_for:
                found = [end - len(string) + 1 for end in self.ends.get(string, ())]
            else:
                found, at = [], self.folded.find(string)
                while at >= 0:
                    found.append(at)
                    at = self.folded.find(string, at + 1)
            self.seen[string] = found
        return found

    def has(self, need: Need) -> bool:
        """Whether one literal of ``need`` occurs (for a substring, \\b is left to the regex)."""
        if not need.listed.isdisjoint(self.present):
            return True
        return any(sub in self.folded for sub in need.substrings)

    def places(self, need: Need) -> list[int] | None:
        """Every position of ``need`` (None when it is not all listed, or too dense)."""
        if need in self.asked:
            return self.asked[need]
        self.asked[need] = found = self._places(need)
        return found

    def _places(self, need: Need) -> list[int] | None:
        if need.substrings or not need.listed.isdisjoint(self.dense):
            return None
        numbers = [n for n in need.listed if n in self.present]
        for number in numbers:  # the cheap answer first: too many hits, none to check
            literal = self.literals[number]
            checked = literal.edge_before or literal.edge_after
            if not checked and len(self.ends[literal.text]) > DENSE:
                self.dense.add(number)
                return None
        lists = []
        for number in numbers:
            lists.append(self._hits(number))
            if number in self.dense:
                return None
        return sorted({p for hits in lists for p in hits})

    def _hits(self, number: int) -> list[int]:
        """Where literal ``number`` starts, its \\b checked (the first DENSE places)."""
        if (found := self.at.get(number)) is not None:
            return found
        literal = self.literals[number]
        ends, back = self.ends[literal.text], len(literal.text) - 1
        before, after = literal.edge_before, literal.edge_after
        if not (before or after):
            starts = [e - back for e in ends]
        elif not self.mask and len(ends) < _MASK_PAST and not self.text.isascii():
            # A mask of a text past ASCII costs a step per run of letters: a few hits are
            # checked one by one instead.
            text = self.text
            starts = [e - back for e in ends if _edges(text, e - back, e, before, after)]
        else:
            if not self.mask:
                self.mask = word_mask(self.text)
            mask = self.mask
            # word(i) is mask[i + 1]: \b before the hit, mask[s] != mask[s + 1]; after it,
            # mask[e + 1] != mask[e + 2].
            if before and after:
                starts = [
                    e - back
                    for e in ends
                    if mask[e - back] != mask[e - back + 1] and mask[e + 1] != mask[e + 2]
                ]
            elif before:
                starts = [e - back for e in ends if mask[e - back] != mask[e - back + 1]]
            else:
                starts = [e - back for e in ends if mask[e + 1] != mask[e + 2]]
        if len(starts) > DENSE:
            self.dense.add(number)
            starts = starts[:DENSE]
        self.at[number] = starts
        return starts
