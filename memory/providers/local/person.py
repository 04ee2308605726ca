"""A question about the person, as they would ask it: for the vector side of a search only.

Questions name the person in the third person ("Which foods does Maya need to stay away
from?") while what answers them is the person's own first-person message ("turns out I'm
allergic to sesame"); the sentence model ranks other food talk of the same person above it.
``first_person`` rewrites the person's own names (``Subject.names``) in the question into
the first person before the question is embedded ("Which foods does I need to stay away
from?"): ``Maya`` becomes ``I`` and ``Maya's`` ``my`` (``李娜`` becomes ``我``). The word
search keeps the question as asked. On the recall benchmark's ``tune`` bank this lifted
paraphrase recall@3 of ``session_search`` with the provider fused in from 0.59 to 0.67
(``bench/README.md``); making the verb agree too ("does Maya" -> "do I", "Maya is" -> "I
am", "Maya has" -> "I have") or writing ``me`` after a preposition measured no better, so
the rewrite stays this small.

Names are untrusted text (a display name is whatever the person typed): they are matched as
data, each escaped, whole (not inside a longer word: ``Tom`` is not rewritten in
``Tomorrow``), as written or in capitals (``Maya``, ``MAYA``; not ``maya``: a person called
May or Will would otherwise turn every "may" and "will" into "I"), and never as a pattern.
A name of one character, or more than ``MAX_NAME_CHARS``, is ignored, as are names past the
first ``MAX_NAMES``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["MAX_NAMES", "MAX_NAME_CHARS", "first_person"]

MAX_NAMES = 4
MAX_NAME_CHARS = 64
#: Scripts written without spaces between words: a name there has no word boundary.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_POSSESSIVE = re.compile(r"(?:'|\u2019)s(?!\w)")  # Maya's, Maya’s


def first_person(text: str, names: Sequence[str]) -> str:
    """``text`` with the person's ``names`` (and their possessives) in the first person."""
    pattern = _pattern(tuple(names[:MAX_NAMES]))
    if pattern is None:
        return text
    return pattern.sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    if _UNSPACED.search(match.group("name")):
        return "我"  # 李娜的猫 -> 我的猫: the possessive particle stays as it is
    return "my" if match.group("own") else "I"


@functools.lru_cache(maxsize=512)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for all ``names``, longest first (``Maya Lopez`` before ``Maya``)."""
    kept = {" ".join(name.split()) for name in names}
    alternatives = []
    forms = {form for name in kept for form in (name, name[:1].upper() + name[1:], name.upper())}
    for name in sorted(forms, key=lambda n: (-len(n), n)):
        if not 1 < len(name) <= MAX_NAME_CHARS:
            continue
        body = r"\s+".join(re.escape(word) for word in name.split(" "))
        before = "" if _UNSPACED.match(name[0]) else r"(?<!\w)"
        after = "" if _UNSPACED.match(name[-1]) else r"(?!\w)"
        alternatives.append(before + body + after)
    if not alternatives:
        return None
    return re.compile(rf"(?P<name>{'|'.join(alternatives)})(?P<own>{_POSSESSIVE.pattern})?")
