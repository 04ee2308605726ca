"""What every ``mnemo`` command shares, kept apart from the command modules so that none of
them imports another (and ``gateway.cli`` can import them all without a cycle)."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """Bad arguments found after parsing (exit status 2)."""
