"""Findings a short text is excused of: the rule's words are *mentioned*, not *used*.

A memory entry may talk about an attack without making one ("thinks 'ignore previous
instructions' attacks are overhyped"), or give advice about secrets that is the opposite of
disclosing them ("show API keys truncated like `sk-...`"). The rules match the words either
way; what tells the two apart lies around the match, which a regex cannot weigh without
growing slow and brittle. So after the table has spoken, a text of at most ``SHORT``
characters (a memory entry, not a document) is excused of a finding when **every** match of
every alternative of that rule, in every reading, is one of these:

- ``ignore-instructions``: the phrase is **quoted** (the quotation holds little more than the
  phrase) and named as a specimen next to the quotation: an attack, a trick, a payload, an
  example, a talk titled, prompts like …;
- ``secret-disclosure``: the instruction asks for the secret **redacted** (truncated, masked,
  as ``<PLACEHOLDER>``) and nothing after it asks for it whole, or its verb and its object
  sit in **different sentences** ("… distribution list. The SMTP credentials come from …");
- ``hardcoded-secret``: the sentence calls the value fake ("a joke example, not a real
  password"); the rule keeps real secrets out of prompts, it is not an attack;
- ``exfil-url``: the address is where to *report* leaked keys (a SECURITY.md convention);
- ``exfil-command``: a ``curl`` that sends a key the way an API is called, as its
  ``Authorization`` / ``X-API-Key`` header from a ``$VARIABLE``, and nothing more.

One unexcused match keeps the finding, so an attack that also quotes itself is still caught.
Longer texts are never excused: the cost of finding every match stays bounded by the size
of a memory entry, and a document is where a mention can hide a use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["SHORT", "excused"]

SHORT = 2048
_MAX_MATCHES = 64  # past this many matches of one rule, nothing is excused

_OPENING = {"'": "'", '"': '"', "“": "”", "‘": "’", "«": "»", "„": "“", "`": "`"}
#: Words that name a quoted phrase as a specimen of something, not an order.
_SPECIMEN = re.compile(
    r"\b(?:attacks?|tricks?|payloads?|injections?|jailbreaks?|exploits?|samples?|examples?|"
    r"e\.\s?g\.|classic|famous|infamous|titled|talks?|papers?|articles?|slides?|memes?|"
    r"(?:prompts?|phrases?|strings?|lines?|inputs?|messages?)\s+(?:like|such\s+as)|"
    r"known\s+as|called|test\s+(?:sets?|cases?|prompts?)|red[-\s]team\w*)\b",
    re.IGNORECASE,
)
_NEAR = 60  # how far from the quotation a specimen word may stand
_EXTRA = 40  # how much more than the phrase a quotation may hold

_REDACTED = re.compile(
    r"\b(?:truncated|masked|redacted|elided|obfuscated|abbreviated|starred\s+out|"
    r"as\s+placeholders?)\b|\bas\s+[`'\"]?(?:<[^>\n]{1,40}>?|\$\{|\{\{|x{3,}\b|\*{3,})",
    re.IGNORECASE,
)
#: Asking for the secret whole after all takes the excuse back.
_WHOLE = re.compile(
    r"\b(?:in\s+full|fully|whole|entire|complete|unredacted|untruncated|unmasked|uncensored|"
    r"real\s+(?:values?|keys?|tokens?|secrets?)|full\s+(?:values?|keys?|tokens?|secrets?))\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:never|not|no|don'?t|without)\s+$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[a-z0-9)\]][.!?]\s+[A-Z]")
_API_HEADER = re.compile(
    r"curl\s+(?:-{1,2}[a-z-]{1,20}\s+)*-H\s*[\"']?\s*(?:authorization\s*:\s*(?:bearer|token|basic)"
    r"|x-api-key\s*:|api-key\s*:|x-auth-token\s*:)\s*\$\{?[A-Za-z_][A-Za-z0-9_]{0,60}\}?[\"']?",
    re.IGNORECASE,
)


def _quoted_specimen(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    for opening in range(start - 1, max(line_start, start - _EXTRA) - 1, -1):
        closing_char = _OPENING.get(text[opening])
        if closing_char is None or (opening > line_start and text[opening - 1].isalnum()):
            continue
        closing = text.find(closing_char, end, min(line_end, end + _EXTRA + 1))
        if closing < 0 or (closing + 1 < line_end and text[closing + 1].isalnum()):
            continue
        if closing_char in text[opening + 1 : start]:
            continue
        before = text[max(line_start, opening - _NEAR) : opening]
        after = text[closing + 1 : min(line_end, closing + 1 + _NEAR)]
        return bool(_SPECIMEN.search(before) or _SPECIMEN.search(after))
    return False


def _redacted_or_split(text: str, start: int, end: int) -> bool:
    if _SENTENCE_END.search(text, start, end):
        return True
    if not _REDACTED.search(text, start, min(len(text), end + 25)):
        return False
    return not any(
        not _NEGATION.search(text, max(0, whole.start() - 12), whole.start())
        for whole in _WHOLE.finditer(text, start)
    )


def _api_call(text: str, start: int, end: int) -> bool:
    return _API_HEADER.fullmatch(text, start, end) is not None


#: A credential the text itself calls fake, in the same sentence.
_DECLARED_FAKE = re.compile(
    r"\b(?:not\s+(?:a\s+|the\s+)?real|(?:fake|dummy|made[-\s]up)\s+(?:passwords?|keys?|tokens?|"
    r"credentials?|secrets?|values?)|a\s+joke|joke\s+example)\b",
    re.IGNORECASE,
)
#: Where to report a leak: the secrets named are the ones already lost.
_LEAK_REPORT = re.compile(
    r"\breport\s+(?:any\s+|the\s+)?(?:leaked|exposed|compromised|lost|stolen)\s+"
    r"(?:api\s+)?(?:keys?|tokens?|credentials?|secrets?|passwords?)\s+to\b",
    re.IGNORECASE,
)


def _sentence(text: str, start: int, end: int) -> str:
    before = max(text.rfind(". ", 0, start), text.rfind("\n", 0, start))
    after = [i for i in (text.find(". ", end), text.find("\n", end)) if i >= 0]
    return text[before + 1 : min(after) if after else len(text)]


def _declared_fake(text: str, start: int, end: int) -> bool:
    return bool(_DECLARED_FAKE.search(_sentence(text, start, end)))


def _leak_report(text: str, start: int, end: int) -> bool:
    return _LEAK_REPORT.match(text, start, end) is not None


_EXCUSES: dict[str, Callable[[str, int, int], bool]] = {
    "hardcoded-secret": _declared_fake,
    "exfil-url": _leak_report,
    "ignore-instructions": _quoted_specimen,
    "secret-disclosure": _redacted_or_split,
    "exfil-command": _api_call,
}


def excused(rule: str, regexes: Sequence[re.Pattern[str]], texts: Sequence[str]) -> bool:
    """Whether every match of ``regexes`` (one rule's alternatives) in every reading of a
    short text is one that ``rule``'s excuse covers."""
    excuse = _EXCUSES.get(rule)
    if excuse is None or any(len(text) > SHORT for text in texts):
        return False
    seen = 0
    for regex in regexes:
        for text in texts:
            position = 0
            while (match := regex.search(text, position)) is not None:
                seen += 1
                if seen > _MAX_MATCHES or not excuse(text, match.start(), match.end()):
                    return False
                position = match.start() + 1  # a later match may begin inside this one
    return True
