"""Running a gap chain (``memory.scan.chain``) over one text: the leftmost place the whole
chain matches in a stretch, each part's regex reading each place of the text about once.

``Run(chain, text, spend).first(start, limit)`` answers what ``regex.search`` would, from
``start`` up to ``limit``. Each part is a ``_Level`` that remembers where the rest of the
chain matches from it on (so questions from left to right read nothing twice); a last part
that is one group of alternatives is a ``_Union`` of them, and a long middle part searched
alternative by alternative is a ``_Branch``. ``spend`` is told the regex work done, in
characters read (the scanner's budget).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.scan.chain import Chain, Part
from memory.scan.finds import WORTH, Finds
from memory.scan.prefilter import fold, folds_exactly

__all__ = ["Run", "places_of"]


class Run:
    """One chain over one text: ``first(start, limit)`` is the leftmost place in
    ``[start, limit]`` where the whole chain matches (what ``regex.search`` would find), or
    None. ``spend`` is told the regex work done, in characters read."""

    def __init__(
        self,
        chain: Chain,
        text: str,
        spend: Callable[[int], None],
        folded: str | None = None,
        *,
        shared: dict[tuple[str, bool], Finds] | None = None,
        worth: frozenset[str] | None = None,
        occurrences: Callable[[str], list[int]] | None = None,
    ) -> None:
        """``shared``: what the parts' regexes found in ``text`` (``memory.scan.finds``),
        for every chain run over it; kept for the parts whose sources are in ``worth`` (by
        default, every part). ``occurrences``: every place of a string in the folded text
        (by default found here)."""
        folded = fold(text) if folded is None else folded
        # Parts with a folded form may read the folded text (``prefilter.folds_exactly``).
        exact = folds_exactly(text)
        shared = {} if shared is None else shared
        context = _Context(
            text, folded, exact, spend, shared, worth, occurrences or places_of(folded)
        )
        following: _Level | _Union | None = None
        for index in range(len(chain.parts) - 1, -1, -1):
            gap = chain.gaps[index] if index < len(chain.gaps) else 0
            branches = chain.branches[index] if chain.branches else ()
            part = chain.parts[index]
            if branches and all(branch.scout for branch in branches):
                # One level, its part searched for alternative by alternative (see Chain).
                following = _Level(part, gap, following, context, branches=branches)
            elif branches and index == len(chain.parts) - 1:
                following = _Union([_Level(p, gap, None, context) for p in branches])
            else:
                following = _Level(part, gap, following, context)
        assert following is not None
        self.head = following

    def first(self, start: int, limit: int) -> int | None:
        return self.head.first(start, limit)


# A part whose match reads this far (an address, a handle: a run of a class before a
# literal) costs much more to search than to look up; a shorter one is searched each time.
_FAR = 100


def places_of(folded: str) -> Callable[[str], list[int]]:
    """Every place of a string in ``folded`` (remembered, by string)."""
    known: dict[str, list[int]] = {}

    def places(string: str) -> list[int]:
        if (found := known.get(string)) is None:
            found = known[string] = []
            at = folded.find(string)
            while at >= 0:
                found.append(at)
                at = folded.find(string, at + 1)
        return found

    return places


@dataclass(slots=True)
class _Context:
    """The text a chain runs over, and what is kept for all chains run over it."""

    text: str
    folded: str
    exact: bool  # whether a part with a folded form reads ``folded``
    spend: Callable[[int], None]
    shared: dict[tuple[str, bool], Finds]
    worth: frozenset[str] | None  # the parts whose finds are kept (None: all)
    occurrences: Callable[[str], list[int]]  # every place of a string in ``folded``

    def scouts(self, part: Part) -> _Scouts:
        """Where ``part``'s scout strings occur."""
        return _Scouts([self.occurrences(string) for string in part.scout], len(self.folded))

    def finds(self, part: Part) -> Finds:
        """What ``part``'s regex finds in the text: kept for every chain run over it when the
        part is worth it, else for this one."""
        fast = part.on_folded and self.exact
        search = part.fast.search if fast else part.regex.search
        read = self.folded if fast else self.text
        if self.worth is not None and (part.reach < _FAR or part.regex.pattern not in self.worth):
            return Finds(search, read, part.reach, keep=False)
        key = (part.regex.pattern, fast)
        if (found := self.shared.get(key)) is None:
            found = self.shared[key] = Finds(search, read, part.reach)
        return found


class _Union:
    """The last part as its alternatives: the leftmost place any of them matches."""

    __slots__ = ("levels", "pruned")

    def __init__(self, levels: list[_Level]) -> None:
        self.levels = levels
        self.pruned = False

    def first(self, start: int, limit: int) -> int | None:
        if not self.pruned:  # when first asked: those none of whose scouts occur match nowhere
            self.levels = [level for level in self.levels if not level.scouts.absent()]
            self.pruned = True
        best: int | None = None
        for level in self.levels:
            place = level.first(start, limit if best is None else best - 1)
            if place is not None:
                best = place
        return best


class _Scouts:
    """Where a part's scout strings next occur in a folded text: every place of each (the
    reading's lists, shared by all chains: ``_Context.occurrences``), and the last answer."""

    __slots__ = ("lists", "size", "span")

    def __init__(self, lists: list[list[int]], size: int) -> None:
        self.lists, self.size = lists, size
        self.span = (0, -1)  # the last answer: no scout string in [after, first)

    def __bool__(self) -> bool:
        return bool(self.lists)

    def absent(self) -> bool:
        """Whether there are scout strings and none occurs in the text (then the part,
        every match of which holds one, matches nowhere)."""
        return bool(self.lists) and not any(self.lists)

    def first(self, position: int) -> int:
        """The first place at or after ``position`` where a scout string occurs (the text's
        length when none does)."""
        after, first = self.span
        if after <= position <= first:
            return first
        first = self.size
        for places in self.lists:
            at = bisect.bisect_left(places, position)
            if at < len(places) and places[at] < first:
                first = places[at]
        self.span = (position, first)
        return first


class _Branch:
    """One alternative of a long middle part: its regex, and where its scout strings are."""

    __slots__ = ("clean", "finds", "most", "next", "reach", "read", "scouts", "search")

    def __init__(self, part: Part, context: _Context) -> None:
        self.finds = context.finds(part)
        # Searched here when what it finds is not kept for other chains.
        self.search = None if self.finds.keep else self.finds.search_text
        self.read = self.finds.read
        self.most, self.reach = part.most, part.reach
        self.scouts = context.scouts(part)
        # What was found last: no match starts in [clean[0], clean[1]), and ``next`` is the
        # match starting at clean[1] (None: not known).
        self.clean = (0, -1)
        self.next: re.Match[str] | None = None

    def first(self, low: int, high: int, read_to: int) -> re.Match[str] | None:
        """The leftmost match starting in ``[low, high]``, or None; ``read_to`` is at least
        the part's reach past ``high`` (so such a match is whole)."""
        after, upto = self.clean
        if after <= low <= upto:
            if upto > high:
                return None
            if self.next is not None:
                return self.next
            low = upto
        else:
            after = low
        # A search tries every start up to ``read_to``; those a reach before it are judged
        # as on the whole text, so what it finds about them is kept (read once, not again).
        sure = max(high, read_to - self.reach)
        if self.search is None:
            found = self.finds.leftmost(low, sure)
        elif (found := self.search(self.read, low, read_to)) is not None and found.start() > sure:
            found = None
        if found is not None:
            self.clean, self.next = (after, found.start()), found
            return found if found.start() <= high else None
        self.clean, self.next = (after, sure + 1), None
        return None


class _Level:
    """Where the chain from one part on matches. Every such place found so far is kept, for
    one stretch of text read in full (``[low, high)``), so a question about a place in that
    stretch reads nothing again; questions come mostly from left to right."""

    __slots__ = (
        "branches",
        "finds",
        "following",
        "gap",
        "high",
        "low",
        "part",
        "places",
        "pruned",
        "read",
        "scouts",
        "search",
        "spend",
        "text",
    )

    def __init__(
        self,
        part: Part,
        gap: int,
        following: _Level | _Union | None,
        context: _Context,
        branches: tuple[Part, ...] = (),
    ) -> None:
        self.part, self.gap, self.following = part, gap, following
        self.text, self.spend = context.text, context.spend
        # The part's regex, what it found so far (the folded text, when it has a folded form).
        self.finds = context.finds(part)
        self.search, self.read = self.finds.search_text, self.finds.read
        # The part's alternatives, each searched for near its own scout strings (see Chain);
        # those none of whose scout strings is in the text match nowhere, and are left out
        # (which changes no answer, nor the work charged: a part's alternatives charge none).
        self.branches = [_Branch(branch, context) for branch in branches if branch.scout]
        if len(self.branches) < len(branches):
            self.branches = []  # one has no scout: the part is searched as one regex
        self.low = self.high = 0
        self.places: list[int] = []
        self.scouts = context.scouts(part)
        self.pruned = False  # see _leftmost

    def first(self, start: int, limit: int) -> int | None:
        """The leftmost place in ``[start, limit]`` where the chain from here matches."""
        if start > self.high or self.low == self.high:
            self.low = self.high = start
            self.places = []
        elif start < self.low:
            earlier: list[int] = []
            position = start
            while position < self.low:
                place, position = self._next(position, self.low - 1, ahead=False)
                if place is None:
                    break
                earlier.append(place)
                position = place + 1
            self.places[:0] = earlier
            self.low = start
        places = self.places
        at = bisect.bisect_left(places, start)
        if at == len(places):
            if self.high > limit:
                return None
            place, self.high = self._next(self.high, limit, ahead=True)
            if place is None:
                return None
            places.append(place)
        return places[at] if places[at] <= limit else None

    def _next(self, position: int, limit: int, *, ahead: bool) -> tuple[int | None, int]:
        """Read on from ``position``: the first place up to ``limit`` (or, ``ahead``, a bit
        further: a search tries every start up to where it is cut off, so as not to waste
        that) where the chain from here matches, and how far the text has been read: up to
        that place, or past ``limit`` without one."""
        part, text = self.part, self.text
        size = len(text)
        if ahead:
            limit = max(limit, position + 4 * part.reach)
        limit = min(limit, size)
        while position <= limit:
            last = limit
            if self.following is not None:  # leapfrog: the rest first (it may be rarer)
                place = self.following.first(position + part.least, limit + part.most + self.gap)
                if place is None:
                    break
                position = max(position, place - self.gap - part.most)
                if position > limit:
                    break
            if self.scouts:  # a match holds a scout string: none, no match; far, skip
                scout = self.scouts.first(position)
                if scout - part.most > limit:
                    break
                position = max(position, scout - part.most)
                last = min(limit, max(scout, position) + 4 * part.reach)
            read_to = min(size, last + part.reach)
            if self.branches:
                match = self._leftmost(position, last, read_to)
            else:
                match = (
                    self.search(self.read, position, read_to)
                    if read_to - position < WORTH
                    else self.finds.search(position, read_to)
                )
            self.spend((read_to if match is None else match.start()) - position + part.reach)
            if match is None or match.start() > last:
                position = last + 1
                continue
            begin = match.start()
            if self.following is None:
                return begin, begin + 1
            # Leapfrog: where is the first place the rest of the chain could be reached at?
            # A start before ``nearest`` ends too early to reach it; none, and no start can.
            place = self.following.first(begin + part.least, limit + part.most + self.gap)
            if place is None:
                break
            if (nearest := place - self.gap - part.most) > begin:
                position = nearest
                continue
            if self._goes_on(begin, match.end()):
                return begin, begin + 1
            position = begin + 1
        return None, limit + 1

    def _leftmost(self, position: int, last: int, read_to: int) -> re.Match[str] | None:
        """What ``search(read, position, read_to)`` finds with a start up to ``last`` (or a
        match starting past ``last``, or None): the leftmost match of any alternative."""
        if not self.pruned:  # when first asked: those none of whose scouts occur match nowhere
            live = [branch for branch in self.branches if not branch.scouts.absent()]
            self.branches = live or self.branches[:1]  # (one is kept: it answers None)
            self.pruned = True
        best: re.Match[str] | None = None
        for branch in self.branches:
            low = max(position, branch.scouts.first(position) - branch.most)
            high = last if best is None else best.start() - 1
            if low <= high and (found := branch.first(low, high, read_to)) is not None:
                best = found
        return best

    def _reaches(self, end: int) -> bool:
        """Whether the rest of the chain matches within the gap after ``end``."""
        assert self.following is not None
        place = self.following.first(end, end + self.gap)
        return place is not None and self.text.find("\n", end, place) < 0

    def _goes_on(self, begin: int, end: int) -> bool:
        part, text = self.part, self.text
        assert self.following is not None
        if part.unique:
            return self._reaches(end)
        # Another end might reach further; none helps unless the rest starts within the
        # gap of the longest. Asked first, this keeps the questions in order.
        nearest = self.following.first(begin + part.least, begin + part.most + self.gap)
        if nearest is None:
            return False
        if self._reaches(end):
            return True
        size = len(text)
        # An end more than a gap before the nearest place of the rest reaches nothing.
        for other in range(
            max(begin + part.least, nearest - self.gap), min(begin + part.most, size) + 1
        ):
            if other == end:
                continue
            after = min(len(part.probes) - 1, size - other)
            self.spend(part.reach)
            if part.probes[after].fullmatch(text, begin, other + after) is None:
                continue
            if self._reaches(other):
                return True
        return False
