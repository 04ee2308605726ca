"""Search queries: what a person or the model typed, made safe, and which index serves it.

Nothing a person or the model types reaches ``MATCH`` as syntax. ``parse_query`` keeps
balanced ``"phrases"`` and words, drops FTS5 operators and punctuation, quotes every term
(so ``my-app.config.ts`` is a phrase of its tokens, ``NEAR(`` or ``scope:`` are just text)
and caps the length; the MATCH strings are then built by this module alone.

Routing (``route``; ``memory.archive.search.Searcher`` runs the steps):

* text with CJK characters → the trigram index (LIKE, exact) for terms of 3+ characters,
  the CJK gram index (``memory.archive.cjk``) when all terms are shorter, and a LIKE scan
  bounded to the most recent visible messages for short terms it cannot serve; a question
  written without spaces is then also searched by its content pieces (``cjk_pieces``): all
  of them, then each on its own; and last, while too few sessions were found, by its
  content grams (``cjk_grams``: characters and pairs, any of them, ranked by how many a
  message holds), since a content word is often one character (买, 车) that no piece of
  two or more reaches;
* other text → the word index: all terms (AND), then — when that finds fewer than asked —
  any term (OR, ``fts_any``), then the trigram index (substrings) when the words found
  nothing.

Natural-language questions: the word index stems English words (porter, migration m006), so
terms are searched as typed; stop words and question words ("which", "kind", "nowadays")
are dropped, a possessive is its name ("Tom's" → "Tom"). In the OR step, which bm25 ranks,
names and numbers (``ParsedQuery.keys``) count twice, and a long plain word adds a prefix of
its root for the forms porter does not join ("allergy" → ``allerg*`` finds "allergic"; never
for short words: "show*" finds "shower"). bm25 already ranks a message with more of the
terms first; a NEAR boost of neighbouring terms was measured and changed nothing (bench/).
A month the question names ("in December 2024") is ``ParsedQuery.period``, for the search
to restrict or boost by the messages' time; the words stay terms.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime

from memory.archive.cjk import CJK_CLASS, grams

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "QUESTION_WORDS",
    "STOP_WORDS",
    "Grams",
    "ParsedQuery",
    "Ranked",
    "Step",
    "Substring",
    "cjk_grams",
    "cjk_pieces",
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
# Words that shape a natural-language question but name nothing the answer says: dropped
# like stop words (kept apart from STOP_WORDS, which the archive benchmark's vocabulary uses).
_QUESTION_TEXT = """whose which what's where's who's how's when's kind type sort
    name named nowadays currently lately recently these days ever still also anything
    something thing things get got getting happen happened actually really"""
QUESTION_WORDS = frozenset(_QUESTION_TEXT.split())
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_CJK = re.compile(CJK_CLASS)
_TERM_EDGE = re.compile(r"^[^\w]+|[^\w*]+$")
_INNER_OK = re.compile(r"^[\w][\w.\-_/@:+#']*$")
_POSSESSIVE = re.compile(r"(?<=\w)'s?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    phrases: tuple[str, ...]
    terms: tuple[str, ...]  # quoted-safe words, stop words removed (unless nothing else)
    prefixes: tuple[str, ...]  # words the person ended with '*'
    cjk: bool
    note: str | None = None
    keys: tuple[str, ...] = ()  # terms that are names or numbers: weighted in fts_any
    period: tuple[float, float] | None = None  # a month the question names: [start, end)

    @property
    def empty(self) -> bool:
        return not (self.phrases or self.terms or self.prefixes)

    def all_terms(self) -> tuple[str, ...]:
        return self.phrases + self.terms + self.prefixes


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
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
    keys: list[str] = []
    for position, raw in enumerate(words):
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
            piece = _POSSESSIVE.sub("", piece)
            if not piece or not any(c.isalnum() for c in piece):
                continue
            (prefixes if prefix else terms).append(piece)
            if not prefix and _is_key(piece, first=position == 0):
                keys.append(piece)
    meaningful = [t for t in terms if t.lower() not in STOP_WORDS | QUESTION_WORDS]
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
        tuple(k for k in dict.fromkeys(keys) if k in terms),
        question_period(text),
    )


_MONTHS = (
    *("january", "february", "march", "april", "may", "june"),
    *("july", "august", "september", "october", "november", "december"),
)
_MONTH_YEAR = re.compile(
    r"\b(" + "|".join(m[:3] + "(?:" + m[3:] + ")?" for m in _MONTHS) + r")\.?,?\s+((?:19|20)\d\d)\b"
    r"|\b((?:19|20)\d\d)-(0[1-9]|1[0-2])\b"
    r"|\b((?:19|20)\d\d)年(1[0-2]|0?[1-9])月",
    re.IGNORECASE,
)


def question_period(text: str) -> tuple[float, float] | None:
    """The month a question names ("in December 2024", "2024-12", "2024年12月") as UTC
    timestamps [start, end), for a search to restrict or boost by ``created_at``; None when
    it names none (or several)."""
    found = {_month_of(m) for m in _MONTH_YEAR.finditer(text)}
    if len(found) != 1:
        return None
    year, month = found.pop()
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return start.timestamp(), end.timestamp()


def _month_of(match: re.Match[str]) -> tuple[int, int]:
    name, year, iso_year, iso_month, cjk_year, cjk_month = match.groups()
    if name is not None:
        return int(year), [m[:3] for m in _MONTHS].index(name[:3].lower()) + 1
    if iso_year is not None:
        return int(iso_year), int(iso_month)
    return int(cjk_year), int(cjk_month)


def _is_key(term: str, *, first: bool) -> bool:
    """A name (capitalised, not only because it starts the question) or a number."""
    if any(c.isdigit() for c in term):
        return True
    return not first and term[:1].isupper() and term.lower() not in STOP_WORDS


def _quote(term: str) -> str:
    return '"' + term.replace('"', " ") + '"'


_SUFFIXES = ("ingly", "ings", "ing", "edly", "ed", "es", "s", "ly")


def _root(term: str) -> str | None:
    """What a long word's forms begin with, where porter's stems differ ("allergy",
    "allergic": "allerg"; "injury", "injured": "injur"); None for short words, names, numbers
    and code, which a prefix would make noisy ("show*" finds "shower")."""
    if not (term.isalpha() and term.islower() and len(term) >= 6):
        return None
    root = term
    for suffix in _SUFFIXES:
        if root.endswith(suffix):
            root = root[: -len(suffix)]
            break
    root = root.rstrip("aeiouy")
    return root if len(root) >= 5 else None


def fts_all(query: ParsedQuery) -> str | None:
    pieces = [_quote(t) for t in query.phrases + query.terms] + [
        _quote(p) + "*" for p in query.prefixes
    ]
    return " AND ".join(pieces) or None


def fts_any(query: ParsedQuery) -> str | None:
    """Any term (recall over precision), for bm25 to rank: a message with more of the terms,
    rarer ones, scores higher. The index stems English words (porter), so "deploying" finds
    "deployed" without a prefix; a name or a number (``keys``) counts twice."""
    pieces = [_quote(p) for p in query.phrases]
    for term in query.terms:
        pieces += [_quote(term)] * (2 if term in query.keys else 1)
        root = _root(term)
        if root is not None:
            pieces.append(_quote(root) + "*")
    pieces += [_quote(p) + "*" for p in query.prefixes]
    return " OR ".join(pieces) or None


def trigram_terms(query: ParsedQuery) -> list[str]:
    """Terms the trigram index can serve as LIKE patterns (3+ characters, no wildcards)."""
    terms = [t.replace("%", " ").replace("_", " ").strip() for t in query.all_terms()]
    return [t for t in dict.fromkeys(terms) if len(t) >= 3]


def short_cjk_terms(query: ParsedQuery) -> list[str]:
    terms = [t.replace("%", " ").replace("_", " ").strip() for t in query.all_terms()]
    return [t for t in dict.fromkeys(terms) if len(t) < 3 and _CJK.search(t)]


@dataclass(frozen=True, slots=True)
class Ranked:
    """Search the word index with ``expr`` (an FTS5 expression built here), bm25-ranked;
    ``period``: only messages written in that span of time, [start, end); ``loose``: any
    of the terms (a weaker match than all of them, which a fused ranking weighs less)."""

    expr: str
    period: tuple[float, float] | None = None
    loose: bool = False

    @property
    def every(self) -> bool:
        """Whether every term must match (``fts_all``): ``route`` builds a loose step and a
        step of a period from ``fts_any``; a backend that builds its own expression from the
        ``ParsedQuery`` (``memory.archive.postgres``) reads this instead of ``expr``."""
        return not self.loose and self.period is None


@dataclass(frozen=True, slots=True)
class Substring:
    """Search substrings (LIKE, exact): ``terms`` of 3+ characters through the trigram index,
    ``short`` (CJK shorter than 3) by a bounded scan. A ``fallback`` step runs only when the
    steps before it found nothing."""

    terms: tuple[str, ...]
    short: tuple[str, ...] = ()
    fallback: bool = False


@dataclass(frozen=True, slots=True)
class Grams:
    """Any of ``grams`` (CJK characters and pairs the gram index holds), ranked by how many
    of them a message holds (a pair counts twice), the newer first: a CJK question's last,
    loosest step (``cjk_grams``)."""

    grams: tuple[str, ...]


Step = Ranked | Substring | Grams


# Chinese and Japanese are written without spaces, so a question is one "term" that no
# message contains. It is cut where a question word, a particle or a pronoun stands (common
# Chinese ones; runs of hiragana, which in Japanese are mostly particles and endings) and
# the content pieces of 2+ characters are searched: all of them, then each on its own. Most
# Chinese words are two characters, so a piece of 3+ Han characters also gives its first
# and last two.
_CJK_FUNCTION = """什么时候 为什么 怎么样 什么 哪里 哪儿 哪个 哪些 哪家 哪种 哪款 怎么 怎样 多少
    现在 如今 以前 之前 以后 之后 时候 是不是 有没有 一起 自己 我们 你们 他们 她们 哪 谁
    几 是 的 了 在 吗 呢 吧 啊 我 你 他 她 它 和 对 把 被 给 从 到 也 都 就 还 很 这 那 做 当"""
_KANA = re.compile("[\u3040-\u30ff]")
_JA_CUT = re.compile("[\u3040-\u309f]+|[^\\w\u30fc]+")  # Japanese: at hiragana and punctuation
_ZH_CUT = re.compile(  # Chinese: at its function words too
    "|".join(sorted(_CJK_FUNCTION.split(), key=len, reverse=True)) + "|[^\\w]+"
)
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
MAX_CJK_PIECES = 5


def _cut(term: str) -> list[str]:
    """A CJK term cut at its particles and function words (``_JA_CUT``, ``_ZH_CUT``)."""
    return (_JA_CUT if _KANA.search(term) else _ZH_CUT).split(term)


def cjk_pieces(query: ParsedQuery) -> list[str]:
    """The content pieces of the CJK terms (``_JA_CUT``, ``_ZH_CUT``), longest first, at most
    ``MAX_CJK_PIECES``; the other terms as ``trigram_terms`` gives them."""
    pieces: list[str] = []
    for term in trigram_terms(query) + short_cjk_terms(query):  # no LIKE wildcards
        if not _CJK.search(term):
            pieces.append(term)
            continue
        cut = _cut(term)
        for piece in cut:
            if len(piece) >= 2:
                pieces.append(piece)
            if len(cut) > 1 and len(piece) >= 3 and _HAN.fullmatch(piece):
                pieces += [piece[:2], piece[-2:]]  # a question's piece, not a word typed alone
    unique = list(dict.fromkeys(pieces))
    return sorted(unique, key=len, reverse=True)[:MAX_CJK_PIECES]


MAX_GRAMS = 12
# What makes a CJK term a question (what, why, how, which, who, how many, the question
# particles; Japanese what, who, where, when, how, which).
_CJK_ASKS = re.compile("什么|怎么|怎样|哪|谁|几|多少|吗|呢|何|誰|どこ|いつ|どう|どれ|どの")


def cjk_grams(query: ParsedQuery) -> list[str]:
    """The grams (``memory.archive.cjk.grams``) of a CJK question's content: the terms with
    a question word (``_CJK_ASKS``; words typed to be found are searched exactly, never
    loosened), cut as ``cjk_pieces`` cuts them, single characters kept; pairs first, then
    characters, at most ``MAX_GRAMS``."""
    pairs: list[str] = []
    chars: list[str] = []
    for term in trigram_terms(query) + short_cjk_terms(query):
        if not _CJK_ASKS.search(term):
            continue  # not a question: words typed to be found as they are (京都会)
        for piece in _cut(term):
            for gram in (grams(piece) or "").split():
                (pairs if len(gram) == 2 else chars).append(gram)
    return list(dict.fromkeys(pairs + chars))[:MAX_GRAMS]


def _substring(terms: list[str]) -> Substring | None:
    """Terms of 3+ characters through the trigram index, shorter CJK by the scan; a shorter
    Latin piece (a cut can leave one) is left out."""
    long = tuple(t for t in terms if len(t) >= 3)
    short = tuple(t for t in terms if len(t) < 3 and _CJK.search(t))
    return Substring(long, short) if long or short else None


def route(query: ParsedQuery) -> list[Step]:
    """The searches that serve ``query``, in order (the module doc says why)."""
    if query.cjk:
        steps: list[Step] = [Substring(tuple(trigram_terms(query)), tuple(short_cjk_terms(query)))]
        pieces = cjk_pieces(query)
        if pieces and set(pieces) != set(trigram_terms(query) + short_cjk_terms(query)):
            more = [_substring(pieces)]
            if len(pieces) > 1:
                more += [_substring([piece]) for piece in pieces]
            steps += [step for step in more if step is not None]
        loose = cjk_grams(query)
        if loose:
            steps.append(Grams(tuple(loose)))
        return steps
    steps = [
        Ranked(expr, loose=loose)
        for expr, loose in ((fts_all(query), False), (fts_any(query), True))
        if expr
    ]
    widest = fts_any(query)
    if query.period is not None and widest:  # the month the question names, first
        steps.insert(0, Ranked(widest, query.period))
    terms = trigram_terms(query)
    if terms:
        steps.append(Substring(tuple(terms), fallback=True))
    return steps
