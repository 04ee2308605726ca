"""The archive benchmark's knobs and its progress output, shared by every ``archive_*``
module: the data set's shape (year, vocabulary size, shares of CJK and group sessions), the
loaders' batch size, the search limits, the issue's targets, ``log`` (a timestamped line on
stderr) and ``Progress`` (rate-limited progress lines for long loops). Standard library
only, no imports from the other modules of the benchmark.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

# -- knobs ----------------------------------------------------------------------------------


def words_of(text: str) -> list[str]:
    """A whitespace-separated word list written as one string (long lists stay readable)."""
    return text.split()


YEAR_START = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
YEAR_SECONDS = 365 * 86_400
VOCAB_SIZE = 8_000  # English-like words; Zipf-distributed
CJK_SESSION_SHARE = 0.055  # sessions held in Japanese / Chinese (≈5% of all messages)
GROUP_SESSION_SHARE = 0.06  # group chats: 2-4 people, later ones join mid-session
ACTIVE_SESSIONS = 64  # sessions interleaved in the ingest stream at any moment
SAMPLES = 4_000  # user messages remembered to derive realistic queries from
BATCH_MESSAGES = 10_000  # rows per transaction for the executemany loaders
SEARCH_LIMIT = 3  # what the model asks for by default
BASELINE_LIMIT = 24  # = the archive's own over-fetch (max(limit * 8, 24))
PROGRESS_EVERY = 5.0  # seconds between progress lines

TARGET_INGEST = 20_000.0
TARGET_SCOPED_P50 = 10.0
TARGET_SCOPED_P95 = 40.0
TARGET_CJK_SCOPED_P50 = 20.0  # issue 13: a 2-character CJK term, person-scoped


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


class Progress:
    """Rate-limited progress lines on stderr."""

    def __init__(self, label: str, total: int) -> None:
        self.label = label
        self.total = max(1, total)
        self.start = time.perf_counter()
        self.last = self.start

    def update(self, done: int) -> None:
        done = min(done, self.total)
        now = time.perf_counter()
        if now - self.last < PROGRESS_EVERY and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else 0.0
        log(
            f"{self.label}: {done:,}/{self.total:,} ({100 * done / self.total:.0f}%),"
            f" {rate:,.0f}/s, eta {eta:,.0f}s"
        )
