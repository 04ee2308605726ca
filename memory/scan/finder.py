"""Every occurrence of many strings in one pass over a folded text (``memory.scan.prefilter``
says which strings a regex needs; ``fold`` makes the text they are looked for in).

``Finder`` uses Aho-Corasick (``pyahocorasick``, in C) when it is installed, else one regex
over a trie of the strings: the same answers, slower.
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Finder"]

try:
    _ahocorasick: Any = importlib.import_module("ahocorasick")
except ImportError:  # pragma: no cover - the fallback is tested by asking for it
    _ahocorasick = None


def _trie(strings: Iterable[str]) -> str:
    """A regex alternation of ``strings`` factored by common prefix, longest first."""
    tree: dict[str, Any] = {}
    for s in strings:
        node = tree
        for char in s:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(tree)


class Finder:
    """Every occurrence of every string in a folded text, as ``(start, string)`` pairs."""

    def __init__(self, strings: Iterable[str], *, fast: bool = True) -> None:
        ordered = sorted(set(strings))
        self.strings = frozenset(ordered)
        self.automaton: Any = None
        if fast and _ahocorasick is not None:
            self.automaton = _ahocorasick.Automaton()
            for string in ordered:
                self.automaton.add_word(string, string)
            self.automaton.make_automaton()
        self.ordered = ordered
        # The fallback (no pyahocorasick) is built only when it is used: with the automaton
        # it is not, and building it costs more than the automaton.
        self.regex: re.Pattern[str] | None = None
        self.prefixes: dict[str, tuple[str, ...]] = {}

    def _fallback(self) -> re.Pattern[str]:
        """At each position the trie regex reports the longest string starting there; the
        shorter ones starting there are its prefixes."""
        if self.regex is None:
            ordered = self.ordered
            self.prefixes = {f: tuple(s for s in ordered if f.startswith(s)) for f in ordered}
            self.regex = re.compile(f"(?=({_trie(ordered)}))")
        return self.regex

    def ends(self, folded: str) -> dict[str, list[int]]:
        """Where each string that occurs ends (the index of its last character), in order:
        what calling it yields, grouped by string (the scanner's hot loop: one step a hit)."""
        ends: defaultdict[str, list[int]] = defaultdict(list)
        if self.automaton is not None:
            for end, string in self.automaton.iter(folded):
                ends[string].append(end)
        else:
            for start, string in self(folded):
                ends[string].append(start + len(string) - 1)
        return ends

    def __call__(self, folded: str) -> Iterator[tuple[int, str]]:
        if self.automaton is not None:
            for end, string in self.automaton.iter(folded):
                yield end - len(string) + 1, string
            return
        for match in self._fallback().finditer(folded):
            for string in self.prefixes[match.group(1)]:
                yield match.start(), string
