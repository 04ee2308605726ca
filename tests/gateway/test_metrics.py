"""``Metrics``: the recorders move the right series, memory is aggregated, nothing raises."""

from __future__ import annotations

import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapters.skips import SkipReason
from gateway.metrics import TURN_BUCKETS, Metrics, RefusalSource

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(metrics: Metrics) -> Samples:
    text = metrics.render().decode("utf-8")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found[(name, frozenset(labels.items()))]


def names(found: Samples) -> set[str]:
    return {name for name, _ in found}


def test_turns_count_by_platform_and_outcome_and_time_the_turn() -> None:
    metrics = Metrics(platforms=["telegram", "discord"], process=False)
    before = samples(metrics)
    assert value(before, "mnemo_turns_total", platform="discord", outcome="error") == 0

    metrics.turn("telegram", "ok", 0.3)
    metrics.turn("telegram", "ok", 7.0)
    metrics.turn("telegram", "command", 0.01)
    metrics.turn("discord", "error", 200.0)

    after = samples(metrics)
    assert value(after, "mnemo_turns_total", platform="telegram", outcome="ok") == 2
    assert value(after, "mnemo_turns_total", platform="telegram", outcome="command") == 1
    assert value(after, "mnemo_turns_total", platform="telegram", outcome="error") == 0
    assert value(after, "mnemo_turns_total", platform="discord", outcome="error") == 1
    # the histogram times model turns only; the command is counted above, not timed
    assert value(after, "mnemo_turn_seconds_count", platform="telegram") == 2
    assert value(after, "mnemo_turn_seconds_sum", platform="telegram") == pytest.approx(7.3)
    assert value(after, "mnemo_turn_seconds_bucket", platform="telegram", le="0.05") == 0
    assert value(after, "mnemo_turn_seconds_bucket", platform="telegram", le="0.5") == 1
    assert value(after, "mnemo_turn_seconds_bucket", platform="telegram", le="10.0") == 2
    # 200 s is past the last bucket: only +Inf counts it.
    assert value(after, "mnemo_turn_seconds_bucket", platform="discord", le="120.0") == 0
    assert value(after, "mnemo_turn_seconds_bucket", platform="discord", le="+Inf") == 1
    assert TURN_BUCKETS[0] == 0.05 and TURN_BUCKETS[-1] == 120


def test_a_platform_not_named_up_front_appears_on_first_turn() -> None:
    metrics = Metrics(process=False)
    assert not any(name == "mnemo_turns_total" for name, _ in samples(metrics))
    metrics.turn("console", "ok", 1.0)
    assert value(samples(metrics), "mnemo_turns_total", platform="console", outcome="ok") == 1


def test_model_tokens_errors_retries_and_reviews() -> None:
    metrics = Metrics(process=False)
    metrics.model_usage(prompt=1000, cached=800, completion=50)
    metrics.model_usage(prompt=200, cached=0, completion=10)
    metrics.model_error("unavailable")
    metrics.model_error("unavailable")
    metrics.model_error("rejected")
    metrics.model_retries(3)
    metrics.review(wrote=True, writes=2)
    metrics.review(wrote=False, writes=0)
    metrics.review(wrote=False, writes=0)

    found = samples(metrics)
    assert value(found, "mnemo_model_tokens_total", kind="prompt") == 1200
    assert value(found, "mnemo_model_tokens_total", kind="cached") == 800
    assert value(found, "mnemo_model_tokens_total", kind="completion") == 60
    assert value(found, "mnemo_model_errors_total", kind="unavailable") == 2
    assert value(found, "mnemo_model_errors_total", kind="rejected") == 1
    assert value(found, "mnemo_model_errors_total", kind="invalid_response") == 0
    assert value(found, "mnemo_model_retries_total") == 3
    assert value(found, "mnemo_reviews_total", result="saved") == 1
    assert value(found, "mnemo_reviews_total", result="nothing") == 2
    assert value(found, "mnemo_review_writes_total") == 2


def test_every_model_error_kind_is_exported_from_the_start() -> None:
    found = samples(Metrics(process=False))
    for kind in ("unavailable", "invalid_response", "rejected"):
        assert value(found, "mnemo_model_errors_total", kind=kind) == 0  # KeyError if absent


def test_lease_and_coordination_series() -> None:
    metrics = Metrics(process=False)
    found = samples(metrics)
    for op in ("lease", "renew", "release", "claim", "hold", "count", "ping"):
        assert value(found, "mnemo_coordination_errors_total", op=op) == 0  # from the start
    assert value(found, "mnemo_leases_lost_total") == 0
    assert value(found, "mnemo_lease_wait_seconds_count") == 0
    metrics.lease_wait(0.003)
    metrics.lease_wait(2.5)
    metrics.lease_wait(-1)  # clamped
    metrics.lease_lost()
    metrics.coordination_error("claim")
    metrics.set_coordination_up("redis", False)
    metrics.set_coordination_up("redis", True)
    found = samples(metrics)
    assert value(found, "mnemo_lease_wait_seconds_count") == 3
    assert value(found, "mnemo_lease_wait_seconds_bucket", le="0.005") == 2
    assert value(found, "mnemo_lease_wait_seconds_sum") == pytest.approx(2.503)
    assert value(found, "mnemo_leases_lost_total") == 1
    assert value(found, "mnemo_coordination_errors_total", op="claim") == 1
    assert value(found, "mnemo_coordination_up", backend="redis") == 1


def test_memory_gauges_are_max_and_sum_per_file_without_people() -> None:
    metrics = Metrics(process=False)
    metrics.set_memory(
        [
            ("telegram-1", "MEMORY.md", 1500),
            ("telegram-1", "USER.md", 300),
            ("discord-2", "MEMORY.md", 700),
            ("discord-2", "USER.md", 1200),
            ("telegram-3", "MEMORY.md", 0),
        ]
    )
    found = samples(metrics)
    assert value(found, "mnemo_memory_chars_max", file="MEMORY.md") == 1500
    assert value(found, "mnemo_memory_chars_sum", file="MEMORY.md") == 2200
    assert value(found, "mnemo_memory_chars_max", file="USER.md") == 1200
    assert value(found, "mnemo_memory_chars_sum", file="USER.md") == 1500
    assert value(found, "mnemo_memory_stores") == 3
    text = metrics.render().decode()
    for person in ("telegram-1", "discord-2", "telegram-3"):
        assert person not in text
    memory_series = [labels for name, labels in found if name.startswith("mnemo_memory_chars")]
    assert len(memory_series) == 4
    assert {key for labels in memory_series for key, _ in labels} == {"file"}

    # The next refresh replaces the values (people left, files shrank), it does not add up.
    metrics.set_memory([("telegram-1", "MEMORY.md", 100)])
    found = samples(metrics)
    assert value(found, "mnemo_memory_chars_max", file="MEMORY.md") == 100
    assert value(found, "mnemo_memory_chars_sum", file="MEMORY.md") == 100
    assert value(found, "mnemo_memory_chars_max", file="USER.md") == 0
    assert value(found, "mnemo_memory_stores") == 1


def test_state_gauges_hold_the_last_value_set() -> None:
    metrics = Metrics(process=False)
    metrics.set_queue_depth(4)
    metrics.set_outbox_pending(2)
    metrics.set_archive_bytes(123_456)
    metrics.set_live_sessions(9)
    metrics.set_queue_depth(1)
    found = samples(metrics)
    assert value(found, "mnemo_queue_depth") == 1
    assert value(found, "mnemo_outbox_pending") == 2
    assert value(found, "mnemo_archive_bytes") == 123_456
    assert value(found, "mnemo_live_sessions") == 9


def test_bad_input_is_clamped_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics(process=False)
    metrics.model_usage(prompt=-5, cached=-1, completion=3)
    metrics.model_retries(-2)
    metrics.review(wrote=True, writes=-1)
    metrics.turn("telegram", "ok", -1.0)
    metrics.set_queue_depth(-3)
    with caplog.at_level(logging.WARNING, logger="gateway.metrics"):
        metrics.set_memory([("p", "MEMORY.md", "many")])  # type: ignore[list-item]  # not a size
    assert "set_memory failed" in caplog.text
    found = samples(metrics)
    assert value(found, "mnemo_model_tokens_total", kind="prompt") == 0
    assert value(found, "mnemo_model_tokens_total", kind="completion") == 3
    assert value(found, "mnemo_model_retries_total") == 0
    assert value(found, "mnemo_review_writes_total") == 0
    assert value(found, "mnemo_turn_seconds_sum", platform="telegram") == 0
    assert value(found, "mnemo_queue_depth") == 0


def test_registries_are_private_and_every_own_metric_is_prefixed() -> None:
    first, second = Metrics(process=False), Metrics()
    first.turn("telegram", "ok", 1.0)
    assert not any(name == "mnemo_turns_total" for name, _ in samples(second))
    own = names(samples(second)) - {n for n in names(samples(second)) if n.startswith("process_")}
    assert own and all(name.startswith("mnemo_") for name in own)
    assert "process_resident_memory_bytes" in names(samples(second))
    assert not any(name.startswith("process_") for name in names(samples(first)))


class Counts:
    """What ``watch_skips`` reads: an adapter's ``skipped`` (here set by the test)."""

    def __init__(self) -> None:
        self.counts: dict[SkipReason, int] = {"unparsable": 0, "unnormalisable": 0}
        self.broken = False

    @property
    def skipped(self) -> dict[SkipReason, int]:
        if self.broken:
            raise RuntimeError("the adapter is gone")
        return self.counts


def test_skipped_updates_are_read_from_each_adapter_when_scraped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics(process=False)
    telegram, discord = Counts(), Counts()
    metrics.watch_skips("telegram", telegram)
    metrics.watch_skips("discord", discord)
    found = samples(metrics)
    series = [labels for name, labels in found if name == "mnemo_updates_skipped_total"]
    assert len(series) == 4 and all(
        value(found, "mnemo_updates_skipped_total", **dict(labels)) == 0 for labels in series
    )

    telegram.counts = {"unparsable": 3, "unnormalisable": 1}  # no recorder called: read live
    found = samples(metrics)
    skipped = "mnemo_updates_skipped_total"
    assert value(found, skipped, platform="telegram", reason="unparsable") == 3
    assert value(found, skipped, platform="telegram", reason="unnormalisable") == 1
    assert value(found, skipped, platform="discord", reason="unparsable") == 0
    assert metrics.value(skipped, platform="telegram", reason="unparsable") == 3

    telegram.broken = True  # a scrape still answers, with the last numbers
    with caplog.at_level(logging.WARNING, logger="gateway.metrics"):
        assert value(samples(metrics), skipped, platform="telegram", reason="unparsable") == 3
    assert "skipped updates of telegram failed" in caplog.text


class Refusals:
    """What ``watch_refused`` reads: a webhook adapter's ``webhook_refused``."""

    def __init__(self) -> None:
        self.counts = {"secret": 0, "content_type": 0, "body": 0}
        self.broken = False

    @property
    def webhook_refused(self) -> dict[str, int]:
        if self.broken:
            raise RuntimeError("the adapter is gone")
        return self.counts


def test_webhook_refusals_are_read_when_scraped_and_a_broken_source_never_breaks_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics(process=False)
    telegram = Refusals()
    assert isinstance(telegram, RefusalSource) and not isinstance(Counts(), RefusalSource)
    metrics.watch_refused("telegram", telegram)
    refused = "mnemo_webhook_refused_total"
    assert metrics.value(refused, platform="telegram", reason="secret") == 0
    telegram.counts["secret"] = 5  # no recorder called: read live
    assert metrics.value(refused, platform="telegram", reason="secret") == 5
    telegram.broken = True
    with caplog.at_level(logging.WARNING, logger="gateway.metrics"):
        text = metrics.render()  # the scrape answers, without that adapter's series
    assert b"mnemo_turns_total" in text and b'refused_total{platform="telegram"' not in text
    assert "webhook refusals of telegram failed" in caplog.text
