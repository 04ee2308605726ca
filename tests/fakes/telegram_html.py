"""Telegram's ``parse_mode=HTML`` parser, as the fake Bot API needs it.

A port of the rules of TDLib's ``parse_html`` (``td/telegram/MessageEntity.cpp``), which is
what the Bot API server runs, so the fake rejects what Telegram rejects and with the same
words::

    text, entities = parse_html("<b>hi</b> &amp; bye")   # "hi & bye", [bold 0..2]
    parse_html("<br>")    # HtmlError('Unsupported start tag "br" at byte offset 0')

- Supported tags: ``b strong i em u ins s strike del a code pre blockquote tg-spoiler
  tg-emoji span`` (``span`` only with ``class="tg-spoiler"``, ``tg-emoji`` only with an
  ``emoji-id``). Anything else is ``Unsupported start tag "x" at byte offset N``; a ``<``
  that does not open a tag (``a < b``) is an unsupported start tag with an empty name.
- Tags must nest properly: ``Unexpected end tag``, ``Unmatched end tag ... expected "</b>",
  found "</i>"``, ``Can't find end tag corresponding to start tag "b"``, ``Unclosed start
  tag``/``Unclosed end tag``, ``Empty attribute name``, ``Expected equal sign``.
- Character references, exactly as TDLib: ``&lt; &gt; &amp; &quot;`` and numeric ones
  (``&#60;``, ``&#x3C;``), the ``;`` optional. An unknown or malformed reference is *not* an
  error: it stays literal text (``AT&T`` shows as ``AT&T``).

Offsets in the returned entities are UTF-16 code units, as the Bot API counts them. Byte
offsets in error messages are UTF-8 bytes, as TDLib reports them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HtmlError", "parse_html", "trim", "utf16_len"]

_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "code",
        "pre",
        "blockquote",
        "tg-spoiler",
        "tg-emoji",
        "span",
    }
)
_ENTITY_TYPE = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "a": "text_link",
}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_SPACE = " \t\r\n"


class HtmlError(ValueError):
    """The text is not Telegram HTML; ``str(error)`` is TDLib's own wording."""


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _decode_reference(text: str, pos: int) -> tuple[str, int] | None:
    """The character a reference at ``text[pos] == '&'`` stands for, and the index after it."""
    end = pos + 1
    if text.startswith("#", end):
        end += 1
        digits_start = end
        if text.startswith(("x", "X"), end):
            end += 1
            digits_start = end
            while end < len(text) and text[end] in "0123456789abcdefABCDEF":
                end += 1
            base = 16
        else:
            while end < len(text) and text[end].isdigit() and text[end].isascii():
                end += 1
            base = 10
        digits = text[digits_start:end]
        if not digits or end - pos >= 10:
            return None
        value = int(digits, base)
        if value == 0 or value >= 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            return None
        char = chr(value)
    else:
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        named = _NAMED.get(text[pos + 1 : end])
        if named is None:
            return None
        char = named
    if text.startswith(";", end):
        end += 1
    return char, end


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _attribute_value(text: str, i: int, tag: str, begin: int) -> tuple[str, int]:
    quote = text[i] if i < len(text) else ""
    if quote in ("'", '"'):
        i += 1
        value: list[str] = []
        while i < len(text) and text[i] != quote:
            if text[i] == "&" and (decoded := _decode_reference(text, i)) is not None:
                value.append(decoded[0])
                i = decoded[1]
            else:
                value.append(text[i])
                i += 1
        if i >= len(text):
            raise HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
        return "".join(value), i + 1
    start = i
    while i < len(text) and (text[i].isalnum() or text[i] in ".-") and text[i].isascii():
        i += 1
    if i == start:
        raise HtmlError(
            f'Expected quote in declaration of an attribute of the tag "{tag}" at byte offset '
            f"{_byte_offset(text, i)}"
        )
    return text[start:i], i


def _start_tag(text: str, begin: int) -> tuple[str, dict[str, str], int]:
    """Parse ``<name attr="v" ...>`` at ``begin``; the name, attributes and index after it."""
    i = begin + 1
    while i < len(text) and text[i] not in _SPACE and text[i] != ">":
        i += 1
    if i >= len(text):
        raise HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
    tag = text[begin + 1 : i].lower()
    if tag not in _TAGS:
        raise HtmlError(f'Unsupported start tag "{tag}" at byte offset {_byte_offset(text, begin)}')
    attributes: dict[str, str] = {}
    while i < len(text) and text[i] != ">":
        while i < len(text) and text[i] in _SPACE:
            i += 1
        if i >= len(text) or text[i] == ">":
            break
        name, value, i = _attribute(text, i, tag, begin)
        attributes.setdefault(name, value)
    if i >= len(text):
        raise HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
    if tag == "span" and attributes.get("class") != "tg-spoiler":
        raise HtmlError(
            f'Tag "span" must have class "tg-spoiler" at byte offset {_byte_offset(text, begin)}'
        )
    if tag == "tg-emoji" and not attributes.get("emoji-id", "").isdigit():
        raise HtmlError(
            f'Tag "tg-emoji" must have attribute "emoji-id" at byte offset '
            f"{_byte_offset(text, begin)}"
        )
    return tag, attributes, i + 1


def _attribute(text: str, i: int, tag: str, begin: int) -> tuple[str, str, int]:
    """One ``name="value"`` (or bare ``name``) of the tag opened at ``begin``, read from
    ``i``; its name, value and the index after it."""
    name_start = i
    while i < len(text) and text[i] not in _SPACE and text[i] not in "=>":
        i += 1
    name = text[name_start:i].lower()
    if not name:
        raise HtmlError(
            f'Empty attribute name in the tag "{tag}" at byte offset {_byte_offset(text, i)}'
        )
    while i < len(text) and text[i] in _SPACE:
        i += 1
    if i < len(text) and text[i] == "=":
        i += 1
        while i < len(text) and text[i] in _SPACE:
            i += 1
        if i >= len(text):
            raise HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
        value, i = _attribute_value(text, i, tag, begin)
        return name, value, i
    if i < len(text) and (text[i] == ">" or text[i].isalpha()):
        return name, "", i  # a bare attribute, such as <blockquote expandable>
    if i >= len(text):
        raise HtmlError(f"Unclosed start tag at byte offset {_byte_offset(text, begin)}")
    raise HtmlError(
        f'Expected equal sign in declaration of an attribute of the tag "{tag}" at '
        f"byte offset {_byte_offset(text, i)}"
    )


def parse_html(text: str) -> tuple[str, list[dict[str, Any]]]:
    """The visible text of Telegram HTML ``text`` and its entities (Bot API dicts)."""
    out: list[str] = []
    position = 0  # UTF-16 length of `out`
    # (tag, attributes, UTF-16 offset where it started)
    stack: list[tuple[str, dict[str, str], int]] = []
    entities: list[dict[str, Any]] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "&":
            decoded = _decode_reference(text, i)
            visible, i = decoded if decoded is not None else ("&", i + 1)
            out.append(visible)
            position += utf16_len(visible)
            continue
        if char != "<":
            out.append(char)
            position += utf16_len(char)
            i += 1
            continue
        begin = i
        if not text.startswith("/", i + 1):
            tag, attributes, i = _start_tag(text, begin)
            stack.append((tag, attributes, position))
            continue
        i += 2
        while i < len(text) and text[i] not in _SPACE and text[i] != ">":
            i += 1
        end_tag = text[begin + 2 : i].lower()
        while i < len(text) and text[i] in _SPACE:
            i += 1
        if i >= len(text) or text[i] != ">":
            raise HtmlError(f"Unclosed end tag at byte offset {_byte_offset(text, begin)}")
        i += 1
        if not stack:
            raise HtmlError(f"Unexpected end tag at byte offset {_byte_offset(text, begin)}")
        tag, attributes, start = stack.pop()
        if end_tag != tag:
            raise HtmlError(
                f"Unmatched end tag at byte offset {_byte_offset(text, begin)}, "
                f'expected "</{tag}>", found "</{end_tag}>"'
            )
        _close(
            tag=tag,
            attributes=attributes,
            start=start,
            end=position,
            stack=stack,
            entities=entities,
        )
    if stack:
        raise HtmlError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _close(
    *,
    tag: str,
    attributes: dict[str, str],
    start: int,
    end: int,
    stack: list[tuple[str, dict[str, str], int]],
    entities: list[dict[str, Any]],
) -> None:
    if end <= start:
        return  # Telegram drops empty entities
    entity: dict[str, Any] = {"type": _ENTITY_TYPE[tag], "offset": start, "length": end - start}
    if tag == "a":
        url = attributes.get("href", "").strip()
        if not url:
            return  # a link without a usable URL is plain text
        entity["url"] = url
    elif tag == "tg-emoji":
        entity["custom_emoji_id"] = attributes["emoji-id"]
    elif tag == "blockquote" and "expandable" in attributes:
        entity["type"] = "expandable_blockquote"
    elif tag == "code":
        language = attributes.get("class", "")
        parent = stack[-1] if stack else None
        # <pre><code class="language-x">: the language of the pre, not an entity of its own
        if (
            language.startswith("language-")
            and parent
            and parent[0] == "pre"
            and parent[2] == start
        ):
            parent[1].setdefault("language", language.removeprefix("language-"))
            return
    if tag == "pre" and attributes.get("language"):
        entity["language"] = attributes["language"]
    entities.append(entity)


def trim(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Strip surrounding whitespace as Telegram does, moving and clipping the entities."""
    stripped = text.strip(_SPACE)
    if not stripped:
        return "", []
    left = utf16_len(text[: len(text) - len(text.lstrip(_SPACE))])
    size = utf16_len(stripped)
    kept: list[dict[str, Any]] = []
    for entity in entities:
        start = max(0, entity["offset"] - left)
        end = min(size, entity["offset"] + entity["length"] - left)
        if end > start:
            kept.append({**entity, "offset": start, "length": end - start})
    return stripped, kept
