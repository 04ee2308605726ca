"""The scanner's literal prefilter: which strings a regex needs, and where they occur.

``required(regex)`` reads, off the parsed regex, sets of strings such that every match
contains one string of each set (``\\bignore\\b[^\\n]{0,30}\\b(?:all|any)\\b`` needs
``{"ignore"}`` and ``{"all", "any"}``), with whether ``\\b`` must hold on either side.
``memory.scan.finder`` then reports where those strings occur, in ``fold(text)``, which
lower-cases exactly as far as ``re.IGNORECASE`` equates characters and keeps every index, so
a position found in the folded text is the same position in the text the regexes read.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from memory.scan.skip import compile_skipping

__all__ = [
    "Literal",
    "edge",
    "fold",
    "folded_regex",
    "folds_exactly",
    "leading",
    "required",
    "split_alternatives",
    "width",
]

# ``re.IGNORECASE`` equates a few characters that str.lower() keeps apart (dotless i, long s,
# Greek symbol variants, old Cyrillic forms); fold them first. İ goes too: it is the one
# character whose lower() is two characters, and a folded text must keep every index; and Σ,
# whose lower() depends on its neighbours (ς at the end of a word): fold(a + b) must be
# fold(a) + fold(b), and a character must fold the same wherever it stands.
_FOLD_FIXES = str.maketrans(
    {
        "İ": "i",
        "Σ": "σ",
        "ı": "i",
        "ſ": "s",
        "µ": "μ",
        "\u0345": "ι",
        "\u1fbe": "ι",
        "ς": "σ",
        "ϐ": "β",
        "ϵ": "ε",
        "ϑ": "θ",
        "ϰ": "κ",
        "ϱ": "ρ",
        "ϕ": "φ",
        "ϖ": "π",
        "ᲀ": "в",
        "ᲁ": "д",
        "ᲂ": "о",
        "ᲃ": "с",
        "ᲄ": "т",
        "ᲅ": "т",
        "ᲆ": "ъ",
        "ᲇ": "ѣ",
        "ᲈ": "ꙋ",
        "ẛ": "ṡ",
        "\u1fd3": "\u0390",
        "\u1fe3": "\u03b0",
        "\ufb05": "\ufb06",
    }
)

_NEEDS_FIXES = re.compile("[" + "".join(map(chr, _FOLD_FIXES)) + "]")


def fold(text: str) -> str:
    """Lower-case ``text`` so that characters ``re.IGNORECASE`` equates fold the same; the
    result is as long as ``text``, index for index."""
    if text.isascii():
        return text.lower()
    if _NEEDS_FIXES.search(text) is not None:  # one at a time: translate() reads every one
        text = _NEEDS_FIXES.sub(_fix, text)
    return text.lower()


def _fix(match: re.Match[str]) -> str:
    return str(_FOLD_FIXES[ord(match.group())])


def is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what re's \w means for str


def edge(text: str, index: int) -> bool:
    """Whether ``\\b`` holds at ``index`` of ``text``."""
    before = index > 0 and is_word(text[index - 1])
    return before != (index < len(text) and is_word(text[index]))


@dataclass(frozen=True, slots=True, order=True)
class Literal:
    """A case-folded string a match contains, and whether ``\\b`` must hold around it."""

    text: str
    edge_before: bool = False
    edge_after: bool = False

    @property
    def whole_word(self) -> bool:
        return self.edge_before and self.edge_after and all(map(is_word, self.text))

    def holds(self, text: str, start: int) -> bool:
        """Whether the ``\\b`` conditions hold for an occurrence at ``start`` of ``text``."""
        if self.edge_before and not edge(text, start):
            return False
        return not self.edge_after or edge(text, start + len(self.text))


# -- reading the parsed regex ---------------------------------------------------------------

_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
_constants: Any = importlib.import_module("re._constants")
_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
_LARGEST_RANGE = 4096  # a class range wider than this is not folded (none in the table is)


#: The one character whose fold is a word character while it is not one (a combining mark,
#: U+0345, folds to ι as re.IGNORECASE has it): \\w and \\b read it differently once folded.
_FOLDS_TO_A_WORD = "\u0345"


def folds_exactly(text: str) -> bool:
    """Whether a folded regex (``folded_regex``) may read ``fold(text)`` in place of the regex
    reading ``text``: unless the text holds a character whose class changes when folded."""
    return text.isascii() or _FOLDS_TO_A_WORD not in text


def folded_regex(source: str, flags: int) -> re.Pattern[str] | None:
    """``source`` (to be run with ``re.IGNORECASE`` in ``flags``) for ``fold(text)``: its
    characters folded and compiled without ``re.IGNORECASE``, so it matches ``fold(text)``
    exactly where ``source`` matches ``text``, index for index, when ``folds_exactly(text)``
    (a case-sensitive engine
    skips the case folding of every character it compares, and can use its literal and
    character-set shortcuts). None when ``source`` has a case-sensitive group
    (``(?-i:[A-Z]...)``), a back-reference, or anything else not folded here."""
    if not flags & re.IGNORECASE:
        return None
    plain = flags & ~re.IGNORECASE
    tree = _parser.parse(source, plain)
    if not _fold_items(tree.data):
        return None
    return compile_skipping(tree, plain)  # re's search skips to where a match can start


def _fold_code(code: int) -> int:
    return ord(fold(chr(code)))


def _fold_items(items: list[Any]) -> bool:
    """Fold the characters of the parsed ``items`` in place (False: not foldable)."""
    c = _constants
    for index, (op, av) in enumerate(items):
        if op is c.LITERAL or op is c.NOT_LITERAL:
            items[index] = (op, _fold_code(av))
        elif op is c.IN:
            members = _fold_set(av)
            if members is None:
                return False
            items[index] = (op, members)
        elif op is c.ANY or op is c.AT:
            continue
        elif op is c.SUBPATTERN:
            if (av[1] | av[2]) & re.IGNORECASE or not _fold_items(av[-1].data):
                return False  # (?-i:...) is case-sensitive; (?i:...) is left alone too
        elif op is c.BRANCH:
            if not all(_fold_items(branch.data) for branch in av[1]):
                return False
        elif op in _REPEATS:
            if not _fold_items(av[2].data):
                return False
        elif op is c.ASSERT or op is c.ASSERT_NOT:
            if not _fold_items(av[1].data):
                return False
        else:
            return False  # a back-reference, a conditional: compared as written
    return True


def _fold_set(members: list[tuple[Any, Any]]) -> list[tuple[Any, Any]] | None:
    """A character class for folded text: a character is in it when its fold is the fold
    of a member (categories such as \\w and \\s are the same for a character and its fold)."""
    c = _constants
    kept: list[tuple[Any, Any]] = []
    codes: set[int] = set()
    for op, av in members:
        if op is c.NEGATE or op is c.CATEGORY:
            kept.append((op, av))
        elif op is c.LITERAL:
            codes.add(_fold_code(av))
        elif op is c.RANGE and av[1] - av[0] <= _LARGEST_RANGE:
            codes.update(map(_fold_code, range(av[0], av[1] + 1)))
        else:
            return None
    return kept + [(c.LITERAL, code) for code in sorted(codes)]


_MAX_STRINGS = 64  # a literal set larger than this is not worth tracking exactly
_EDGE = "\x00"  # stands for \b inside the strings below
_Strings = frozenset[str]


def _cross(left: _Strings, right: _Strings) -> _Strings | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    return frozenset((a + b).replace(_EDGE * 2, _EDGE) for a in left for b in right)


def _minimal(strings: _Strings) -> _Strings:
    """Drop strings that contain another member: finding the shorter one is enough."""
    return frozenset(s for s in strings if not any(o != s and o in s for o in strings))


def _selectivity(strings: _Strings) -> tuple[int, int]:
    return min(len(s.strip(_EDGE)) for s in strings), -len(strings)


# Words so common that a set holding one is a poor filter, whatever its length.
_STOP = frozenset(
    [
        "of",
        "to",
        "in",
        "on",
        "at",
        "is",
        "it",
        "an",
        "as",
        "or",
        "be",
        "by",
        "do",
        "no",
        "so",
        "we",
        "he",
        "me",
        "my",
        "up",
        "if",
        "us",
    ]
)


def _branch_key(strings: _Strings) -> tuple[bool, tuple[int, int], list[str]]:
    """Which of a branch's required sets stands for it: no stop word, then selectivity."""
    common = any(s.strip(_EDGE) in _STOP for s in strings)
    return not common, _selectivity(strings), sorted(strings)


def _item(op: Any, av: Any) -> tuple[_Strings | None, list[_Strings]]:
    """(exact, required) for one parsed node: the finite set of strings it matches (or
    None), and sets of strings such that every match contains one string of each set."""
    name = getattr(op, "name", "")
    if name == "LITERAL":
        return frozenset([fold(chr(av))]), []
    if name == "IN":
        if len(av) <= 8 and all(getattr(o, "name", "") == "LITERAL" for o, _ in av):
            return frozenset(fold(chr(c)) for _, c in av), []
        return None, []
    if name == "AT":  # zero width: the neighbours stay adjacent
        return frozenset([_EDGE if getattr(av, "name", "") == "AT_BOUNDARY" else ""]), []
    if name in ("ASSERT", "ASSERT_NOT"):
        return frozenset([""]), []
    if name == "SUBPATTERN":
        return _sequence(av[-1])
    if name == "BRANCH":
        exact: _Strings | None = frozenset()
        either: _Strings | None = frozenset()
        for branch in av[1]:
            branch_exact, branch_required = _sequence(branch)
            exact = None if exact is None or branch_exact is None else exact | branch_exact
            best = max(branch_required, key=_branch_key, default=None)
            either = None if either is None or best is None else either | best
        if exact is not None and len(exact) > _MAX_STRINGS:
            exact = None
        return exact, [either] if either else []
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, high, body = av
        body_exact, body_required = _sequence(body)
        exact = None
        if body_exact is not None and high <= 1:
            exact = body_exact | frozenset([""]) if low == 0 else body_exact
        if not low:
            return exact, []
        if body_exact is not None:  # "={3,}": at least "===" is there
            least: _Strings | None = body_exact
            for _ in range(min(low, 4) - 1):
                least = None if least is None else _cross(least, body_exact)
            return exact, [least or body_exact]
        return exact, body_required
    return None, []


def _sequence(items: Any) -> tuple[_Strings | None, list[_Strings]]:
    candidates: list[_Strings] = []
    run: _Strings = frozenset([""])
    whole: _Strings | None = frozenset([""])
    for op, av in items:
        exact, needed = _item(op, av)
        if exact is None:
            whole = None
            candidates += [run, *needed]
            run = frozenset([""])
            continue
        whole = None if whole is None else _cross(whole, exact)
        joined = _cross(run, exact)
        if joined is None:
            candidates.append(run)
            joined = exact
        run = joined
    candidates.append(run if whole is None else whole)
    usable = {_minimal(c) for c in candidates if c and all(s.strip(_EDGE) for s in c)}
    # Ties broken by the strings themselves: the same sets every run, whatever the hash seed
    # (and a set holding a stop word last: it is in every other sentence).
    return whole, sorted(usable, key=_branch_key, reverse=True)


def _literal(marked: str) -> Literal:
    text = marked.strip(_EDGE)
    return Literal(text.replace(_EDGE, ""), marked.startswith(_EDGE), marked.endswith(_EDGE))


def required(regex: str, flags: int, *, any_char: bool = False) -> tuple[frozenset[Literal], ...]:
    """Sets of literals such that every match of ``regex`` contains one literal of each
    set, most selective first; at most four sets, and one-character strings only when the
    character is rare in prose (or, ``any_char``, when it is not a letter or digit)."""
    _exact, needed = _sequence(_parser.parse(regex, flags))

    def fits(marked: str) -> bool:
        text = marked.strip(_EDGE)
        return len(text) >= 2 or _rare_char(marked) or (any_char and not text.isalnum())

    usable = [r for r in needed if all(map(fits, r))]
    return tuple(frozenset(map(_literal, r)) for r in usable)[:4]


def _rare_char(marked: str) -> bool:
    """A single character rare in prose (``$``, a backtick, ``|``…): worth finding alone."""
    text = marked.strip(_EDGE)
    return len(text) == 1 and text in _RARE_CHARS


_RARE_CHARS = frozenset("$`|{}<~^@\\─━═║╔╗╚╝")


def _leading(items: Any) -> _Strings:
    """Strings one of which every match of ``items`` starts with ({""} when unknown)."""
    run: _Strings = frozenset([""])
    for op, av in items:
        exact, _needed = _item(op, av)
        if exact is not None:
            joined = _cross(run, exact)
            if joined is None:
                break  # too many strings: the run so far still starts every match
            run = joined
            continue
        name = getattr(op, "name", "")
        inner: _Strings | None = None
        if name == "SUBPATTERN":
            inner = _leading(av[-1])
        elif name == "BRANCH":
            inner = frozenset(s for branch in av[1] for s in _leading(branch))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
            inner = _leading(av[2])
        if inner is not None and (joined := _cross(run, inner)) is not None:
            run = joined
        break
    return run


def leading(regex: str, flags: int) -> frozenset[Literal] | None:
    """Literals one of which every match of ``regex`` starts with, or None when unknown (or
    too short to be worth it): a match can then only start where one of them occurs."""
    run = _leading(_parser.parse(regex, flags))
    if min(len(s.strip(_EDGE)) for s in run) < 2:
        return None
    return frozenset(map(_literal, run))


def width(regex: str, flags: int) -> int:
    """The longest match ``regex`` can have (huge when a repeat is unbounded)."""
    return int(_parser.parse(regex, flags).getwidth()[1])


def split_alternatives(source: str) -> list[str]:
    """``source`` split at its top-level ``|`` (outside groups and character classes)."""
    parts, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class, index = True, index + 1
            index += source.startswith("^", index)
            index += source.startswith("]", index)  # a leading ] is a member, not the end
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(source[start:index])
            start = index + 1
        index += 1
    return [*parts, source[start:]]
