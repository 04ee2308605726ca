"""Person ids as operators and admins type them.

Config and chat name people ``telegram:5001`` (``Identity.qualified``); memory folders and
the archive name them ``telegram-5001`` (``Identity.person``), and a group's own store
``telegram-chat--100123``. ``parse_person`` takes either spelling, always with the platform
(``5001`` alone could be anyone's), and answers with the accepted forms when it cannot.
"""

from __future__ import annotations

import argparse
import re

from adapters.messages import label
from gateway import platforms

__all__ = ["PLATFORMS", "parse_person", "person_option"]

PLATFORMS = (*platforms.PLATFORMS, "console")  # `mnemo chat` people too
_ID = re.compile(r"[a-z0-9._-]{1,100}")


def parse_person(text: str) -> str:
    """``telegram:5001`` or ``telegram-5001`` -> ``telegram-5001``; ``ValueError`` naming the
    accepted forms otherwise (``shared`` is the one store of ``memory.scope: shared``)."""
    candidate = text.strip().lower()
    if candidate == "shared":
        return candidate
    platform, separator, rest = candidate.partition(":")
    if not separator:
        platform, separator, rest = candidate.partition("-")
    if platform in PLATFORMS and separator and _ID.fullmatch(rest):
        return f"{platform}-{rest}"
    raise ValueError(
        f"unknown person {label(text)!r}: write PLATFORM:ID or PLATFORM-ID, e.g. telegram:5001"
        f" or telegram-5001 ({', '.join(PLATFORMS)}; a group's own memory:"
        " telegram-chat--100123)"
    )


def person_option(text: str) -> str:
    """``parse_person`` as an argparse ``type`` (``--person telegram:5001``): a bad one is
    a usage error naming the accepted forms."""
    try:
        return parse_person(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
