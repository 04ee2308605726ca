"""Markdown → Telegram HTML: every construct by example, and the safety properties.

The properties are what keeps Telegram from rejecting a reply: the output parses into a
properly nested tree of allowed tags only, nested the way the Bot API permits; every ``<``,
``>`` and ``&`` in text is escaped; and the visible text never grows, so a chunk sized on the
Markdown source still fits Telegram's 4,096 UTF-16 units after conversion.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from adapters.chunking import utf16_len
from adapters.telegram.markup import html_visible_text, markdown_to_html

EXAMPLES = [
    # plain text and escaping
    ("hello world", "hello world"),
    ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
    ('say "hi" & <b>bye</b>', 'say "hi" &amp; &lt;b&gt;bye&lt;/b&gt;'),
    ("", ""),
    # emphasis
    ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
    ("*italic* and _italic_", "<i>italic</i> and <i>italic</i>"),
    ("***both*** ___both___", "<b><i>both</i></b> <b><i>both</i></b>"),
    ("~~gone~~ ||secret||", "<s>gone</s> <tg-spoiler>secret</tg-spoiler>"),
    ("**bold _italic_ bold**", "<b>bold <i>italic</i> bold</b>"),
    ("*it **bold** it*", "<i>it <b>bold</b> it</i>"),
    ("||**x** ~~y~~||", "<tg-spoiler><b>x</b> <s>y</s></tg-spoiler>"),
    ("这是**重要**的", "这是<b>重要</b>的"),
    ("**Note:** read", "<b>Note:</b> read"),
    # what is not emphasis
    ("snake_case_words and __init__.py", "snake_case_words and <b>init</b>.py"),
    ("my_var_name", "my_var_name"),
    ("2*3*4 = 24 and 5 * 6", "2*3*4 = 24 and 5 * 6"),
    ("*args, **kwargs", "*args, **kwargs"),
    ("** not bold **", "** not bold **"),
    ("unclosed **bold and *it", "unclosed **bold and *it"),
    ("~5 min, a || b, ~single~", "~5 min, a || b, ~single~"),
    ("a **** b", "a **** b"),
    ("****", "———"),  # a rule, as in CommonMark
    (r"\*not italic\* and \_x\_", "*not italic* and _x_"),
    (r"C:\Users\me", r"C:\Users\me"),
    # code
    ("use `a<b>` now", "use <code>a&lt;b&gt;</code> now"),
    ("`**raw** _x_`", "<code>**raw** _x_</code>"),
    ("`` a`b ``", "<code>a`b</code>"),
    ("unclosed `tick", "unclosed `tick"),
    ("**`code` in bold**", "<b><code>code</code> in bold</b>"),
    (
        "```python\nif a < b:\n    x = a_b * 2\n```\ndone",
        '<pre><code class="language-python">if a &lt; b:\n    x = a_b * 2</code></pre>\ndone',
    ),
    ("~~~\nplain & simple\n~~~", "<pre>plain &amp; simple</pre>"),
    (
        "````md\n```\ninner\n```\n````",
        '<pre><code class="language-md">```\ninner\n```</code></pre>',
    ),
    ("```js\nunclosed();", '<pre><code class="language-js">unclosed();</code></pre>'),
    ('```a"><b>\nx\n```', '<pre><code class="language-ab">x</code></pre>'),
    (
        "1. step:\n   ```sh\n   ls -l\n   ```",
        '1. step:\n<pre><code class="language-sh">ls -l</code></pre>',
    ),
    ("```print(1)``` inline", "<code>print(1)</code> inline"),
    ("```\n```", "```\n```"),  # nothing visible would be left: the source is sent instead
    # links
    ("[site](https://example.com)", '<a href="https://example.com">site</a>'),
    (
        '[**bold** link](http://x.y/?a=1&b="2")',
        '<a href="http://x.y/?a=1&amp;b=&quot;2&quot;"><b>bold</b> link</a>',
    ),
    (
        "[me](tg://user?id=42) [mail](mailto:a@b.c)",
        '<a href="tg://user?id=42">me</a> <a href="mailto:a@b.c">mail</a>',
    ),
    ("[x](javascript:alert(1)) [y](page.html)", "[x](javascript:alert(1)) [y](page.html)"),
    ("[](https://e.com) [a] (https://e.com)", "[](https://e.com) [a] (https://e.com)"),
    ("[`code` label](https://e.com)", '<a href="https://e.com">code label</a>'),
    ("[wiki](https://w.org/A_(b))", '<a href="https://w.org/A_(b)">wiki</a>'),
    ("see https://x.com/_next/a_b_ and _it_", "see https://x.com/_next/a_b_ and <i>it</i>"),
    ("**https://x.com/a**", "<b>https://x.com/a</b>"),
    # blocks
    ("# Title\n## Sub **b** ##", "<b>Title</b>\n<b>Sub b</b>"),
    ("#hashtag and #", "#hashtag and #"),
    ("- one\n* two\n  + nested **b**", "• one\n• two\n  • nested <b>b</b>"),
    ("1. first\n2) second", "1. first\n2) second"),
    ("> quoted *it*\n> second\nafter", "<blockquote>quoted <i>it</i>\nsecond</blockquote>\nafter"),
    ("> > nested\n>\n> - item", "<blockquote>nested\n\n• item</blockquote>"),
    ("a\n---\nb\n***\n_ _ _", "a\n———\nb\n———\n———"),
    (
        "| a | **b** |\n|---|:-:|\n| 1<2 | x |\nafter",
        "<pre>| a | **b** |\n|---|:-:|\n| 1&lt;2 | x |</pre>\nafter",
    ),
    ("a | b\nc | d", "a | b\nc | d"),  # pipes without a rule row are no table
    ("line\r\nbreak", "line\nbreak"),
]


@pytest.mark.parametrize(("source", "expected"), EXAMPLES)
def test_examples(source: str, expected: str) -> None:
    assert markdown_to_html(source) == expected
    check_telegram_html(expected)  # the expectations themselves obey the rules


def test_visible_text_helper() -> None:
    assert html_visible_text('<b>a &lt;b&gt;</b> <a href="x&amp;y">&amp;&quot;</a>') == 'a <b> &"'
    assert html_visible_text("&amp;lt;") == "&lt;"


# --- the checker -------------------------------------------------------------------------

ALLOWED = {"b", "i", "s", "tg-spoiler", "code", "pre", "a", "blockquote"}
TOP_LEVEL_ONLY = {"pre", "blockquote"}
ENTITY = re.compile(r"&(?!(?:lt|gt|amp|quot);)")


class TelegramHtmlChecker(HTMLParser):
    """Fails on anything the Bot API's HTML mode would reject (or we never mean to emit)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in ALLOWED, tag
        parent = self.stack[-1] if self.stack else None
        assert tag not in self.stack, f"<{tag}> nested in itself"
        if tag in TOP_LEVEL_ONLY:
            assert parent is None, f"<{tag}> inside <{parent}>"
        if tag == "code":
            assert "a" not in self.stack, "code inside a link"
        if parent == "pre":
            assert tag == "code", f"<{tag}> inside <pre>"
        else:
            assert parent != "code", f"<{tag}> inside <code>"
        if tag == "a":
            assert len(attrs) == 1 and attrs[0][0] == "href" and attrs[0][1], attrs
            assert re.match(r"(?i)(https?://|tg://|mailto:)", attrs[0][1])
        elif tag == "code" and parent == "pre" and attrs:
            assert len(attrs) == 1 and attrs[0][0] == "class", attrs
            assert re.fullmatch(r"language-[\w+#.-]+", attrs[0][1] or ""), attrs
        else:
            assert not attrs, (tag, attrs)
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack}"
        self.stack.pop()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise AssertionError(f"self-closing <{tag}/>")

    def handle_decl(self, decl: str) -> None:
        raise AssertionError(decl)

    def handle_comment(self, data: str) -> None:
        raise AssertionError(data)


def check_telegram_html(markup: str) -> None:
    checker = TelegramHtmlChecker()
    checker.feed(markup)
    checker.close()
    assert checker.stack == [], f"unclosed {checker.stack}"
    # outside tags only the four named entities, and no bare < or >
    text = re.sub(r"<[^<>]*>", "", markup)
    assert "<" not in text and ">" not in text, text
    assert not ENTITY.search(text), text
    for tag in re.findall(r"<[^<>]*>", markup):
        assert not ENTITY.search(tag), tag


def test_checker_rejects_what_telegram_rejects() -> None:
    bad = [
        "<b>x</i>",
        "<b>x",
        "<u>x</u>",
        "a < b",
        "a &nbsp; b",
        "<a href='javascript:x'>x</a>",
        "<b><b>x</b></b>",
        "<a href='http://x'><code>c</code></a>",
        "<b><pre>x</pre></b>",
        "<code><b>x</b></code>",
    ]
    for markup in bad:
        with pytest.raises(AssertionError):
            check_telegram_html(markup)


# --- properties --------------------------------------------------------------------------

SYMBOLS = (
    '* ** *** _ __ ` `` ``` ~~ ~ || | [ ] ( ) # > - + < & \\ --- |---| &amp; " a bc x_y 2 😀 é'
)
LINES = ["\n", "\n\n", " ", "  ", "\t", "\r\n", "# ", "> ", "- ", "+ ", "1. ", "| a |"]
SNIPPETS = ["```python\n", "~~~\n", "[a](https://e.com/x_y)", "](http://q)", "https://x.y/_z_"]
FRAGMENTS = [*SYMBOLS.split(), *LINES, *SNIPPETS]
markdownish = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
markup_chars = st.text(alphabet='*_`~|[]()#>-+\n <&\\aé😀"1.', max_size=60)
anything = st.one_of(markdownish, markup_chars, st.text(max_size=80))


@settings(max_examples=400, deadline=None)
@given(anything)
@example("**a _b** c_")
@example("[**a](http://x) b**")
@example("`a **b` c**")
@example("> ```\n> x\n```")
def test_output_is_always_valid_telegram_html(source: str) -> None:
    check_telegram_html(markdown_to_html(source))


@settings(max_examples=400, deadline=None)
@given(anything)
@example("- " * 20)
@example("---")
@example("```\n```")
def test_visible_text_never_grows(source: str) -> None:
    visible = html_visible_text(markdown_to_html(source))
    assert len(visible) <= len(source)
    assert utf16_len(visible) <= utf16_len(source)
    if source.strip():
        assert visible.strip(), "Telegram rejects an empty message"


NO_MARKUP = st.text(
    alphabet=st.characters(exclude_characters="*_`~|[]\\#>-+\r", codec="utf-8"),
    max_size=120,
)


@settings(max_examples=300, deadline=None)
@given(NO_MARKUP)
@example("a < b & c > d; (x) 1. y \"q\" 'z' https://e.com/?a=1&b=2")
def test_text_without_markup_is_visibly_unchanged(source: str) -> None:
    html = markdown_to_html(source)
    assert html_visible_text(html) == source
    check_telegram_html(html)


@pytest.mark.parametrize(
    "line",
    ["[" * 4000, "[**" * 1300, "*a " * 1300, "`a" * 2000, "**a _b ~~c ||d " * 250, "[a](" * 1000],
)
def test_pathological_lines_stay_fast_and_valid(line: str) -> None:
    html = markdown_to_html(line)  # quadratic scanning would take seconds here
    check_telegram_html(html)
    assert len(html_visible_text(html)) <= len(line)
