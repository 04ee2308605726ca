"""Where a decoded reading differs from the reading already searched in full, so that only
the windows around those changes are searched again (``memory.scan.scanner``).

A decoded reading (leetspeak undone, look-alikes folded, broken hyphens joined) is mostly the
text it was made from. A match that reads none of its changes would have been found in that
text already; ``changes_of`` lists the changes, ``near_changes`` turns them into the places a
new match could start for one alternative, and ``within`` narrows the regions the scanner
would have searched to those places. Exact: the stretches between changes are compared
character by character.
"""

from __future__ import annotations

from memory.scan.table import Shape

__all__ = ["Spans", "changes_of", "near_changes", "within"]

Spans = list[tuple[int, int]]


def within(regions: Spans | None, limits: Spans) -> Spans:
    """The parts of ``regions`` (None: everywhere) inside ``limits``; both in order."""
    if regions is None:
        return limits
    out: Spans = []
    i = j = 0
    while i < len(regions) and j < len(limits):
        low, high = max(regions[i][0], limits[j][0]), min(regions[i][1], limits[j][1])
        if low <= high:
            out.append((low, high))
        if regions[i][1] < limits[j][1]:
            i += 1
        else:
            j += 1
    return out


def near_changes(changes: Spans, shape: Shape, size: int) -> Spans:
    """Where a match that reads one of ``changes`` can start: a match reading none of them
    would have been found in the base reading."""
    limits: Spans = []
    for begin, stop in changes:
        low, high = max(0, begin - shape.ahead), min(size, stop + shape.behind)
        if limits and low <= limits[-1][1] + 1:
            limits[-1] = (limits[-1][0], high)
        else:
            limits.append((low, high))
    return limits


_CHANGED_MOST = 4  # a reading with more than 1/4 of it changed is read in full
_BLOCK = 64  # the two readings are compared this many characters at a time
_SYNC = 12  # characters that must agree after a change to take up the comparison again
_SKIP = 4  # a change replaces at most this many characters of the reading ...
_DROP = 16  # ... and this many more of the base (a hyphen, separators of spaced-out letters)


def changes_of(reading: str, base: str) -> Spans | None:
    """Where ``reading`` is not ``base``, as spans of it (a dropped character is an empty
    span): between two spans it is a stretch of ``base``, shifted; its end is a span too.
    None when much of it is changed."""
    changed: Spans = []
    size, base_size = len(reading), len(base)
    i = j = 0
    while i < size:
        block = min(_BLOCK, size - i)
        if reading[i : i + block] == base[j : j + block]:
            i, j = i + block, j + block
            continue
        while i < size and j < base_size and reading[i] == base[j]:
            i, j = i + 1, j + 1
        if i >= size:
            break
        if j >= base_size:
            changed.append((i, size))
            break
        # The comparison goes on where the next few characters are in the base again (any
        # place will do: what counts as the same is compared character by character); else
        # one character is taken as replaced (leetspeak, look-alikes: changes close together).
        ours, again = 1, j + 1
        for skip in range(_SKIP + 1):
            found = base.find(reading[i + skip : i + skip + _SYNC], j, j + skip + _DROP + _SYNC)
            if found >= 0:
                ours, again = skip, found
                break
        if changed and changed[-1][1] + 1 >= i:
            changed[-1] = (changed[-1][0], i + ours)
        else:
            changed.append((i, i + ours))
        i, j = i + ours, again
        if len(changed) * 2 * _BLOCK > size or changed[-1][1] - changed[-1][0] > _BLOCK:
            return None  # changes everywhere, or a long one: not worth it
    changed.append((size, size))  # the end of the reading reads as the end of a text
    if sum(end - start for start, end in changed) * _CHANGED_MOST > size:
        return None
    return changed
