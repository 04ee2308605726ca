"""Search queries: what a person or the model typed, made safe, and which index serves it.

Nothing a person or the model types reaches ``MATCH`` as syntax. ``parse_query`` keeps
balanced ``"phrases"`` and words, drops FTS5 operators and punctuation, quotes every term
(so ``my-app.config.ts`` is a phrase of its tokens, ``NEAR(`` or ``scope:`` are just text)
and caps the length; the MATCH strings are then built by this module alone.

Routing (``route``; ``memory.archive.search.Searcher`` runs the steps):

* text with CJK characters → the trigram index (LIKE, exact) for terms of 3+ characters,
  and a LIKE scan bounded to the most recent visible messages for shorter ones;
* other text → the word index: all terms (AND), then — when that finds fewer than asked —
  any term with light suffix stripping (OR, prefix), then the trigram index (substrings)
  when the words found nothing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "STOP_WORDS",
    "ParsedQuery",
    "Ranked",
    "Step",
    "Substring",
    "fts_all",
    "fts_any",
    "parse_query",
    "route",
    "short_cjk_terms",
    "trigram_terms",
]

MAX_QUERY_CHARS = 400
MAX_TERMS = 12

_STOP_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    did didn't don't i'm i've we're you're it's tell remember said say says told ask asked
    please know think mention mentioned talk talked"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u3130-\u318f\uff66-\uff9f]"
)
_TERM_EDGE = re.compile(r"^[^\w]+|[^\w*]+$")
_INNER_OK = re.compile(r"^[\w][\w.\-_/@:+#']*$")
_SUFFIXES = ("ingly", "ings", "ing", "edly", "ed", "es", "s", "ly")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    phrases: tuple[str, ...]
    terms: tuple[str, ...]  # quoted-safe words, stop words removed (unless nothing else)
    prefixes: tuple[str, ...]  # words the person ended with '*'
    cjk: bool
    note: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.phrases or self.terms or self.prefixes)

    def all_terms(self) -> tuple[str, ...]:
        return self.phrases + self.terms + self.prefixes


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def parse_query(text: str) -> ParsedQuery:
    """Turn anything typed into safe pieces; never raises."""
    notes: list[str] = []
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
        notes.append(f"query cut to {MAX_QUERY_CHARS} characters")
    text = _clean(text)
    parts = text.split('"')
    if len(parts) % 2 == 0:  # an unbalanced quote: the last one is ignored
        last = parts.pop()
        parts[-1] += " " + last
    phrases: list[str] = []
    words: list[str] = []
    for index, part in enumerate(parts):
        if index % 2 == 1:
            phrase = " ".join(part.split())
            if phrase:
                phrases.append(phrase)
        else:
            words.extend(part.split())
    terms: list[str] = []
    prefixes: list[str] = []
    for raw in words:
        if raw in _OPERATORS:
            continue
        if raw.upper().startswith("NEAR("):
            raw = raw[5:]  # noqa: PLW2901 - the operator goes, its argument stays
        word = _TERM_EDGE.sub("", raw.replace("(", " ").replace(")", " ").strip())
        for chunk in word.split():
            prefix = chunk.endswith("*")
            piece = chunk.strip("*^:")
            if piece and not _INNER_OK.match(piece):
                piece = re.sub(r"[^\w.\-_/@:+#']", " ", piece).strip()
            if not piece or not any(c.isalnum() for c in piece):
                continue
            (prefixes if prefix else terms).append(piece)
    meaningful = [t for t in terms if t.lower() not in STOP_WORDS]
    if meaningful or phrases or prefixes:
        terms = meaningful
    if len(phrases) + len(terms) + len(prefixes) > MAX_TERMS:
        notes.append(f"only the first {MAX_TERMS} terms were used")
        keep = MAX_TERMS
        phrases = phrases[:keep]
        terms = terms[: max(0, keep - len(phrases))]
        prefixes = prefixes[: max(0, keep - len(phrases) - len(terms))]
    cjk = bool(_CJK.search(" ".join(phrases + terms + prefixes)))
    return ParsedQuery(
        tuple(dict.fromkeys(phrases)),
        tuple(dict.fromkeys(terms)),
        tuple(dict.fromkeys(prefixes)),
        cjk,
        "; ".join(notes) or None,
    )


def _quote(term: str) -> str:
    return '"' + term.replace('"', " ") + '"'


def _stem(term: str) -> str:
    lower = term.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix) and len(lower) - len(suffix) >= 4:
            return term[: len(term) - len(suffix)]
    return term


def fts_all(query: ParsedQuery) -> str | None:
    pieces = [_quote(t) for t in query.phrases + query.terms] + [
        _quote(p) + "*" for p in query.prefixes
    ]
    return " AND ".join(pieces) or None


def fts_any(query: ParsedQuery) -> str | None:
    """Any term (recall over precision). A plain word of 4+ letters is reduced to a rough
    stem and prefix-matched ("deploying" finds "deployed"); anything else — code-like terms,
    short words — stays exact, because a prefix of a short token ("my-app.config.t*") makes
    FTS5 merge the doclists of every token it starts."""
    pieces = [_quote(p) for p in query.phrases]
    for term in query.terms:
        stem = _stem(term)
        if stem.isalpha() and len(stem) >= 4:
            pieces.append(_quote(stem) + "*")
        else:
            pieces.append(_quote(term))
    pieces += [_quote(p) + "*" for p in query.prefixes]
    return " OR ".join(dict.fromkeys(pieces)) or None


def trigram_terms(query: ParsedQuery) -> list[str]:
    """Terms the trigram index can serve as LIKE patterns (3+ characters, no wildcards)."""
    terms = [t.replace("%", " ").replace("_", " ").strip() for t in query.all_terms()]
    return [t for t in dict.fromkeys(terms) if len(t) >= 3]


def short_cjk_terms(query: ParsedQuery) -> list[str]:
    return [t for t in query.all_terms() if len(t) < 3 and _CJK.search(t)]


@dataclass(frozen=True, slots=True)
class Ranked:
    """Search the word index with ``expr`` (an FTS5 expression built here), bm25-ranked."""

    expr: str


@dataclass(frozen=True, slots=True)
class Substring:
    """Search substrings (LIKE, exact): ``terms`` of 3+ characters through the trigram index,
    ``short`` (CJK shorter than 3) by a bounded scan. A ``fallback`` step runs only when the
    steps before it found nothing."""

    terms: tuple[str, ...]
    short: tuple[str, ...] = ()
    fallback: bool = False


Step = Ranked | Substring


def route(query: ParsedQuery) -> list[Step]:
    """The searches that serve ``query``, in order (the module doc says why)."""
    if query.cjk:
        return [Substring(tuple(trigram_terms(query)), tuple(short_cjk_terms(query)))]
    steps: list[Step] = [Ranked(expr) for expr in (fts_all(query), fts_any(query)) if expr]
    terms = trigram_terms(query)
    if terms:
        steps.append(Substring(tuple(terms), fallback=True))
    return steps
