"""What a config value must look like, and how to talk about a bad one without leaking it.

The annotated types here carry their own validation, so a field gets it by its type alone:

- ``EnvName`` (every ``*_env`` field): the NAME of an environment variable. A value that
  looks like a secret (``looks_like_secret``, or anything with a long tail after a ``:``)
  is refused with "this looks like a token itself: …", anything else that is not a name
  with a plain explanation; neither message ever contains the value.
- ``HttpURL``, ``HttpsURL``, ``WebSocketURL``: absolute URLs with a host, of the allowed
  schemes, with no whitespace and no ``user:password@`` part; a message never quotes the
  URL (it may carry a token in its path).
- ``platform_id`` (before-validator of ``gateway.config.schema.Id``): a chat or user id is an
  integer (Telegram group ids are negative) or ``"*"``; ``admin_entry(platforms)``:
  ``<platform>:<numeric user id>``.

A refusal is a ``PydanticCustomError`` of type ``PROBLEM`` whose message is complete and
safe to print; ``gateway.config.schema`` prints it after the file, line and key path. ``quote``
and ``describe`` are the only ways a rejected value is quoted: they say "a value that looks
like a secret (not shown)" instead of quoting one.

``UniqueKeyLoader`` is a ``yaml.SafeLoader`` that refuses a key repeated in one mapping
(``DuplicateKeyError``, with both line numbers); ``key_lines`` maps every key path of a
composed document to the line it is on, so errors can name the line.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Callable, Sequence
from typing import Annotated, Any
from urllib.parse import urlsplit

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

from memory.scan import pattern

__all__ = [
    "PROBLEM",
    "DuplicateKeyError",
    "EnvName",
    "HttpURL",
    "HttpsURL",
    "Section",
    "UniqueKeyLoader",
    "WebSocketURL",
    "admin_entry",
    "describe",
    "key_lines",
    "kind",
    "looks_like_secret",
    "platform_id",
    "quote",
]


class Section(BaseModel):
    """A config section: unknown keys refused, frozen, strict types, the attribute
    docstrings kept (``mnemo config example`` prints them)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True
    )


PROBLEM = "mnemo_config"
"""The pydantic error type of every refusal made here (its message is safe to print)."""

MAX_ENV_NAME = 128
MAX_URL = 2048
PASTED = "this looks like a token itself: put the NAME of an environment variable here"

# -- secrets ---------------------------------------------------------------------------------

# memory.scan.scanner's credential table (sk-… keys, bot tokens, GitHub/AWS/Slack/Google keys,
# private-key blocks, password=…), the same one gateway.logs redacts with
_CREDENTIALS = pattern("hardcoded-secret").regex
# a key prefix, then a long body with digits and lower case (not an upper-case NAME_LIKE_THIS):
# sk-…, sk-proj-…, ghp_…, github_pat_…, xoxb-…, glpat-…, hf_…, gsk_…, xai-…, npm_…
_PREFIXED = re.compile(
    r"(?:sk|rk|pk|gh[pousr]|github_pat|xox[abposre]|glpat|hf|gsk|xai|npm)[-_]"
    r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[a-z])[A-Za-z0-9_-]{16,}"
)
_BOT_TOKEN = re.compile(r"(?<![A-Za-z0-9])[0-9]{5,}:[A-Za-z0-9_-]{20,}")  # 123456789:AAH…
_COLON_TAIL = re.compile(r":[^\s:]{16,}")  # id:secret, user:password, bot tokens
_DOTTED = re.compile(r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}")  # Discord, JWT
_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def looks_like_secret(text: str) -> bool:
    """Whether ``text`` is shaped like a credential rather than a name.

    A known key prefix or credential shape, a bot token (digits, ``:``, a long tail), three
    dot-separated token parts, or a long run of letters and digits that looks random (digits
    and letters interleaved, or lower case, upper case and digits all mixed): names such as
    ``TELEGRAM_BOT_TOKEN`` or ``MY_KEY_2024`` have none of these.
    """
    if _CREDENTIALS.search(text) or _PREFIXED.match(text):
        return True
    if _BOT_TOKEN.search(text) or _DOTTED.search(text):
        return True
    return any(_random_looking(run) for run in _RUN.findall(text))


def _random_looking(run: str) -> bool:
    classes = [
        any(c in string.ascii_lowercase for c in run),
        any(c in string.ascii_uppercase for c in run),
        any(c in string.digits for c in run),
    ]
    if all(classes) and len(run) >= 20:
        return True
    switches = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(run))
    return switches >= 4


def quote(value: Any) -> str:
    """``repr(value)`` for an error line, unless it looks like a secret."""
    if isinstance(value, str) and looks_like_secret(value):
        return "a value that looks like a secret (not shown)"
    return repr(value)


def describe(value: Any) -> str:
    """A rejected value for an error line: its kind and ``quote``; only the kind for a whole
    list or mapping (the line number says where it is)."""
    if isinstance(value, str) and looks_like_secret(value):
        return quote(value)
    if isinstance(value, (list, dict)):
        return kind(value)
    return f"{kind(value)} {value!r}"


def kind(value: Any) -> str:
    """The kind of a YAML value in words: "an integer", "a string", "nothing", …"""
    if value is None:
        return "nothing"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _refuse(message: str) -> PydanticCustomError:
    return PydanticCustomError(PROBLEM, "{reason}", {"reason": message})


# -- environment variable names ----------------------------------------------------------------

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _env_name(value: str) -> str:
    if looks_like_secret(value) or _COLON_TAIL.search(value):
        raise _refuse(PASTED)
    if not value.strip():
        raise _refuse(
            "is empty: put the NAME of an environment variable here (e.g. TELEGRAM_BOT_TOKEN)"
        )
    if len(value) > MAX_ENV_NAME or not _ENV_NAME.fullmatch(value):
        raise _refuse(
            "is not an environment variable name: letters, digits and _, not starting with"
            f" a digit, at most {MAX_ENV_NAME} characters (e.g. TELEGRAM_BOT_TOKEN)"
        )
    return value


EnvName = Annotated[str, AfterValidator(_env_name)]
"""The NAME of an environment variable (every ``*_env`` field); the value stays there."""


# -- URLs --------------------------------------------------------------------------------------


def _url(schemes: Sequence[str], example: str) -> Callable[[str], str]:
    wanted = " or ".join(f"{scheme}://" for scheme in schemes)

    def check(value: str) -> str:
        if any(c.isspace() or not c.isprintable() for c in value):
            raise _refuse(
                "a URL may not contain whitespace or control characters;"
                f" expected one like {example}"
            )
        if len(value) > MAX_URL:
            raise _refuse(f"is longer than {MAX_URL} characters; expected a URL like {example}")
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port that is not one
        except ValueError:
            raise _refuse(f"is not a valid URL; expected one like {example}") from None
        if "@" in parts.netloc:
            raise _refuse(
                "must not carry credentials (user:password@…): keep secrets in the"
                " environment, never in config.yaml"
            )
        if parts.scheme.lower() not in schemes or "://" not in value:
            found = (  # "host:8080/v1" is read as the scheme "host": that is no scheme to us
                f"the scheme {parts.scheme}://"
                if value.lower().startswith(f"{parts.scheme}://") and len(parts.scheme) <= 16
                else "no scheme"
            )
            raise _refuse(f"expected an absolute {wanted} URL, e.g. {example}; found {found}")
        if not parts.hostname:
            raise _refuse(f"has no host; expected a URL like {example}")
        return value

    return check


HttpURL = Annotated[str, AfterValidator(_url(("http", "https"), "http://127.0.0.1:8080/v1"))]
HttpsURL = Annotated[str, AfterValidator(_url(("https",), "https://bot.example.com/telegram"))]
WebSocketURL = Annotated[str, AfterValidator(_url(("ws", "wss"), "ws://127.0.0.1:3000/gateway"))]


# -- ids ---------------------------------------------------------------------------------------

_ID = re.compile(r"-?[0-9]{1,20}")
_ADMIN = re.compile(r"(?P<platform>[a-z]+):(?P<id>\S+)")


def platform_id(value: Any) -> Any:
    """A chat or user id: an integer (YAML reads ``123`` as one; kept as text) or ``"*"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and (value == "*" or _ID.fullmatch(value)):
        return value
    raise _refuse(
        f'expected a numeric id (Telegram group ids are negative) or "*", got {describe(value)}'
    )


def admin_entry(platforms: Sequence[str]) -> Callable[[str], str]:
    """The check of a ``gateway.admins`` entry: ``<platform>:<numeric user id>``."""

    def check(value: str) -> str:
        shown = quote(value)
        match = _ADMIN.fullmatch(value)
        if match is None:
            raise _refuse(f"{shown} is not platform:id (e.g. telegram:123456789)")
        if match["platform"] not in platforms:
            raise _refuse(f"{shown} names an unknown platform (known: {', '.join(platforms)})")
        if not re.fullmatch(r"[0-9]{1,20}", match["id"]):
            raise _refuse(
                f"{shown} has a non-numeric id: {match['platform']} identifies people by their"
                " numeric user id, not their @username"
            )
        return value

    return check


# -- YAML --------------------------------------------------------------------------------------


class DuplicateKeyError(yaml.YAMLError):
    """A key given twice in one mapping; ``line`` and ``first`` are 1-based."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(f"line {line}: duplicate key (first at line {first})")
        self.key = key
        self.line = line
        self.first = first

    def describe_key(self) -> str:
        if isinstance(self.key, str) and looks_like_secret(self.key):
            return "(a key that looks like a secret)"
        return repr(self.key)


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key repeated in one mapping, at any depth (PyYAML
    would silently keep the last one). Keys merged in with ``<<`` may still be overridden."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise DuplicateKeyError(key, line, seen[key])
                seen[key] = line
            except TypeError:  # an unhashable key: SafeLoader says so itself
                continue
        return super().construct_mapping(node, deep=deep)


def key_lines(node: yaml.Node | None) -> dict[tuple[str, ...], int]:
    """Every key path (list items by index) of a composed document -> its 1-based line.

    A node reached again through an alias is not walked again (an alias may even nest a
    node in itself): errors under it name the line of the key that holds the alias."""
    lines: dict[tuple[str, ...], int] = {}
    seen: set[int] = set()

    def walk(node: yaml.Node, path: tuple[str, ...]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    here = (*path, str(key_node.value))
                    lines.setdefault(here, key_node.start_mark.line + 1)
                    walk(value_node, here)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                here = (*path, str(index))
                lines.setdefault(here, item.start_mark.line + 1)
                walk(item, here)

    if node is not None:
        walk(node, ())
    return lines
