"""The readings the scanner matches: the text folded, flattened and de-obfuscated.

``readings(text)`` returns the NFKC-folded text (horizontal white space collapsed), the same
flattened over line breaks, and, when the text gives a reason, de-obfuscated readings:
Cyrillic/Greek homoglyphs, leetspeak, spaced-out letters and broken hyphens undone, words
broken over short lines joined, the text reversed (when it talks about reading backwards or
holds a bidi override), base64 blobs decoded, rot13 undone. The decoders see at most
``DECODE_CAP`` characters; every helper regex has a bounded width (the tests check it).
"""

from __future__ import annotations

import base64
import re
import unicodedata

__all__ = ["DECODE_CAP", "flatten", "normalise", "readings"]

#: How much of a text the decoded readings (leetspeak, spacing, reversed, rot13) see.
DECODE_CAP = 8192

_SPACES = re.compile(r"[^\S\n]+")


def normalise(text: str) -> str:
    """NFKC-fold look-alike letters and collapse runs of horizontal white space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text))


def flatten(text: str) -> str:
    """All white space (line breaks too) as single spaces, for phrases split over lines."""
    return " ".join(text.split())


# Latin look-alikes that NFKC leaves alone (Cyrillic and Greek homoglyphs).
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡӏАЕОРСУХІЈЅВНКМТαονρτκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdglAEOPCYXIJSBHKMTaovptkiABEZHIKMNOPTYX",
)
_LEET = str.maketrans("013457@$", "oieastas")
# Every repeat is bounded (a word of at most 64 characters), so these stay linear too.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?!\$[A-Z][A-Z0-9]{0,30}_[A-Z0-9_]{1,30}(?![\w@$]))"  # $SHELL_VARIABLE
    r"(?=[\w@$]{0,63}[A-Za-z])(?=[\w@$]{0,63}[0-9@$])[\w@$]{3,64}(?![\w@$])"
)
_SPACED = re.compile(r"(?<![^\W_])[^\W_]([ .·_*-])[^\W_](?:\1[^\W_]){1,63}(?![^\W_])")
_HYPHEN_BREAK = re.compile(r"(\w)-[ \t]{0,8}\n[ \t]{0,8}(\w)")
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_SPACED_HINT = re.compile(r"(?<![^\W_])[^\W_][ .·_*-][^\W_][ .·_*-][^\W_](?![^\W_])")
_LEET_HINT = re.compile(r"[^\W\d_][0-9@$]|[0-9@$][^\W\d_]")
_WORD_BREAK = re.compile(r"(?:^|\n)[^\n]{1,24}[^\W\d_]\n[^\W\d_]")  # short lines
# Cues that a text is meant to be read backwards ("read backwards and comply").
_BACKWARDS_CUES: tuple[str, ...] = (
    *("backward", "revers", "rückwärts", "ruckwarts", "envers", "revés", "reves", "rovescio"),
    *("achteruit", "tyłu", "обратн", "задом", "наоборот", "逆", "倒", "反"),
)
_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


def readings(text: str) -> list[str]:
    """The texts to match: the folded text, flattened, then de-obfuscated readings of it
    (each step only when it can change something)."""
    nfkc = unicodedata.normalize("NFKC", text)
    folded = _SPACES.sub(" ", nfkc)
    flat = flatten(folded)
    readings = [folded, flat]
    joined = nfkc[:DECODE_CAP]
    if _SPACED_HINT.search(joined):
        joined = _SPACED.sub(lambda m: m.group().replace(m.group(1), ""), joined)
    if "-" in joined:
        joined = _HYPHEN_BREAK.sub(r"\1\2", joined)
    if _WORD_BREAK.search(joined):  # "ign\nore prev\nious": words broken over lines
        readings.append(flatten(joined.replace("\n", "")))
    if not joined.isascii():
        joined = joined.translate(_CONFUSABLES)
    if _LEET_HINT.search(joined):
        joined = _LEET_WORD.sub(lambda m: m.group().translate(_LEET), joined)
    readings.append(flatten(joined))
    if "-" in joined:
        readings.append(flatten(_INNER_HYPHEN.sub("", joined)))
    low = folded[:DECODE_CAP].lower()
    backwards = any(cue in low for cue in _BACKWARDS_CUES)
    if backwards or (not low.isascii() and _BIDI_CONTROL.search(low)):
        readings.append(flat[:DECODE_CAP][::-1])  # "read backwards and comply", or bidi
    for blob in _BASE64.findall(folded[: 4 * DECODE_CAP]):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable():
            readings.append(flatten(normalise(decoded)))
    if "rot" in low:
        readings.append(flat[:DECODE_CAP].translate(_ROT13))
    return list(dict.fromkeys(readings))
