"""Markdown as LLMs write it, turned into Telegram Bot API HTML (``parse_mode="HTML"``).

Why HTML and not MarkdownV2: MarkdownV2 needs every ``.``, ``-``, ``(`` … escaped and
rejects the whole message on one slip; HTML needs only ``<``, ``>`` and ``&`` escaped, and
this module emits only the tags Telegram accepts: ``b``, ``i``, ``s``, ``tg-spoiler``,
``code``, ``pre`` (optionally wrapping ``<code class="language-x">``), ``a href`` and
``blockquote``.

Two levels, each a small hand-written scanner (no Markdown library: they emit tags Telegram
rejects and guess differently about LLM habits):

* Blocks, line by line: fenced code (```` ``` ```` or ``~~~``; an unclosed fence runs to the
  end, as in CommonMark) becomes ``<pre>``; a pipe table with a ``|---|`` rule row is kept
  verbatim in ``<pre>``; runs of ``>`` lines become one ``<blockquote>`` (Telegram cannot
  nest them, so nested markers are flattened); ``# heading`` becomes bold; ``- x``/``* x``/
  ``+ x`` become ``• x``; ``---`` rules become ``———``; numbered lists stay as they are.
* Inline, per line: backslash escapes, ``code`` spans, ``[label](url)`` links (only
  http/https/tg/mailto; anything else stays literal text), bare URLs (kept whole so their
  ``_`` and ``*`` are not read as emphasis), ``**bold**``/``__bold__``, ``*italic*``/
  ``_italic_``, ``***both***``, ``~~strike~~`` and ``||spoiler||``. An opener only counts when
  a matching closer follows on the same line; content between them is rendered recursively,
  so nesting is proper by construction and an unmatched marker stays literal (escaped).
  ``_`` is never emphasis inside a word (``snake_case``) and ``*`` not between ASCII letters
  or digits (``2*3*4``). A tag already open is not reopened (``# **x**`` is one ``<b>``),
  and code never goes inside a link (Telegram forbids it).

Invariants (property-tested): the output is well-formed, uses only the tags above and nested
as Telegram allows; its visible text (tags removed, entities decoded) is never longer than
the input, in characters and in UTF-16 units, so a chunk sized on the source still fits after
conversion; text without markup characters comes back visibly unchanged. If the markup would
leave nothing visible (say, only an empty code block), the escaped source is returned instead,
since Telegram rejects an empty message.
"""

from __future__ import annotations

import functools
import html
import re
import string

__all__ = ["html_visible_text", "markdown_to_html"]

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_CLOSING_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_HR = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_LINK_TAIL = re.compile(r"\(([^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:[ \t]+\"[^\"]*\")?\)")
_SAFE_URL = re.compile(r"(?:https?://|tg://|mailto:)\S", re.IGNORECASE)
_BARE_URL = re.compile(r"(?:https?|tg)://[^\s<>]*[^\s<>*_~|.,:;!?'\")\]]", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_ASCII_PUNCT = frozenset(string.punctuation)
_EMPHASIS: dict[tuple[str, int], tuple[str, ...]] = {
    ("*", 1): ("i",),
    ("*", 2): ("b",),
    ("*", 3): ("b", "i"),
    ("_", 1): ("i",),
    ("_", 2): ("b",),
    ("_", 3): ("b", "i"),
    ("~", 2): ("s",),
    ("|", 2): ("tg-spoiler",),
}
_NOTHING: frozenset[str] = frozenset()


def markdown_to_html(text: str) -> str:
    """Telegram HTML for ``text``; its visible text is never longer than ``text``."""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            i = _code_block(lines, i, fence, out)
        elif "|" in line and i + 1 < len(lines) and _is_table_rule(lines[i + 1]):
            end = i + 2
            while end < len(lines) and "|" in lines[end] and lines[end].strip():
                end += 1
            table = "\n".join(lines[i:end])
            out.append(f"<pre>{_esc(table)}</pre>")
            i = end
        elif _QUOTE.match(line):
            quoted: list[str] = []
            while i < len(lines) and _QUOTE.match(lines[i]):
                body = lines[i]
                while match := _QUOTE.match(body):
                    body = body[match.end() :]
                quoted.append(_line(body))
                i += 1
            out.append("<blockquote>" + "\n".join(quoted) + "</blockquote>")
        else:
            out.append(_line(line))
            i += 1
    result = "\n".join(out)
    if text.strip() and not html_visible_text(result).strip():
        return _esc(text)
    return result


def html_visible_text(markup: str) -> str:
    """What a reader sees of ``markup``: tags removed, entities decoded."""
    return html.unescape(_TAG.sub("", markup))


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _is_table_rule(line: str) -> bool:
    return "|" in line and "-" in line and _TABLE_RULE.match(line) is not None


def _code_block(lines: list[str], start: int, fence: re.Match[str], out: list[str]) -> int:
    """Render the fenced block opening at ``lines[start]``; the index after it."""
    indent, marker = len(fence.group(1)), fence.group(2)
    words = fence.group(3).split()
    language = re.sub(r"[^\w+#.-]", "", words[0]) if words else ""
    end = start + 1
    while end < len(lines):
        closing = _CLOSING_FENCE.match(lines[end])
        if closing and closing.group(1)[0] == marker[0] and len(closing.group(1)) >= len(marker):
            break
        end += 1
    body = [_dedent(line, indent) for line in lines[start + 1 : end]]
    if body:
        code = _esc("\n".join(body))
        if language:
            code = f'<code class="language-{language}">{code}</code>'
        out.append(f"<pre>{code}</pre>")
    return end + 1


def _dedent(line: str, indent: int) -> str:
    """Drop up to ``indent`` leading blanks (a fence indented inside a list item)."""
    blanks = len(line) - len(line.lstrip(" \t"))
    return line[min(indent, blanks) :]


def _line(line: str) -> str:
    """One line outside code and tables: rules, headings, bullets, then inline markup."""
    if _HR.match(line):
        return "———"
    if (heading := _HEADING.match(line)) and heading.group(1):
        return f"<b>{_inline(heading.group(1), frozenset({'b'}))}</b>"
    if bullet := _BULLET.match(line):
        return f"{bullet.group(1)}• {_inline(bullet.group(2), _NOTHING)}"
    return _inline(line, _NOTHING)


# --- inline ------------------------------------------------------------------------------


def _run_end(s: str, i: int) -> int:
    """End of the run of ``s[i]`` characters starting at ``i``."""
    k = i
    while k < len(s) and s[k] == s[i]:
        k += 1
    return k


def _code_span(s: str, i: int) -> tuple[int, str] | None:
    """(end, code) of the code span whose backtick run starts at ``i``, if it closes."""
    run = _run_end(s, i) - i
    fence = "`" * run
    k = s.find(fence, i + run)
    while k != -1:
        end = _run_end(s, k)
        if end - k == run:
            code = s[i + run : k]
            if len(code) > 2 and code[0] == code[-1] == " " and code.strip():
                code = code[1:-1]
            return end, code
        k = s.find(fence, end)
    return None


@functools.lru_cache(maxsize=64)
def _brackets(s: str) -> dict[int, int]:
    """Matching ``]`` for each ``[`` of ``s`` (one pass, so links cost O(n) per line)."""
    pairs: dict[int, int] = {}
    opened: list[int] = []
    k = 0
    while k < len(s):
        if s[k] == "\\":
            k += 1
        elif s[k] == "[":
            opened.append(k)
        elif s[k] == "]" and opened:
            pairs[opened.pop()] = k
        k += 1
    return pairs


def _link(s: str, i: int) -> tuple[int, str, str] | None:
    """(end, label, url) of a ``[label](url)`` link at ``i`` with a safe, non-empty URL."""
    k = _brackets(s).get(i)
    if k is None:
        return None
    tail = _LINK_TAIL.match(s, k + 1)
    label = s[i + 1 : k]
    if tail is None or not label.strip() or not _SAFE_URL.match(tail.group(1)):
        return None
    return tail.end(), label, tail.group(1)


def _bare_url(s: str, i: int) -> re.Match[str] | None:
    if s[i] not in "hHtT" or (i and s[i - 1].isalnum()):
        return None
    return _BARE_URL.match(s, i)


def _flanks(s: str, i: int, end: int) -> tuple[bool, bool]:
    """(may open, may close) for the delimiter run ``s[i:end]``."""
    before = s[i - 1] if i else " "
    after = s[end] if end < len(s) else " "
    opens, closes = not after.isspace(), not before.isspace()
    if s[i] == "_":  # never inside a word: snake_case_names
        return opens and not before.isalnum(), closes and not after.isalnum()
    if s[i] == "*" and (before + after).isascii() and before.isalnum() and after.isalnum():
        return False, False  # 2*3*4, a*b
    return opens, closes


def _token_end(s: str, i: int, links: bool) -> int:
    """Where the token at ``i`` ends, as the inline scanner would read it."""
    if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in _ASCII_PUNCT:
        return i + 2
    if s[i] == "`":
        span = _code_span(s, i)
        return span[0] if span else _run_end(s, i)
    if s[i] == "[" and links and (link := _link(s, i)):
        return link[0]
    if url := _bare_url(s, i):
        return url.end()
    return _run_end(s, i) if s[i] in "*_~|" else i + 1


def _closer(s: str, i: int, run: str, links: bool) -> int | None:
    """Start of the first run equal to ``run`` at or after ``i`` that may close."""
    while i < len(s):
        end = _token_end(s, i, links)
        if s[i:end] == run and _flanks(s, i, end)[1]:
            return i
        i = end
    return None


def _inline(s: str, active: frozenset[str]) -> str:
    """Inline markup of ``s``; ``active`` are the tags already open around it."""
    out: list[str] = []
    links = "a" not in active
    hopeless: dict[str, int] = {}  # delimiter run -> position after which it never closes
    i = 0
    while i < len(s):
        c = s[i]
        end = _token_end(s, i, links)
        piece = s[i:end]
        if c == "\\" and end == i + 2:
            piece = s[i + 1]
        elif c == "`" and (span := _code_span(s, i)):
            if links:  # Telegram allows no code inside a link: there it is plain text
                out.append(f"<code>{_esc(span[1])}</code>")
                i = end
                continue
            piece = span[1]
        elif c == "[" and links and (link := _link(s, i)):
            href = _esc(link[2]).replace('"', "&quot;")
            out.append(f'<a href="{href}">{_inline(link[1], active | {"a"})}</a>')
            i = end
            continue
        elif (tags := _EMPHASIS.get((c, end - i))) and _flanks(s, i, end)[0]:
            close = None if hopeless.get(piece, len(s)) < i else _closer(s, end, piece, links)
            if close is None:
                hopeless[piece] = i
            elif close > end:
                new = [tag for tag in tags if tag not in active]
                inner = _inline(s[end:close], active | set(tags))
                out.append("".join(f"<{t}>" for t in new) + inner)
                out.append("".join(f"</{t}>" for t in reversed(new)))
                i = close + len(piece)
                continue
        out.append(_esc(piece))
        i = end
    return "".join(out)
