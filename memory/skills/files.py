"""Skill folders on disk: names, limits, front matter and confined paths.

A skill is a folder ``<root>/[<category>/]<name>/`` holding ``SKILL.md`` (YAML front matter
between ``---`` lines, then the procedure) and optional support files under ``references/``,
``templates/`` and ``scripts/``. This module holds the pure rules (``parse_skill_md``,
``support_parts``, ``name_problem``) and the two I/O primitives every read and write goes
through:

* ``kind_of(path)`` says what a path is with ``lstat``: ``memory.skills.tree.walk_real``
  checks with it, component by component, that a path below a skill is made of real
  directories only: a symlink anywhere (pointing inside or out) is refused, so a skill can
  neither read nor write outside its own folder;
* ``read_text(path, ...)`` opens with ``O_NOFOLLOW``, checks the size on the open
  descriptor before reading, and decodes strict UTF-8.

The symlink checks run just before each open (``lstat`` then ``O_NOFOLLOW``); they defend
against what a model can write, not against a hostile local user racing the gateway.

Every refusal is a ``SkillError`` whose text is written for the model (and the operator):
it says what is wrong and how to fix it, and never repeats the offending content.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "MAX_SKILL_CHARS",
    "MAX_SUPPORT_BYTES",
    "SKILL_FILE",
    "SUPPORT_DIRS",
    "FrontMatter",
    "Kind",
    "SkillError",
    "check_encodable",
    "check_name",
    "kind_of",
    "name_problem",
    "parse_skill_md",
    "read_text",
    "support_parts",
]

SKILL_FILE = "SKILL.md"
SUPPORT_DIRS = ("references", "scripts", "templates")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_CHARS = 100_000
MAX_SUPPORT_BYTES = 1024 * 1024
MAX_SUPPORT_DEPTH = 6  # references/a/b/c/d/file.md at most

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_PART_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_FENCE = "---"

Kind = Literal["missing", "dir", "file", "symlink", "other"]


class SkillError(Exception):
    """A refused skill operation; ``str(exc)`` is a clear reason a model can act on."""


# -- names ------------------------------------------------------------------------------


def name_problem(value: object, what: str = "name") -> str | None:
    """Why ``value`` is not a valid skill (or category) name, or None if it is."""
    if not isinstance(value, str) or not value:
        return f"{what} must be a non-empty string"
    if len(value) > MAX_NAME:
        return f"{what} is {len(value)} chars; at most {MAX_NAME} are allowed"
    if not _NAME_RE.fullmatch(value):
        return (
            f"{what} {value!r} is not allowed: use lower-case letters, digits, '.', '_' and '-',"
            " starting with a letter or digit (for example deploy-app)"
            if value.isprintable()
            else f"{what} contains control or invisible characters"
        )
    return None


def check_name(value: object, what: str = "name") -> str:
    problem = name_problem(value, what)
    if problem is not None:
        raise SkillError(f"Invalid skill {problem}.")
    assert isinstance(value, str)
    return value


def check_encodable(text: str, what: str) -> None:
    """Refuse text that cannot be stored as UTF-8 (lone surrogates from a JSON escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SkillError(
            f"{what} contains an invalid character (a lone surrogate at position {exc.start});"
            " nothing was written."
        ) from None


# -- front matter -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrontMatter:
    name: str
    description: str
    tags: tuple[str, ...]
    version: str | None
    platforms: tuple[str, ...]
    body: str


def parse_skill_md(text: str) -> FrontMatter:
    """Parse and validate a whole SKILL.md; ``SkillError`` names the first problem.

    Unknown front-matter keys (``license``, ``metadata``, …, as in skills written for other
    agents) are allowed and ignored.
    """
    if len(text) > MAX_SKILL_CHARS:
        raise SkillError(
            f"SKILL.md is {len(text):,} chars; at most {MAX_SKILL_CHARS:,} are allowed. Move "
            "long reference material into references/ files."
        )
    lines = text.split("\n")
    if lines[0].rstrip("\r") != _FENCE:
        raise SkillError(
            "SKILL.md must start with YAML front matter: a line '---', then 'name: …' and "
            "'description: …', then a closing '---' line, then the instructions."
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r") in (_FENCE, "...")), None)
    if end is None:
        raise SkillError("SKILL.md front matter is not closed: add a '---' line after it.")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.MarkedYAMLError as exc:
        where = ""
        if exc.problem_mark is not None:
            mark = exc.problem_mark
            where = f" (line {mark.line + 2}, column {mark.column + 1})"
        raise SkillError(
            f"SKILL.md front matter is not valid YAML: {exc.problem}{where}."
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise SkillError(
            f"SKILL.md front matter is not valid YAML ({type(exc).__name__})."
        ) from None
    if not isinstance(meta, dict):
        raise SkillError("SKILL.md front matter must be a YAML mapping (name: …, description: …).")
    name = meta.get("name")
    if name is None:
        raise SkillError("SKILL.md front matter is missing 'name'.")
    problem = name_problem(name, "front-matter name")
    if problem is not None:
        raise SkillError(f"SKILL.md {problem}.")
    description = meta.get("description")
    if description is None:
        raise SkillError("SKILL.md front matter is missing 'description'.")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("SKILL.md 'description' must be a non-empty string.")
    description = description.strip()
    if "\n" in description or "\r" in description:
        raise SkillError(
            "SKILL.md 'description' must be one line: say when to use the skill in a sentence."
        )
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(
            f"SKILL.md 'description' is {len(description):,} chars; at most "
            f"{MAX_DESCRIPTION:,} are allowed."
        )
    version = meta.get("version")
    if version is not None and not isinstance(version, str):
        raise SkillError("SKILL.md 'version' must be a string: quote it, e.g. version: \"1.0\".")
    body = "\n".join(lines[end + 1 :])
    return FrontMatter(
        name=name,
        description=description,
        tags=_strings(meta, "tags"),
        version=version,
        platforms=_strings(meta, "platforms"),
        body=body.lstrip("\r\n").rstrip(),
    )


def _strings(meta: dict[Any, Any], key: str) -> tuple[str, ...]:
    value = meta.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SkillError(
            f"SKILL.md '{key}' must be a list of non-empty strings, e.g. {key}: [a, b]."
        )
    return tuple(value)


# -- support-file paths -------------------------------------------------------------------


def support_parts(file_path: object) -> tuple[str, ...]:
    """The components of a support-file path, or ``SkillError`` if it could leave the folder."""
    if not isinstance(file_path, str) or not file_path:
        raise SkillError("file_path must be a non-empty relative path like 'references/api.md'.")
    if file_path.startswith(("/", "\\", "~")) or (len(file_path) > 1 and file_path[1] == ":"):
        raise SkillError(
            "file_path must be relative to the skill's folder (like 'references/api.md'), "
            "not an absolute path."
        )
    if "\\" in file_path:
        raise SkillError("file_path must use '/' between folders.")
    parts = tuple(file_path.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise SkillError(
            "file_path may not contain '..', '.' or empty components: support files stay "
            "inside the skill's own folder."
        )
    if parts[0] not in SUPPORT_DIRS or len(parts) < 2:
        raise SkillError(
            "Support files live under references/, templates/ or scripts/ "
            "(e.g. 'references/api.md'); SKILL.md itself is changed with edit or patch."
        )
    if len(parts) > MAX_SUPPORT_DEPTH:
        raise SkillError(f"file_path is nested too deeply (at most {MAX_SUPPORT_DEPTH} levels).")
    for part in parts[1:]:
        if not _PART_RE.fullmatch(part):
            raise SkillError(
                "file_path components may use letters, digits, '.', '_' and '-' only, and may "
                "not start with '.' or '-' (at most 128 chars each)."
            )
    return parts


# -- confined I/O -------------------------------------------------------------------------


def kind_of(path: Path) -> Kind:
    """What ``path`` itself is, without following a symlink."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return "missing"
    except NotADirectoryError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def read_text(path: Path, *, max_bytes: int, label: str, limit_text: str) -> str:
    """Read a regular, non-symlink file as strict UTF-8 (a leading BOM is dropped)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise SkillError(f"{label} does not exist.") from None
    except OSError as exc:
        if kind_of(path) == "symlink":
            raise SkillError(
                f"{label} is a symbolic link; skills only use real files inside their own folder."
            ) from None
        raise SkillError(f"{label} cannot be read ({exc.strerror}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkillError(f"{label} is not a regular file.")
        if info.st_size > max_bytes:
            raise SkillError(f"{label} is {info.st_size:,} bytes; {limit_text}.")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise SkillError(f"{label} is over {max_bytes:,} bytes; {limit_text}.")
    finally:
        os.close(fd)
    return decoded(b"".join(chunks), label)


def decoded(raw: bytes, label: str) -> str:
    """``raw`` as strict UTF-8 text, a leading BOM dropped (``SkillError`` naming ``label``
    and the first bad byte otherwise)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(
            f"{label} is not UTF-8 text (invalid byte at offset {exc.start})."
        ) from None
    return text.removeprefix("\ufeff")
