"""The root of curated memory's exceptions (a module of its own: every other module of
``memory.curated`` derives from it, and it imports none of them).

Errors::

    MemoryStoreError
    ├── ContentError     content that can never be one entry (memory.curated.entries)
    ├── NoMatch          no entry contains the text (memory.curated.entries)
    ├── AmbiguousMatch   several different entries do (memory.curated.entries)
    └── Refusal          a recoverable failure, answered as ``Refused`` (operations)

A person id that is not a safe directory name is ``memory.people.InvalidPersonError``,
shared with the archive.
"""

from __future__ import annotations

__all__ = ["MemoryStoreError"]


class MemoryStoreError(Exception):
    """Base of curated memory's exceptions."""
