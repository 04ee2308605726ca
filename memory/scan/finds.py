r"""What a part's regex finds in one text, remembered for every chain that has the part.

Alternatives share parts: the handle of ``message-exfil`` ends three of them, the e-mail
address two of ``exfil-url`` and ``exfil-command``, the verbs of ``secret-disclosure`` two.
A chain (``memory.scan.chain_run``) searches each part in stretches of the text; on a text
dense in partial matches, searching the same part again for each alternative that has it
is most of a scan (10 ms for 64 KiB, each time, for an e-mail address part). ``Finds``
keeps, for one regex and one text, where it has been searched and the matches found there,
and answers a search from that, exactly: ``Finds.search(start, end)`` returns the match
``regex.search(text, start, end)`` would.

A search with an end cut short judges only the starts at least ``reach`` (how far a match,
look-aheads and ``\b`` included, reads past its start) before that end as on the whole
text; those are what is remembered. Past them the answer depends on where the end is cut,
so that short stretch is searched each time. Short searches are not remembered at all:
they cost less than looking up.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

__all__ = ["WORTH", "Finds"]

WORTH = 256  # a search over fewer characters than this is run, not looked up


class Finds:
    """One regex (``search``: its bound search method) over one text (``read``): the
    stretches searched (``spans``: sorted, disjoint, inclusive; every start in one judged as
    on the whole text) and the matches starting in them."""

    __slots__ = ("highs", "keep", "lows", "matches", "reach", "read", "search_text", "starts")

    def __init__(
        self,
        search: Callable[[str, int, int], re.Match[str] | None],
        read: str,
        reach: int,
        *,
        keep: bool = True,
    ) -> None:
        """``keep``: False for a regex searched by one chain only (nothing is remembered:
        each search is run, as it costs less than looking it up)."""
        self.search_text, self.read, self.reach, self.keep = search, read, reach, keep
        self.lows: list[int] = []  # the spans, as two sorted lists
        self.highs: list[int] = []
        self.starts: list[int] = []  # the matches found in the spans, by start
        self.matches: list[re.Match[str]] = []

    def search(self, start: int, end: int) -> re.Match[str] | None:
        """``regex.search(read, start, end)``."""
        size = len(self.read)
        if end - start < WORTH or not self.keep:
            return self.search_text(self.read, start, end)
        sure = size if end >= size else end - self.reach  # starts judged as on the whole text
        if sure < start:
            return self.search_text(self.read, start, end)
        if self._unknown(start, sure):  # nothing known there: the search itself, remembered
            match = self.search_text(self.read, start, end)
            if match is not None and match.start() <= sure:
                self._remember(start, match.start(), match)
            else:
                self._remember(start, sure, None)
            return match
        found = self._leftmost(start, sure, end)
        if found is not None or sure >= min(end, size):
            return found
        return self.search_text(self.read, sure + 1, end)  # the rest: cut where ``end`` is

    def leftmost(self, start: int, sure: int) -> re.Match[str] | None:
        """The leftmost match starting in ``[start, sure]``, as on the whole text."""
        sure = min(sure, len(self.read))
        end = min(len(self.read), sure + self.reach)
        kept = self.keep and end - start >= WORTH
        if not kept or self._unknown(start, sure):
            match = self.search_text(self.read, start, end)
            if match is not None and match.start() <= sure:
                if kept:
                    self._remember(start, match.start(), match)
                return match
            if kept and start <= sure:
                self._remember(start, sure, None)
            return None
        return self._leftmost(start, sure, end)

    def _unknown(self, start: int, sure: int) -> bool:
        """Whether no span meets ``[start, sure]``."""
        if not self.lows or start > self.highs[-1]:
            return True  # past every span (searches go mostly from left to right)
        at = bisect.bisect_right(self.lows, sure) - 1
        return at < 0 or self.highs[at] < start

    def _leftmost(self, start: int, sure: int, end: int) -> re.Match[str] | None:
        """The leftmost match starting in ``[start, sure]`` (judged as on the whole text: a
        search up to ``end`` judges those)."""
        position = start
        while position <= sure:
            at = bisect.bisect_right(self.lows, position) - 1
            if at >= 0 and self.highs[at] >= position:  # known: answer from the span
                high = self.highs[at]
                index = bisect.bisect_left(self.starts, position)
                if index < len(self.starts) and self.starts[index] <= min(high, sure):
                    return self.matches[index]
                position = high + 1
                continue
            # Unknown from ``position`` up to the next span (or ``sure``): search it.
            upto = sure
            if at + 1 < len(self.lows):
                upto = min(upto, self.lows[at + 1] - 1)
            stop = end if upto == sure else min(end, upto + self.reach)
            judged = len(self.read) if stop >= len(self.read) else stop - self.reach
            match = self.search_text(self.read, position, stop)
            top = min(judged, upto)  # what this search judged, short of the next span
            if match is not None and match.start() <= top:
                self._remember(position, match.start(), match)
                return match
            self._remember(position, top, None)
            position = top + 1
        return None

    def _remember(self, low: int, high: int, match: re.Match[str] | None) -> None:
        """``[low, high]`` searched: no match starts in it but ``match``, at ``high``."""
        lows, highs = self.lows, self.highs
        if not lows or low > highs[-1]:  # past every span: the common case, appended
            if match is not None:
                self.starts.append(high)
                self.matches.append(match)
            if lows and low == highs[-1] + 1:
                highs[-1] = high
            else:
                lows.append(low)
                highs.append(high)
            return
        if match is not None:
            index = bisect.bisect_left(self.starts, high)
            self.starts.insert(index, high)
            self.matches.insert(index, match)
        at = bisect.bisect_left(self.lows, low)
        # Merge with a span ending just before, and with those it reaches.
        if at > 0 and self.highs[at - 1] >= low - 1:
            at -= 1
            low = self.lows[at]
        last = at
        while last < len(self.lows) and self.lows[last] <= high + 1:
            high = max(high, self.highs[last])
            last += 1
        self.lows[at:last] = [low]
        self.highs[at:last] = [high]
