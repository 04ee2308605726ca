"""The readings the scanner matches: the text folded, flattened and de-obfuscated.

``readings(text)`` returns the NFKC-folded text (horizontal white space collapsed), the same
flattened over line breaks, and, when the text gives a reason, de-obfuscated readings:
Cyrillic/Greek homoglyphs, leetspeak, spaced-out letters and broken hyphens undone, words
broken over short lines joined, the text reversed (when it talks about reading backwards or
holds a bidi override), base64 blobs decoded, rot13 undone. Invisible default-ignorable
characters (soft hyphens, joiners) are dropped first. The decoders read the whole text, a
long one in overlapping windows of ``DECODE_WINDOW`` characters; every helper regex has a
bounded width (the tests check it).
"""

from __future__ import annotations

import base64
import re
import unicodedata

__all__ = ["DECODE_WINDOW", "flatten", "normalise", "readings"]

#: The decoders (spacing, broken words, look-alikes, leetspeak) read a long text in windows
#: of this many characters, overlapping by ``_OVERLAP`` (twice the longest match: a spaced-out
#: phrase is twice as long as the phrase), so that their work per window is bounded and no
#: part of the text goes unread.
DECODE_WINDOW = 16384
_OVERLAP = 2048

# Runs of two or more, or one that is not a plain space: a lone space stays as it is, so
# prose is not rewritten space by space.
_SPACES = re.compile(r"[^\S\n]{2,}|[^\S \n]")


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
    r"(?<![\w@$])(?=[\w@$]{0,63}[A-Za-z])(?=[\w@$]{0,63}[0-9@$])[\w@$]{3,64}(?![\w@$])"
)
_SPACED = re.compile(r"(?<![^\W_])[^\W_]([ .·_*-])[^\W_](?:\1[^\W_]){1,63}(?![^\W_])")
# Each helper starts with its one literal character where it can: the regex engine then
# skips to it instead of trying every place.
_HYPHEN_BREAK = re.compile(r"-(?<=\w-)[ \t]{0,8}\n[ \t]{0,8}(?=\w)")
_INNER_HYPHEN = re.compile(r"-(?<=[^\W\d_]-)(?=[^\W\d_])")
_SPACED_HINT = re.compile(r"(?<![^\W_])[^\W_][ .·_*-][^\W_][ .·_*-][^\W_](?![^\W_])")
_LEET_HINT = re.compile(r"[0-9@$](?:(?<=[^\W\d_][0-9@$])|(?=[^\W\d_]))")
_WORD_BREAK = re.compile(r"(?:^|\n)[^\n]{1,24}[^\W\d_]\n[^\W\d_]")  # short lines
# A break at the end of a short line (24 characters at most) between two letters: a word
# broken over lines ("ign\nore prev\nious"); other line breaks stay breaks.
_LINE_BREAK = re.compile(r"\n(?<=[^\W\d_]\n)(?<![^\n]{25}\n)(?=[^\W\d_])")
# Cues that a text is meant to be read backwards ("read backwards and comply"), or in rot13.
# Words, not fragments: "revers" and "rot" are in every other document (reverse(),
# protocol), and each cue costs a reading of the whole text.
_BACKWARDS_CUE = re.compile(
    r"\bbackwards?\b|\bin\s+reverse\b|\breversed?\s+(?:order|text|string|letters)\b"
    r"|\bright[\s-]+to[\s-]+left\b|r[uü]ckw[aä]rts|\bl'envers\b|\bal\s+rev[eé]s\b"
    r"|\ba\s+rovescio\b|\bachteruit\b|\bod\s+ty[lł]u\b|\bobratn|обратн\w{0,4}\s+порядк"
    r"|задом\s+наперёд|задом\s+наперед|наоборот|倒着|倒過來|倒过来|反过来|反過來|逆から|逆順|逆に読|거꾸로"
)
_ROT_CUE = re.compile(r"\brot[\s_-]?(?:13|47)|\brot\b|\bcaesar\b")
# Substrings one of which each backwards cue holds: looked for first (a plain find is many
# times faster than the cue regex over a long text), the regex read only around them.
_BACKWARDS_HINTS = (
    *("backward", "reverse", "to left", "to-left", "ckw", "envers", "al rev", "rovescio"),
    *("achteruit", "tyłu", "tylu", "obratn", "обратн", "задом", "наоборот", "倒", "反", "逆"),
    "거꾸로",
)


def _cued(low: str, hints: tuple[str, ...], cue: re.Pattern[str]) -> bool:
    """Whether ``cue`` matches ``low``, read only within 40 characters of a hint."""
    for hint in hints:
        at = low.find(hint)
        while at >= 0:
            if cue.search(low, max(0, at - 40), at + 40):
                return True
            at = low.find(hint, at + 40)
    return False


_BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Default-ignorable characters (soft hyphen, joiners, variation selectors, fillers, tags):
# invisible, so dropped from every reading ("ign\u00adore" reads "ignore").
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U000e0000-\U000e0fff]"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


def _leet(match: re.Match[str]) -> str:
    """A leetspeak word read as letters; an ``@`` inside an address (``l0gs@h4ck-m4il.n3t``)
    stays one."""
    word = match.group()
    if "@" in word[1:-1] and match.string[match.end() : match.end() + 1] in (".", "-"):
        head, _, tail = word.partition("@")
        return f"{head.translate(_LEET)}@{tail.translate(_LEET)}"
    return word.translate(_LEET)


def _windows(text: str) -> list[str]:
    """``text`` in windows of ``DECODE_WINDOW`` characters, each overlapping the next by
    ``_OVERLAP``: every stretch of ``_OVERLAP`` characters lies whole in one window."""
    if len(text) <= DECODE_WINDOW:
        return [text]
    step = DECODE_WINDOW - _OVERLAP
    return [text[start : start + DECODE_WINDOW] for start in range(0, len(text) - _OVERLAP, step)]


def _decoded(window: str) -> str:
    """One window de-obfuscated: spacing, broken hyphens, look-alikes and leetspeak undone,
    split words joined (a short line broken inside a word, an inner hyphen: "ign\nore",
    "dis-regard"); flattened."""
    if _SPACED_HINT.search(window):
        window = _SPACED.sub(lambda m: m.group().replace(m.group(1), ""), window)
    if "-" in window:
        window = _HYPHEN_BREAK.sub("", window)
    if not window.isascii():
        window = window.translate(_CONFUSABLES)
    if _LEET_HINT.search(window):
        window = _LEET_WORD.sub(_leet, window)
    if "\n" in window and _WORD_BREAK.search(window):
        window = _LINE_BREAK.sub("", window)
    if "-" in window:
        window = _INNER_HYPHEN.sub("", window)
    return flatten(window)


def _joined(parts: list[str]) -> list[str]:
    """Readings of many windows or blobs as one reading, a line each (no alternative reads
    across a line break: gaps are ``[^\n]``), so one pass of the finder reads them all."""
    return ["\n".join(dict.fromkeys(parts))] if parts else []


def readings(text: str) -> list[str]:
    """The texts to match: the folded text, flattened, then de-obfuscated readings of it
    (each step only when it can change something). Decoders see the whole text: in
    overlapping windows, each window's reading kept only where it differs from the plain
    one, the windows of one kind joined into one reading."""
    nfkc = unicodedata.normalize("NFKC", text)
    bidi = False
    if not nfkc.isascii():
        bidi = _BIDI_CONTROL.search(nfkc) is not None
        nfkc = _IGNORABLE.sub("", nfkc)  # soft hyphens, joiners: "ign\u00adore"
    folded = _SPACES.sub(" ", nfkc)
    flat = flatten(folded)
    readings = [folded, flat]
    windows = _windows(nfkc)
    plain = {flatten(window) for window in windows} if len(windows) > 1 else {flat}
    readings += _joined([d for d in map(_decoded, windows) if d not in plain])
    low = folded.lower()
    if bidi or _cued(low, _BACKWARDS_HINTS, _BACKWARDS_CUE):
        readings.append(flat[::-1])  # "read backwards and comply", or bidi
    blobs = []
    for blob in _BASE64.findall(folded):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable():
            blobs.append(flatten(normalise(decoded)))
    readings += _joined(blobs)
    if _cued(low, ("rot", "caesar"), _ROT_CUE):
        readings.append(flat.translate(_ROT13))
    return list(dict.fromkeys(readings))
