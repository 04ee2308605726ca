"""Person ids, shared by every part of memory: what a safe, lower-case id looks like; and
what a person is called.

A person id (``telegram-12345``) names a person's memory folder and is recorded with the
archive's sessions and messages, so curated memory and the archive check it the same way
here; neither imports the other for it. ``names_of`` turns a display name into the names a
question about the person may use (``memory.providers.Subject.names``).
"""

from __future__ import annotations

import re

__all__ = ["InvalidPersonError", "is_person_id", "names_of", "validate_person"]

_PERSON_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


class InvalidPersonError(ValueError):
    """A person id that is not a safe, lower-case directory name."""


def is_person_id(name: str) -> bool:
    """Whether ``name`` is a valid person id (a folder that can hold a person's store)."""
    return _PERSON_RE.fullmatch(name) is not None


def validate_person(person: str) -> str:
    """``person`` itself, or ``InvalidPersonError`` saying what a person id looks like."""
    if not is_person_id(person):
        raise InvalidPersonError(
            f"invalid person id {person!r}: use lower-case letters, digits, '.', '_' or '-' "
            "(for example telegram-12345)"
        )
    return person


def names_of(display_name: str) -> tuple[str, ...]:
    """The names a question about a person may call them by, from their display name (as the
    platform gives it): the whole name and, when it has more words, the first ("Maya Lopez"
    -> ("Maya Lopez", "Maya")); none for an empty one. Untrusted text, kept as data."""
    whole = " ".join(display_name.split())
    first = whole.split(" ", 1)[0]
    return tuple(dict.fromkeys(name for name in (whole, first) if name))
