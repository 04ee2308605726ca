"""The gateway's life through an in-process adapter: start, stop, drain, cancel, restarts
and what is logged when a part fails. (Turns and commands: test_turns.py; the same flows
over the real platform clients and wires: tests/e2e.)"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from adapters.base import Sink, Unavailable
from agent_core.models import ChatMessage, ModelReply, ToolSpec
from agent_core.models.scripted import ScriptedModel
from gateway.config.schema import Paths
from gateway.replies import RESTARTED
from gateway.turns import CANCELLED
from gateway.wiring import build_gateway
from memory.archive.database import Archive
from tests.gateway.harness import ChatAdapter
from tests.gateway.rig import Rig, config, responder


async def test_an_undelivered_reply_is_delivered_once_after_a_restart(
    home: Path, archive: Archive
) -> None:
    first = Rig(home, archive, config())
    await first.gateway.start()
    first.adapter.failures["1"] = [Unavailable("down")] * 6  # the post and the final flush
    await first.adapter.say("are you there")
    await asyncio.sleep(0.3)
    await first.gateway.stop()
    assert first.adapter.sent == []
    second = Rig(home, archive, config())
    await second.gateway.start()
    await second.adapter.wait_sent(1)
    assert second.adapter.texts() == ["echo: are you there"]
    await second.gateway.stop()
    third = Rig(home, archive, config())
    await third.gateway.start()
    await asyncio.sleep(0.1)
    await third.gateway.stop()
    assert third.adapter.sent == []


async def test_a_restart_in_the_middle_of_a_turn_is_noticed(home: Path, archive: Archive) -> None:
    first = Rig(home, archive, config(drain_timeout_s=0.1), delay=30)
    await first.gateway.start()
    await first.adapter.say("a long question")
    await asyncio.sleep(0.1)
    await first.gateway.stop()  # the turn is cancelled after the drain timeout
    second = Rig(home, archive, config())
    await second.gateway.start()
    await second.adapter.wait_sent(1)
    assert second.adapter.texts() == [RESTARTED]
    assert second.adapter.sent[0].message.reply_to_message_id == "m1"
    await second.gateway.stop()


class EagerAdapter(ChatAdapter):
    """Delivers a message the moment it is started, as a console reading piped input does."""

    async def start(self, sink: Sink) -> None:
        await super().start(sink)
        await self.say("hello at once")


async def test_a_message_that_arrives_during_start_is_not_taken_for_an_interrupted_one(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, config())
    rig.adapter = EagerAdapter()
    rig.gateway = rig.build()
    await rig.gateway.start()
    await rig.adapter.wait_sent(1)
    await asyncio.sleep(0.1)
    assert rig.adapter.texts() == ["echo: hello at once"]
    await rig.gateway.stop()


async def test_cancel_stops_a_turn_keeps_the_message_and_says_so(
    home: Path, archive: Archive
) -> None:
    asked = asyncio.Event()
    echo = responder()

    async def respond(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelReply:
        if str(messages[-1]["content"]).endswith("a long question"):
            asked.set()
            await asyncio.Event().wait()  # only a cancel ends this request
        return await echo(messages, tools)

    rig = Rig(home, archive, config())
    rig.model = ScriptedModel(respond=respond)
    rig.gateway = rig.build()
    await rig.gateway.start()
    message = await rig.adapter.say("a long question")
    await asked.wait()
    assert rig.gateway.cancel(message) is True
    await rig.gateway.idle(message)
    assert rig.adapter.texts() == [CANCELLED]
    assert rig.gateway.cancel(message) is False  # nothing runs there now
    later = await rig.adapter.say("still there?")
    await rig.gateway.idle(later)
    assert rig.adapter.texts() == [CANCELLED, "echo: still there?"]
    sent = [str(m["content"]) for m in rig.model.requests[-1].messages[1:]]
    assert sent[0].endswith("a long question") and sent[1].endswith("still there?")
    (session,) = await archive.sessions(viewer="telegram-1")
    stored = await archive.messages(session.id, viewer="telegram-1")
    assert [m.role for m in stored] == ["user", "user", "assistant"]
    await rig.gateway.stop()
    # the cancelled message was answered: a restart does not ask for it again
    again = Rig(home, archive, config())
    await again.gateway.start()
    await again.gateway.stop()
    assert again.adapter.texts() == []


async def test_stop_drains_a_running_turn(home: Path, archive: Archive) -> None:
    rig = Rig(home, archive, config(drain_timeout_s=5), delay=0.8)
    await rig.gateway.start()
    await rig.adapter.say("slow one")
    await asyncio.sleep(0.05)
    await rig.gateway.stop()
    assert rig.adapter.texts() == ["echo: slow one"]
    assert rig.adapter.typing_calls  # typing was shown while it ran


# -- the gateway as an async context manager; what stopping cannot finish is logged --------

LEAKY = "close failed for 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"  # a bot token's shape


@dataclasses.dataclass
class BrokenAdapter(ChatAdapter):
    """A platform whose start or stop fails, as one that is down does."""

    start_error: Exception | None = None
    stop_error: Exception | None = None

    async def start(self, sink: Sink) -> None:
        if self.start_error is not None:
            raise self.start_error
        await super().start(sink)

    async def stop(self) -> None:
        await super().stop()
        if self.stop_error is not None:
            raise self.stop_error


def two_platforms(home: Path, archive: Archive, discord: ChatAdapter) -> Rig:
    rig = Rig(home, archive, config())
    gateway = build_gateway(
        paths=Paths(home, home / "config.yaml", explicit_config=False),
        config=rig.config,
        archive=archive,
        model=rig.model,
        adapters={"telegram": rig.adapter, "discord": discord},
    )
    rig.gateway = gateway
    return rig


async def test_async_with_starts_the_gateway_and_stops_it_on_any_way_out(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, config())
    async with rig.gateway as gateway:
        assert gateway is rig.gateway
        assert await gateway.health() == (True, ["storage: sqlite", "coordination: local"])
        await rig.adapter.say("hello")
        await rig.adapter.wait_sent(1)
    assert rig.adapter.texts() == ["echo: hello"]
    assert not rig.adapter.connected
    assert (await rig.gateway.health())[1] == [
        "gateway: stopping",
        "telegram: not connected",
        "storage: sqlite",
        "coordination: local",
    ]
    await rig.gateway.stop()  # once is enough: a second stop does nothing

    again = Rig(home, archive, config())

    async def fails_inside() -> None:
        async with again.gateway:
            assert again.adapter.connected
            raise LookupError

    with pytest.raises(LookupError):
        await fails_inside()
    assert not again.adapter.connected


async def test_a_start_that_fails_half_way_stops_what_it_started(
    home: Path, archive: Archive
) -> None:
    down = BrokenAdapter(platform="discord", start_error=Unavailable("discord is down"))
    rig = two_platforms(home, archive, down)
    with pytest.raises(Unavailable, match="discord is down"):
        await rig.gateway.__aenter__()
    assert rig.adapter.sink is None and down.sink is None  # telegram was started, then stopped
    assert (await rig.gateway.health())[1][0] == "gateway: stopping"


async def test_stop_logs_what_it_cannot_finish_and_stops_the_rest(
    home: Path, archive: Archive, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="gateway.service")
    stuck = BrokenAdapter(platform="discord", stop_error=RuntimeError(LEAKY))
    rig = two_platforms(home, archive, stuck)

    async def fails_late() -> None:
        await asyncio.sleep(0.05)
        raise OSError("disk full")

    async with rig.gateway as gateway:
        gateway._track(fails_late(), "notice:test")
    assert not rig.adapter.connected and not stuck.connected  # both stopped all the same
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "background task notice:test: OSError while stopping: disk full",
        "discord adapter: RuntimeError while stopping: close failed for [redacted]",
    ]
    assert "AAHdqTcv" not in caplog.text and "Traceback" not in caplog.text


REDACTED_LEAKY = "close failed for [redacted]"


async def test_background_work_that_fails_while_running_is_logged_when_it_fails(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    """Not only at stop: a menu refresh or a notice that fails mid-run says so at once."""
    caplog.set_level(logging.WARNING, logger="gateway.service")

    async def fails_now() -> None:
        raise OSError(f"disk full near {LEAKY}")

    async with rig.gateway as gateway:
        task = gateway._track(fails_now(), "notice:early")
        with contextlib.suppress(OSError):
            await task
        await asyncio.sleep(0)  # the done callback runs
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == [
            f"background task notice:early: OSError while running: disk full near {REDACTED_LEAKY}"
        ]
    later = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert later == warnings  # logged once, not again at stop
    assert "AAHdqTcv" not in caplog.text


async def test_the_adapters_stop_even_when_a_step_before_them_fails(rig: Rig) -> None:
    async def broken_flush(platform: str | None = None) -> int:
        raise OSError("state.db is read-only")

    rig.gateway.outbox.flush = broken_flush  # type: ignore[method-assign]  # a patched method
    with pytest.raises(OSError, match="read-only"):
        await rig.gateway.stop()
    assert not rig.adapter.connected
