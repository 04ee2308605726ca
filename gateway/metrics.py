"""Operational metrics: one ``Metrics`` object, a private Prometheus registry, typed recorders.

The gateway holds one ``Metrics`` and calls its recorders where things happen (a turn ends,
the model reports usage or fails, a review finishes). ``gateway/ops_http.py`` serves
``render()`` on ``/metrics``. Design choices:

- **A private ``CollectorRegistry``**, never prometheus_client's global ``REGISTRY``: two
  gateways in one process (the tests start many) keep separate counts, and nothing another
  library registers leaks into our exposition. The standard ``process_*`` collector is added
  (resident memory and open file descriptors are what a months-long process is watched for);
  pass ``process=False`` to leave it out.
- **Recorders are cheap and never raise.** Metrics must not break a turn: negative numbers are
  clamped to zero and anything unexpected is logged and swallowed.
- **State that already lives elsewhere is sampled, not mirrored.** Queue depth, outbox
  backlog, archive size, live sessions and memory usage are gauges the ``refresh`` callback
  of the HTTP server sets just before a scrape (``set_*``), so no code path has to keep a
  second count in step. Skipped updates are counted by each adapter (``Adapter.skipped``)
  and read at collection time (``watch_skips``): the counter is the adapter's own number,
  exported as it is whenever anything reads the registry, refresh or not.
- **No person in any label.** Memory usage is exported as the max and the sum over stores
  per file (plus the number of stores): one series per person would tell anyone who can
  scrape the endpoint who talks to the bot, and grow without bound. Labels are small fixed
  sets: platform name, outcome, token kind, error kind (pass an exception class name or a
  fixed word, never a message).

Metric names (counters get ``_total`` in the exposition)::

    mnemo_turns_total{platform,outcome}      outcome: ok | error | command
    mnemo_turn_seconds{platform}              histogram, 0.05 s … 120 s
    mnemo_model_tokens_total{kind}            kind: prompt | cached | completion
    mnemo_model_errors_total{kind}            kind: unavailable | invalid_response | rejected
    mnemo_model_retries_total
    mnemo_reviews_total{result}               result: saved | nothing
    mnemo_review_writes_total
    mnemo_redeliveries_total                  updates dropped as already answered
    mnemo_limited_total{platform,limit}       messages not run: over a budget (turns | tokens)
    mnemo_updates_skipped_total{platform,reason}  updates skipped: unparsable | unnormalisable
    mnemo_webhook_refused_total{platform,reason}  webhook posts refused: secret |
                                              content_type | body (``watch_refused``)
    mnemo_memory_chars_max{file}              file: MEMORY.md | USER.md
    mnemo_memory_chars_sum{file}
    mnemo_memory_stores
    mnemo_queue_depth  mnemo_outbox_pending  mnemo_archive_bytes  mnemo_live_sessions
    mnemo_lease_wait_seconds                  histogram: waiting for a session's lease
    mnemo_leases_lost_total                   leases lost while held (the turn was stopped)
    mnemo_coordination_errors_total{op}       op: lease renew release claim hold count ping
    mnemo_coordination_up{backend}            1: the backend answered at the last refresh

``cached`` tokens are the part of ``prompt`` tokens served from the provider's prompt cache
(OpenAI counts them inside ``prompt_tokens``), so ``cached / prompt`` is the cache hit rate.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal, ParamSpec, get_args

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from agent_core.models import ModelErrorKind
from gateway.adapter_counts import RefusalSource, RefusedPosts, SkippedUpdates, SkipSource
from memory import FILE_NAMES, TARGETS, MemoryStores
from memory.curated import usage_chars

if TYPE_CHECKING:  # gateway.limits imports the commands; the metrics need only the words
    from gateway.limits import LimitKind

__all__ = [
    "COORDINATION_OPS",
    "LEASE_BUCKETS",
    "MEMORY_FILES",
    "PROVIDER_BUCKETS",
    "TURN_BUCKETS",
    "Metrics",
    "Outcome",
    "RefusalSource",
    "SkipSource",
    "memory_usage",
]

log = logging.getLogger(__name__)

Outcome = Literal["ok", "error", "command"]
OUTCOMES: tuple[Outcome, ...] = ("ok", "error", "command")
LIMITS: tuple[LimitKind, ...] = ("turns", "tokens")
MEMORY_FILES: tuple[str, ...] = ("MEMORY.md", "USER.md")
TURN_BUCKETS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)
#: A provider's prefetch has 300 ms by default; its other hooks run in the background.
PROVIDER_BUCKETS: tuple[float, ...] = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2.5, 5, 10)
#: Waiting for a lease: nothing (no contention), a poll or two, or another replica's turn.
LEASE_BUCKETS: tuple[float, ...] = (0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)
COORDINATION_OPS: tuple[str, ...] = ("lease", "renew", "release", "claim", "hold", "count", "ping")
"""Seconds: a command answers in milliseconds, a model turn in seconds, a tool-heavy one in a
minute or two; past 120 s something is wrong, and ``+Inf`` shows it."""

_P = ParamSpec("_P")


def _never_raises(method: Callable[_P, None]) -> Callable[_P, None]:
    """A recorder that fails logs a warning instead of breaking the caller's turn."""

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except Exception:
            log.warning("metrics: %s failed", method.__name__, exc_info=True)

    return guarded


def _count(n: float) -> float:
    return n if n > 0 else 0


class Metrics:
    """The gateway's metrics; ``platforms`` pre-creates their series at zero."""

    def __init__(self, *, platforms: Iterable[str] = (), process: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        if process:
            ProcessCollector(registry=reg)
        self._turns = Counter(
            "mnemo_turns",
            "Turns handled, by platform and outcome (command: answered without the model).",
            ["platform", "outcome"],
            registry=reg,
        )
        self._turn_seconds = Histogram(
            "mnemo_turn_seconds",
            "Wall time from a message leaving its queue to the reply being handed on.",
            ["platform"],
            buckets=TURN_BUCKETS,
            registry=reg,
        )
        self._tokens = Counter(
            "mnemo_model_tokens",
            "Model tokens by kind; cached is the part of prompt served from the prompt cache.",
            ["kind"],
            registry=reg,
        )
        self._model_errors = Counter(
            "mnemo_model_errors", "Failed model requests, by error kind.", ["kind"], registry=reg
        )
        self._model_retries = Counter(
            "mnemo_model_retries", "Model requests retried after a transient failure.", registry=reg
        )
        self._reviews = Counter(
            "mnemo_reviews",
            "Background memory reviews, by whether they saved anything.",
            ["result"],
            registry=reg,
        )
        self._review_writes = Counter(
            "mnemo_review_writes", "Memory writes made by background reviews.", registry=reg
        )
        self._redeliveries = Counter(
            "mnemo_redeliveries",
            "Updates a platform delivered again and the gateway dropped (answered before).",
            registry=reg,
        )
        self._provider_calls = Counter(
            "mnemo_provider_calls",
            "Calls to the memory provider, by hook and outcome (ok, empty, blocked: the"
            " scanner refused its text, timeout, error).",
            ["provider", "hook", "outcome"],
            registry=reg,
        )
        self._provider_seconds = Histogram(
            "mnemo_provider_call_seconds",
            "How long each call to the memory provider took (a timeout counts its limit).",
            ["provider", "hook"],
            buckets=PROVIDER_BUCKETS,
            registry=reg,
        )
        self._limited = Counter(
            "mnemo_limited",
            "Messages not run because their sender was over a budget (gateway.limits).",
            ["platform", "limit"],
            registry=reg,
        )
        self._memory_max = Gauge(
            "mnemo_memory_chars_max",
            "Largest memory file over all stores, in characters.",
            ["file"],
            registry=reg,
        )
        self._memory_sum = Gauge(
            "mnemo_memory_chars_sum",
            "Total characters of a memory file over all stores.",
            ["file"],
            registry=reg,
        )
        self._memory_stores = Gauge(
            "mnemo_memory_stores", "Memory stores (people, or 1 when shared).", registry=reg
        )
        self._queue_depth = Gauge(
            "mnemo_queue_depth", "Messages waiting in the session queues.", registry=reg
        )
        self._outbox_pending = Gauge(
            "mnemo_outbox_pending", "Replies persisted but not yet delivered.", registry=reg
        )
        self._archive_bytes = Gauge(
            "mnemo_archive_bytes",
            "Size of the archive in its store (file and WAL, or tables).",
            registry=reg,
        )
        self._live_sessions = Gauge(
            "mnemo_live_sessions", "Sessions with a live queue in this process.", registry=reg
        )
        self._lease_wait = Histogram(
            "mnemo_lease_wait_seconds",
            "Time a turn waited for its session's lease (another replica or turn held it).",
            buckets=LEASE_BUCKETS,
            registry=reg,
        )
        self._leases_lost = Counter(
            "mnemo_leases_lost",
            "Leases lost while held (renewal failed or found another holder); the turn stopped.",
            registry=reg,
        )
        self._coordination_errors = Counter(
            "mnemo_coordination_errors",
            "Coordination backend calls that failed, by operation.",
            ["op"],
            registry=reg,
        )
        self._coordination_up = Gauge(
            "mnemo_coordination_up",
            "1 when the coordination backend answered at the last refresh, else 0.",
            ["backend"],
            registry=reg,
        )
        for op in COORDINATION_OPS:
            self._coordination_errors.labels(op=op)
        self._skipped = SkippedUpdates()
        reg.register(self._skipped)
        self._refused = RefusedPosts()
        reg.register(self._refused)
        for kind in ("prompt", "cached", "completion"):
            self._tokens.labels(kind=kind)
        for result in ("saved", "nothing"):
            self._reviews.labels(result=result)
        for kind in get_args(ModelErrorKind):  # at zero, so a rate() has a series from the start
            self._model_errors.labels(kind=kind)
        for platform in platforms:
            self._touch_platform(platform)
        self.set_memory(())

    def _touch_platform(self, platform: str) -> None:
        for outcome in OUTCOMES:
            self._turns.labels(platform=platform, outcome=outcome)
        self._turn_seconds.labels(platform=platform)
        for limit in LIMITS:
            self._limited.labels(platform=platform, limit=limit)

    # -- events ----------------------------------------------------------------------------

    @_never_raises
    def turn(self, platform: str, outcome: Outcome, seconds: float) -> None:
        """One handled message: ``ok`` (a reply), ``error`` (failed turn), ``command``.
        The latency histogram holds model turns only: commands answer in milliseconds and
        would hide how long people wait for the model."""
        self._turns.labels(platform=platform, outcome=outcome).inc()
        if outcome != "command":
            self._turn_seconds.labels(platform=platform).observe(_count(seconds))

    @_never_raises
    def model_usage(self, prompt: int, cached: int, completion: int) -> None:
        """Token usage of one model response (``cached`` is included in ``prompt``)."""
        self._tokens.labels(kind="prompt").inc(_count(prompt))
        self._tokens.labels(kind="cached").inc(_count(cached))
        self._tokens.labels(kind="completion").inc(_count(completion))

    @_never_raises
    def model_error(self, kind: ModelErrorKind) -> None:
        """A failed model request, by ``kind`` (never its message)."""
        self._model_errors.labels(kind=kind[:64]).inc()

    @_never_raises
    def model_retries(self, n: int) -> None:
        self._model_retries.inc(_count(n))

    @_never_raises
    def review(self, wrote: bool, writes: int) -> None:
        """A finished background review and the memory writes it made."""
        self._reviews.labels(result="saved" if wrote else "nothing").inc()
        self._review_writes.inc(_count(writes))

    @_never_raises
    def provider_call(self, provider: str, hook: str, outcome: str, seconds: float) -> None:
        """One call to the memory provider (``agent_core.recall`` reports each)."""
        self._provider_calls.labels(
            provider=provider[:32], hook=hook[:32], outcome=outcome[:16]
        ).inc()
        self._provider_seconds.labels(provider=provider[:32], hook=hook[:32]).observe(
            _count(seconds)
        )

    @_never_raises
    def redelivery(self) -> None:
        self._redeliveries.inc()

    @_never_raises
    def limited(self, platform: str, limit: LimitKind) -> None:
        """A message not run: its sender was over the ``limit`` budget."""
        self._limited.labels(platform=platform, limit=limit).inc()

    # -- coordination (gateway.coordination.CoordinationEvents) -------------------------------

    @_never_raises
    def lease_wait(self, seconds: float) -> None:
        self._lease_wait.observe(_count(seconds))

    @_never_raises
    def lease_lost(self) -> None:
        self._leases_lost.inc()

    @_never_raises
    def coordination_error(self, op: str) -> None:
        self._coordination_errors.labels(op=op[:16]).inc()

    @_never_raises
    def set_coordination_up(self, backend: str, up: bool) -> None:
        self._coordination_up.clear()
        self._coordination_up.labels(backend=backend[:16]).set(1 if up else 0)

    def watch_skips(self, platform: str, source: SkipSource) -> None:
        """Export ``source.skipped`` (an adapter's: reason -> updates skipped since it was
        made) as ``mnemo_updates_skipped_total{platform,reason}``, read at each scrape."""
        self._skipped.sources[platform] = source

    def watch_refused(self, platform: str, source: RefusalSource) -> None:
        """Export ``source.webhook_refused`` as ``mnemo_webhook_refused_total{platform,
        reason}``, read at each scrape."""
        self._refused.sources[platform] = source

    def value(self, name: str, **labels: str) -> float:
        """A sample's current value (0 when it has none yet): for /admin stats and tests,
        so nothing keeps a second count beside the registry."""
        return self.registry.get_sample_value(name, labels) or 0.0

    # -- sampled state (set by the scrape-time refresh) --------------------------------------

    @_never_raises
    def set_memory(self, usages: Sequence[tuple[str, str, int]]) -> None:
        """``(person, file, chars)`` per memory file; exported as max and sum per file."""
        maxima: dict[str, int] = dict.fromkeys(MEMORY_FILES, 0)
        sums: dict[str, int] = dict.fromkeys(MEMORY_FILES, 0)
        stores: set[str] = set()
        for person, file, chars in usages:
            stores.add(person)
            size = max(chars, 0)
            maxima[file] = max(maxima.get(file, 0), size)
            sums[file] = sums.get(file, 0) + size
        # clear() first: a file gone since the last refresh must not keep its old value.
        self._memory_max.clear()
        self._memory_sum.clear()
        for file, largest in maxima.items():
            self._memory_max.labels(file=file).set(largest)
            self._memory_sum.labels(file=file).set(sums[file])
        self._memory_stores.set(len(stores))

    @_never_raises
    def set_queue_depth(self, n: int) -> None:
        self._queue_depth.set(_count(n))

    @_never_raises
    def set_outbox_pending(self, n: int) -> None:
        self._outbox_pending.set(_count(n))

    @_never_raises
    def set_archive_bytes(self, n: int) -> None:
        self._archive_bytes.set(_count(n))

    @_never_raises
    def set_live_sessions(self, n: int) -> None:
        self._live_sessions.set(_count(n))

    # -- exposition ------------------------------------------------------------------------

    def render(self) -> bytes:
        """The Prometheus text exposition (format 0.0.4) of every metric."""
        return generate_latest(self.registry)


def memory_usage(stores: MemoryStores) -> list[tuple[str, str, int]]:
    """(person, file, chars) of every memory file on disk (for the max/sum gauges)."""
    usages = []
    for store in stores:
        for target in TARGETS:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                usages.append(
                    (store.person, FILE_NAMES[target], usage_chars(store.entries(target)))
                )
    return usages
