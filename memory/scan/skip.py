r"""Folded regexes that ``re`` searches by skipping: the first characters a match can have.

``re`` searches fast only when it knows what a match starts with: a literal (``sk-``: it
jumps from one ``s`` to the next) or a set of first characters (``(?:send|mail)``: it passes
every place whose character is neither ``s`` nor ``m`` without trying a match there). It
reads that off the pattern's first item only, so a pattern that starts with ``\b`` or a
look-behind, as nearly every alternative of the table and part of a chain does, gets
neither: each place of the text is a match attempt, about 15 ns each, 1 ms for 64 KiB that a
literal start reads in 0.02 ms.

``compile_skipping`` compiles a parsed regex as ``re`` does, then, when ``re`` found no such
start, puts in the one it would have found without the leading assertions: the literal every
match starts with, else the set of characters one does. It is only a filter: ``re`` still
runs the whole pattern, assertions first, from each place it stops at (the literal is not
skipped over), and a match cannot start anywhere else, so the regex finds exactly what it
found before. Anything it cannot be sure of (a pattern that can match nothing, a class by
category or negated) leaves the regex as ``re`` compiles it.

It writes ``re``'s private bytecode, whose format CPython versions by ``_sre.MAGIC``: under
any other format than the one it was checked against (``CHECKED_MAGIC``, CPython 3.11's) it
compiles as ``re`` does, slower and as exact, rather than guess.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

__all__ = ["compile_skipping", "first_characters"]

_compiler: Any = importlib.import_module("re._compiler")
_c: Any = importlib.import_module("re._constants")
_sre: Any = importlib.import_module("_sre")
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (_c.AT, _c.ASSERT, _c.ASSERT_NOT)
_LARGEST_SET = 1 << 16  # more first characters than this: not worth a filter
CHECKED_MAGIC = 20220615  # the bytecode format the tests check this module against


def _members(items: list[tuple[Any, Any]]) -> set[int] | None:
    """The code points a character class (no categories, not negated) holds."""
    codes: set[int] = set()
    for op, av in items:
        if op is _c.LITERAL:
            codes.add(av)
        elif op is _c.RANGE and av[1] - av[0] < _LARGEST_SET:
            codes.update(range(av[0], av[1] + 1))
        else:
            return None
    return codes


def _first(items: Any) -> tuple[set[int] | None, bool]:
    """The characters a match of the sequence ``items`` can start with (None: not known),
    and whether it can match the empty string. Assertions are passed over: they consume
    nothing, and leaving them out only adds starts."""
    chars: set[int] = set()
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op is _c.LITERAL:
            chars.add(av)
            return chars, False
        if op is _c.IN:
            members = _members(av)
            if members is None:
                return None, False
            return chars | members, False
        if op is _c.SUBPATTERN:
            if (av[1] | av[2]) & re.IGNORECASE:
                return None, False
            inner, empty = _first(av[3].data)
        elif op is _c.BRANCH:
            inner, empty = set(), False
            for branch in av[1]:
                one, one_empty = _first(branch.data)
                if one is None:
                    return None, False
                inner |= one
                empty = empty or one_empty
        elif op in _REPEATS:
            inner, empty = _first(av[2].data)
            empty = empty or av[0] == 0
        else:
            return None, False  # any character, a negated literal, a back-reference
        if inner is None:
            return None, False
        chars |= inner
        if len(chars) > _LARGEST_SET:
            return None, False
        if not empty:
            return chars, False
    return chars, True


def first_characters(tree: Any) -> set[int] | None:
    """The characters every match of the parsed regex ``tree`` starts with one of (None
    when not known, or when it can match the empty string)."""
    chars, empty = _first(tree.data)
    return None if empty else chars


def _prefix(items: Any) -> list[int]:
    """The literal every match of ``items`` starts with (assertions passed over)."""
    prefix: list[int] = []
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op is not _c.LITERAL:
            break
        prefix.append(av)
    return prefix


def _info(low: int, high: int, prefix: list[int], chars: set[int], flags: int) -> list[int]:
    """An optimisation block as ``re._compiler._compile_info`` writes one, its literal not
    skipped over (``prefix_skip`` 0: the whole pattern runs from where the literal is)."""
    code = [_c.INFO, 0]
    if prefix:
        code += [_c.SRE_INFO_PREFIX, low, high, len(prefix), 0, *prefix]
        code += _compiler._generate_overlap_table(prefix)
    else:
        code += [_c.SRE_INFO_CHARSET, low, high]
        charset, _cased = _compiler._optimize_charset([(_c.LITERAL, c) for c in sorted(chars)])
        _compiler._compile_charset(charset, flags, code)
    code[1] = len(code) - 1
    return code


def compile_skipping(tree: Any, flags: int) -> re.Pattern[str]:
    """``re._compiler.compile(tree, flags)``, with the start ``re`` would not find itself
    (see the module). Only for a pattern without ``re.IGNORECASE``."""
    plain: re.Pattern[str]
    if getattr(_sre, "MAGIC", None) != CHECKED_MAGIC:
        plain = _compiler.compile(tree, flags)
        return plain  # another bytecode format: not ours to write
    code = _compiler._code(tree, flags)
    low, high = code[3], code[4]
    chars = first_characters(tree)
    if code[0] != _c.INFO or code[2] or not low or not chars:
        plain = _compiler.compile(tree, flags)
        return plain  # re knows its start, or none can be known
    info = _info(low, high, _prefix(tree.data), chars, flags)
    body = code[1 + code[1] :]
    groupindex = tree.state.groupdict
    indexgroup: list[str | None] = [None] * tree.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    compiled: re.Pattern[str] = _sre.compile(
        None,
        flags | tree.state.flags,
        info + body,
        tree.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
    return compiled
