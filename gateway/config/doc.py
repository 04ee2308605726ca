"""The commented ``config.yaml``, generated from the schema in ``gateway.config.schema``.

``commented_config()`` walks ``Config.model_fields`` recursively and writes every key with
its default value (as YAML) under a comment made of the field's attribute docstring, its
allowed values (``Literal``) and its bounds (``Field(gt=…, le=…)``). Because the text is
derived from the code, it cannot drift from it: ``mnemo init`` writes it, ``mnemo config
example`` prints it, ``deploy/config.example.yaml`` is a copy of it, and a test checks that
it loads back to exactly ``Config()``.

Keys are written *active* (not commented out) so editing one is changing a value; a key
deleted from the file falls back to the same built-in default. The comments speak YAML, like
the values under them: a docstring's ``None``, ``True`` and ``False`` are written ``null``,
``true`` and ``false``.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Literal, get_args, get_origin

import annotated_types
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from gateway.config.schema import Config

__all__ = ["HEADER", "commented_config", "key_paths"]

WIDTH = 100
INDENT = "  "

HEADER = """\
mnemo configuration: every key, its default value and what it means.
Delete a key (or this whole file) to use the built-in default. Secrets never go here:
a platform names the environment variable that holds its token (token_env), and the model
names the one that holds its API key (model.api_key_env).
Check the file and the environment with `mnemo config check`. `mnemo config example`
prints this text with the defaults of the installed version; the repository copy is
regenerated with: python -m gateway config example > deploy/config.example.yaml
"""


def commented_config() -> str:
    """The full commented YAML for ``Config``; it loads to exactly ``Config()``."""
    lines = [_comment(line, 0) for line in HEADER.splitlines()]
    _section(Config, 0, lines)
    return "\n".join(lines) + "\n"


def key_paths(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every leaf key of the tree as a dotted path, e.g. ``platforms.telegram.mode``."""
    paths: list[str] = []
    for name, field in model.model_fields.items():
        sub = _submodel(field)
        if sub is None:
            paths.append(prefix + name)
        else:
            paths.extend(key_paths(sub, f"{prefix}{name}."))
    return paths


def _section(model: type[BaseModel], depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for name, field in model.model_fields.items():
        sub = _submodel(field)
        if sub is None:
            lines.extend(_wrap(_meaning(field), depth))
            lines.append(f"{pad}{name}: {_scalar(field.get_default(call_default_factory=True))}")
            continue
        if lines and not lines[-1].endswith(":"):
            lines.append("")  # a blank line before a section, unless it opens its parent
        about = field.description or sub.__dict__.get("__doc__")
        if about:
            lines.extend(_wrap(_clean(about), depth))
        lines.append(f"{pad}{name}:")
        _section(sub, depth + 1, lines)


def _submodel(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _meaning(field: FieldInfo) -> str:
    text = _clean(field.description or "")
    extras = []
    if get_origin(field.annotation) is Literal:
        extras.append("one of: " + ", ".join(str(choice) for choice in get_args(field.annotation)))
    extras.extend(_bound(item) for item in field.metadata if _bound(item))
    if extras:
        text = f"{text} ({'; '.join(extras)})" if text else f"({'; '.join(extras)})"
    return text


def _bound(item: object) -> str:
    for kind, symbol in (
        (annotated_types.Gt, ">"),
        (annotated_types.Ge, ">="),
        (annotated_types.Lt, "<"),
        (annotated_types.Le, "<="),
    ):
        if isinstance(item, kind):
            return f"{symbol} {_scalar(getattr(item, kind.__name__.lower()))}"
    return ""


_YAML_WORDS = {"None": "null", "True": "true", "False": "false"}


def _clean(text: str) -> str:
    """One paragraph: docstring line breaks joined, reST ``literals`` as `literals`, Python's
    constants as YAML's."""
    text = re.sub(r"``([^`]+)``", r"`\1`", " ".join(text.split()))
    return re.sub(r"\b(None|True|False)\b", lambda m: _YAML_WORDS[m[1]], text)


def _wrap(text: str, depth: int) -> list[str]:
    if not text:
        return []
    prefix = INDENT * depth + "# "
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=prefix,
        subsequent_indent=prefix,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _comment(line: str, depth: int) -> str:
    return (INDENT * depth + "# " + line).rstrip()


def _scalar(value: Any) -> str:
    """A default as one line of YAML flow syntax (quoted when YAML would misread it)."""
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6)
    return dumped.removesuffix("\n...\n").strip()
