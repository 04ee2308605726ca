r"""Gap chains: an alternative with gaps, run as a chain of small regexes, each once.

Many alternatives read ``A[^\n]{0,80}?B[^\n]{0,80}?C``: three phrases in one line. A
backtracking engine tries ``B`` at every place of the first gap after each ``A``, then ``C``
at every place of the second gap after each ``B``: on a text dense in ``A`` and ``B`` words
(and no ``C``), that is gap x gap attempts per ``A``. Split at its top-level gaps, the same
alternative is a chain of parts, ``A``, ``B`` and ``C``, and a match starts at ``s`` exactly
when ``A`` matches at ``s`` and the rest of the chain matches somewhere in the gap after it.
Each part is searched for with its own regex, and "where does the rest of the chain next
match, from here on" is remembered, so every part reads each place of the text about once:
the work grows with the text, not with the product of the gaps.

That reading is exact only where a part can end in one place for a given start (``send``
can; ``chats?`` before ``\b`` can; ``chat|chat\s+logs`` cannot: from one start it ends after
``chat`` or after ``logs``). ``unique_end`` proves it from the parsed regex, or the gap is
not split there. ``split`` only splits at a top-level ``[^\n]{0,N}`` or ``[^\n]{0,N}?``.
Running a chain over a text: ``memory.scan.chain_run``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Any

from memory.scan.prefilter import fold, folded_regex, required, split_alternatives

__all__ = ["Chain", "Part", "context", "part_sources", "split", "unique_end"]

_parser: Any = importlib.import_module("re._parser")
_constants: Any = importlib.import_module("re._constants")

_REPEATS = (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT)
_GAP = re.compile(r"\[\^\\n\]\{0,(\d+)\}(\??)")

# A token of a part's language: a folded character, a run of white space, or \b.
_WS = ("ws",)
_EDGE = ("edge",)
_Token = tuple[str, ...]
_MAX_STRINGS = 4096


def _top_level_gaps(source: str) -> list[tuple[int, int, int]]:
    """(start, end, longest) of each top-level ``[^\n]{0,N}`` / ``[^\n]{0,N}?`` gap."""
    gaps, depth, index, in_class = [], 0, 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            if depth == 0 and (gap := _GAP.match(source, index)) is not None:
                gaps.append((index, gap.end(), int(gap.group(1))))
                index = gap.end()
                continue
            in_class, index = True, index + 1
            index += source.startswith("^", index)
            index += source.startswith("]", index)
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        index += 1
    return gaps


def _language(items: Any) -> list[tuple[_Token, ...]] | None:
    """Every string the parsed sequence ``items`` matches, as token tuples (an
    over-approximation: look-arounds are ignored), or None when not small and finite."""
    strings: list[tuple[_Token, ...]] = [()]
    for op, av in items:
        piece = _node(op, av)
        if piece is None:
            return None
        strings = [a + b for a in strings for b in piece]
        if len(strings) > _MAX_STRINGS:
            return None
    return strings


def _char(code: int) -> tuple[_Token, ...]:
    char = chr(code)
    return (_WS,) if char.isspace() else (("c", fold(char)),)


def _node(op: Any, av: Any) -> list[tuple[_Token, ...]] | None:
    c = _constants
    if op is c.LITERAL:
        return [_char(av)]
    if op is c.IN:
        if av == [(c.CATEGORY, c.CATEGORY_SPACE)]:
            return [(_WS,)]
        if len(av) <= 16 and all(o is c.LITERAL for o, _ in av):
            return [_char(code) for _, code in av]
        return None
    if op is c.AT:
        return [(_EDGE,)] if av is c.AT_BOUNDARY else [()]
    if op in (c.ASSERT, c.ASSERT_NOT):
        return [()]  # only ever rules a string out
    if op is c.SUBPATTERN:
        return _language(av[-1])
    if op is c.BRANCH:
        union: list[tuple[_Token, ...]] = []
        for branch in av[1]:
            strings = _language(branch)
            if strings is None:
                return None
            union += strings
        return union
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        return _repeat(*av)
    return None


def _repeat(low: int, high: int, body: Any) -> list[tuple[_Token, ...]] | None:
    """The strings ``body{low,high}`` matches: a short run of white space is one token;
    anything else repeated more than three times is not a small language."""
    c = _constants
    if body.data == [(c.IN, [(c.CATEGORY, c.CATEGORY_SPACE)])] and high <= 8:
        return [(_WS,)] if low else [(), (_WS,)]
    inner = _language(body)
    if inner is None or high > 3:
        return None
    result: list[tuple[_Token, ...]] = []
    run: list[tuple[_Token, ...]] = [()]
    for count in range(high + 1):
        if count >= low:
            result += run
        run = [a + b for a in run for b in inner]
    return result


def _collapse(tokens: tuple[_Token, ...]) -> tuple[_Token, ...]:
    """Adjacent white-space runs are one run (the text decides where one ends)."""
    out: list[_Token] = []
    for token in tokens:
        if token == _WS and out and out[-1] == _WS:
            continue
        if token == _EDGE and out and out[-1] == _EDGE:
            continue
        out.append(token)
    return tuple(out)


def _word(token: _Token) -> bool:
    return token[0] == "c" and (token[1].isalnum() or token[1] == "_")


def unique_end(source: str, flags: int) -> bool:
    """Whether a match of ``source`` from a given start can end in one place only.

    Proved on the part's language (finite, white-space runs as one token, look-arounds
    ignored, which only adds strings): two strings can both match from one start with
    different ends only if one is a prefix of the other; that is ruled out when the shorter
    ends in a word character and ``\\b``, and the longer goes on with a word character. A
    string may not end in a white-space run (the run's length is not fixed)."""
    strings = _language(_parser.parse(source, flags))
    if strings is None:
        return False
    plain: set[tuple[_Token, ...]] = set()
    unclosed: set[tuple[_Token, ...]] = set()  # some way of matching it has no \b after
    for tokens in map(_collapse, strings):
        bare = tuple(t for t in tokens if t != _EDGE)
        if not bare or bare[-1] == _WS:
            return False
        plain.add(bare)
        if tokens[-1] != _EDGE or not _word(bare[-1]):
            unclosed.add(bare)
    for short in plain:
        for long in plain:
            if len(short) >= len(long) or long[: len(short)] != short:
                continue
            if short not in unclosed and _word(long[len(short)]):
                continue  # \b after the shorter fails where the longer goes on
            return False
    return True


#: The furthest past its end a part may read (``\b``, a short look-ahead) and still have all
#: its ends listed by trying it against the text with exactly that much after the end.
_LOOK_AHEAD = 8


_SCOUT_STRINGS = 16  # a part is scouted for by at most this many strings
_LONG_PART = 100  # a middle part that can match this many characters is split (see Chain)


def _scout(source: str, flags: int) -> tuple[str, ...]:
    """Strings (case-folded) one of which every match of the part contains, to skip to:
    the part's most selective required set, if small; () when it has none worth it."""
    for literals in required(source, flags, any_char=True):
        if len(literals) <= _SCOUT_STRINGS:
            return tuple(sorted({literal.text for literal in literals}))
    return ()


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a chain. ``unique``: from a given start, a match ends in one place.
    Otherwise ``probes[j]`` is the part followed by exactly ``j`` characters of anything:
    ``probes[j].fullmatch(text, start, end + j)`` says whether the part can end at ``end``
    (it may read ``j`` characters past it), so every end can be listed."""

    regex: re.Pattern[str]
    #: What runs: the regex for the folded text (``prefilter.folded_regex``), else ``regex``.
    fast: re.Pattern[str]
    on_folded: bool  # whether ``fast`` reads the folded text
    reach: int  # how far past its start a match, look-aheads and \b included, reads
    least: int  # the shortest match
    most: int  # the longest match
    unique: bool
    probes: tuple[re.Pattern[str], ...]
    scout: tuple[str, ...]  # one of these (folded) is in every match: see _scout


def _look_ahead(items: Any) -> int | None:
    """How far past the place it is checked at an assertion in ``items`` reads (None: too
    far or unbounded)."""
    c = _constants
    furthest = 0
    for op, av in items:
        if op is c.AT:
            furthest = max(furthest, 1)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            if av[0] > 0:
                most = int(av[1].getwidth()[1])
                inner = _look_ahead(av[1])
                if inner is None or most + inner > _LOOK_AHEAD:
                    return None
                furthest = max(furthest, most + inner)
        elif op is c.SUBPATTERN or op is c.BRANCH or op in _REPEATS:
            bodies = [av[-1]] if op is c.SUBPATTERN else av[1] if op is c.BRANCH else [av[2]]
            for body in bodies:
                inner = _look_ahead(body)
                if inner is None:
                    return None
                furthest = max(furthest, inner)
    return furthest


def _part(source: str, flags: int, *, last: bool) -> Part | None:
    tree = _parser.parse(source, flags)
    least, most = tree.getwidth()
    regex = re.compile(source, flags)
    fast = folded_regex(source, flags)
    on_folded = fast is not None
    reach = _reach(source, flags)
    scout = _scout(source, flags)
    if last or unique_end(source, flags):
        return Part(regex, fast or regex, on_folded, reach, least, most, True, (), scout)
    ahead = _look_ahead(tree)
    if ahead is None or most > 1000:
        return None
    probes = tuple(re.compile(f"(?:{source})(?s:.){{{j}}}", flags) for j in range(ahead + 1))
    return Part(regex, fast or regex, on_folded, reach, least, most, False, probes, scout)


@dataclass(frozen=True, slots=True)
class Chain:
    """An alternative as ``parts[0] gap parts[1] gap ...``, each gap ``[^\\n]{0,gaps[i]}``."""

    parts: tuple[Part, ...]
    gaps: tuple[int, ...]
    sources: tuple[str, ...] = field(compare=False)
    #: For the last part, when it is one group of alternatives, each on its own (its scout is
    #: sharper, and one regex tries fewer branches at each place; the leftmost place the
    #: group matches is the leftmost of any of its alternatives); else (). For a long middle
    #: part too: there each alternative is searched for near its own scout strings, and the
    #: leftmost match of any is the part's (the rest of the chain is asked about it once).
    branches: tuple[tuple[Part, ...], ...] = ()


def _reach(source: str, flags: int) -> int:
    """The furthest a part's match reads past its start, look-aheads and \\b included."""

    def walk(items: Any) -> int:
        total = 0
        for op, av in items:
            if op in (_constants.ASSERT, _constants.ASSERT_NOT):
                if av[0] > 0:
                    total += walk(av[1])
            elif op is _constants.SUBPATTERN:
                total += walk(av[-1])
            elif op is _constants.BRANCH:
                total += max(walk(b) for b in av[1])
            elif op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT, _constants.POSSESSIVE_REPEAT):
                total += av[1] * walk(av[2])
            else:
                total += 1
        return total

    return walk(_parser.parse(source, flags)) + 1


def context(source: str, flags: int) -> tuple[int, int]:
    """How far before its start and how far past its start a match of ``source`` reads
    (look-behinds, ``\\b`` and ``^`` before; the match, look-aheads and ``\\b`` after): what
    decides whether it matches at a place lies in that stretch of the text."""

    def behind(items: Any) -> int:
        furthest = 1  # \b, ^ and a look-behind of one character read the one before
        for op, av in items:
            if op in (_constants.ASSERT, _constants.ASSERT_NOT):
                own = int(av[1].getwidth()[1]) if av[0] < 0 else 0
                furthest = max(furthest, own + behind(av[1]))
            elif op is _constants.SUBPATTERN:
                furthest = max(furthest, behind(av[-1]))
            elif op is _constants.BRANCH:
                furthest = max(furthest, *(behind(b) for b in av[1]))
            elif op in _REPEATS:
                furthest = max(furthest, behind(av[2]))
        return furthest

    return behind(_parser.parse(source, flags)), _reach(source, flags)


def split(source: str, flags: int) -> Chain | None:
    """``source`` as a chain, split at each top-level gap after a part whose ends can be
    known; None when no gap can be split (or ``source`` refers back to a group)."""
    if _has_backreference(source, flags):
        return None
    parts: list[Part] = []
    sources: list[str] = []
    lengths: list[int] = []
    start = 0
    for begin, end, longest in _top_level_gaps(source):
        head = source[start:begin]
        if not head:
            continue
        part = _part(head, flags, last=False)
        if part is None:
            continue  # keep the gap inside the part: the regex handles it
        parts.append(part)
        sources.append(head)
        lengths.append(longest)
        start = end
    tail = source[start:]
    if not parts or not tail:
        return None
    last = _part(tail, flags, last=True)
    if last is None or any(p.most > 100_000 for p in parts) or last.most > 100_000:
        return None
    sources.append(tail)
    # A middle part is split only when long (an address, a handle: a run of a class, each
    # start costs its width): a word alternation is cheaper searched as one regex.
    middle = [
        _branches(source, flags, last=False) if part.most >= _LONG_PART else ()
        for source, part in zip(sources[:-1], parts, strict=True)
    ]
    branches = (*middle, _branches(tail, flags, last=True))
    return Chain((*parts, last), tuple(lengths), tuple(sources), branches)


def _closes_at(source: str, opening: int) -> int:
    """Where the group opened at ``opening`` closes (-1: never)."""
    depth, index, in_class = 0, opening, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class, index = True, index + 1
            index += source.startswith("^", index)
            index += source.startswith("]", index)
            continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def _branches(source: str, flags: int, *, last: bool) -> tuple[Part, ...]:
    """``source`` as its alternatives, when it is one group of them (else ())."""
    if not (source.startswith("(?:") and source.endswith(")")):
        return ()
    if _closes_at(source, 0) != len(source) - 1:
        return ()  # "(?:a|b)c(?:d)" is not one group
    inner = split_alternatives(source[3:-1])
    if len(inner) < 2 or f"(?:{'|'.join(inner)})" != source:
        return ()
    pieces = [_part(f"(?:{branch})", flags, last=last) for branch in inner]
    branches = tuple(piece for piece in pieces if piece is not None)
    return branches if len(branches) == len(inner) else ()


def part_sources(source: str) -> set[str]:
    """What ``split`` may make parts of ``source``, as written (a guess, from the text alone:
    the stretches between its top-level gaps, and the alternatives of those that are one
    group), for finding the parts that alternatives share."""
    pieces, start = [], 0
    for begin, end, _longest in _top_level_gaps(source):
        pieces.append(source[start:begin])
        start = end
    pieces.append(source[start:])
    found = {piece for piece in pieces if piece}
    for piece in list(found):
        if piece.startswith("(?:") and _closes_at(piece, 0) == len(piece) - 1:
            found.update(f"(?:{branch})" for branch in split_alternatives(piece[3:-1]))
    return found


def _has_backreference(source: str, flags: int) -> bool:
    c = _constants

    def walk(items: Any) -> bool:
        for op, av in items:
            if op in (c.GROUPREF, c.GROUPREF_EXISTS, c.GROUPREF_IGNORE, c.GROUPREF_UNI_IGNORE):
                return True
            if op is c.SUBPATTERN and walk(av[-1]):
                return True
            if op is c.BRANCH and any(walk(b) for b in av[1]):
                return True
            if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and walk(av[2]):
                return True
            if op in (c.ASSERT, c.ASSERT_NOT) and walk(av[1]):
                return True
        return False

    return walk(_parser.parse(source, flags))
