"""The memory scanner: prompt injection, secrets and invisible Unicode in text that will reach
a system prompt.
"""

from __future__ import annotations

from memory.scan.scanner import INVISIBLE_CHARS, Finding, pattern, scan

__all__ = ["INVISIBLE_CHARS", "Finding", "pattern", "scan"]
