"""A doctor's rows: ``Check`` (one ``check | result | detail`` line), ``guard`` (a check
that crashes is a failed row, not a traceback) and the wording every check shares."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Check", "Result", "counted", "elapsed_ms", "error_text", "guard", "late"]

Result = Literal["ok", "warn", "fail", "skip"]


@dataclass(frozen=True, slots=True)
class Check:
    check: str
    result: Result
    detail: str


async def guard(name: str, work: Awaitable[list[Check]]) -> list[Check]:
    try:
        return await work
    except Exception as exc:  # a doctor reports a crashing check, it does not crash
        return [Check(name, "fail", f"the check itself failed: {error_text(exc)}")]


def error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def late(timeout_s: float) -> str:
    return f"no answer within {timeout_s:g} s"


def elapsed_ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


def counted(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
