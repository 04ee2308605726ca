"""The counters the platform adapters keep themselves (updates skipped, webhook posts
refused), read when ``/metrics`` is collected rather than mirrored (``gateway.metrics``):
the number exported is the adapter's own, whenever anything reads the registry."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Protocol, runtime_checkable

from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from adapters.skips import SKIP_REASONS, SkipReason

__all__ = ["RefusalSource", "RefusedPosts", "SkipSource", "SkippedUpdates"]

log = logging.getLogger("gateway.metrics")


class SkipSource(Protocol):
    """What ``watch_skips`` reads: an ``Adapter`` (``adapters.base``) has this property."""

    @property
    def skipped(self) -> Mapping[SkipReason, int]: ...


@runtime_checkable
class RefusalSource(Protocol):
    """What ``watch_refused`` reads: a webhook adapter's posts refused, by reason (the
    Telegram adapter has it; ``Gateway`` watches every adapter that does)."""

    @property
    def webhook_refused(self) -> Mapping[str, int]: ...


class SkippedUpdates(Collector):
    """``mnemo_updates_skipped_total``, read from each platform's adapter when collected."""

    def __init__(self) -> None:
        self.sources: dict[str, SkipSource] = {}
        self._last: dict[str, Mapping[SkipReason, int]] = {}

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "mnemo_updates_skipped",
            "Updates a platform sent that could not be parsed (unparsable) or mapped "
            "(unnormalisable): confirmed, logged and skipped.",
            labels=["platform", "reason"],
        )
        for platform, source in sorted(self.sources.items()):
            try:
                counts: Mapping[SkipReason, int] = dict(source.skipped)
                self._last[platform] = counts
            except Exception:  # never break a scrape: the last numbers stand
                log.warning("metrics: reading the skipped updates of %s failed", platform)
                counts = self._last.get(platform, {})
            for reason in SKIP_REASONS:
                family.add_metric([platform, reason], max(0, counts.get(reason, 0)))
        yield family


class RefusedPosts(Collector):
    """``mnemo_webhook_refused_total``, read from each webhook adapter when collected."""

    def __init__(self) -> None:
        self.sources: dict[str, RefusalSource] = {}

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "mnemo_webhook_refused",
            "Webhook posts refused: a missing or wrong secret token (secret), not JSON by "
            "its content type (content_type) or its body (body).",
            labels=["platform", "reason"],
        )
        for platform, source in sorted(self.sources.items()):
            try:
                counts = dict(source.webhook_refused)
            except Exception:  # never break a scrape
                log.warning("metrics: reading the webhook refusals of %s failed", platform)
                continue
            for reason, count in sorted(counts.items()):
                family.add_metric([platform, reason], max(0, count))
        yield family
