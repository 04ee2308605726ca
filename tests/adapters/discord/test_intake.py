"""One bad event never stops Discord: real discord.py on the fake gateway, which dispatches
malformed MESSAGE_CREATE and INTERACTION_CREATE payloads exactly as given."""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tests.adapters.discord.test_client import TOKEN, World
from tests.fakes.discord_server import FakeDiscord

SECRET = "TOPSECRET-what-someone-wrote"  # in every bad payload: it must reach no log line
Breaks = Callable[[dict[str, Any]], object]  # what it returns is ignored


def drop(key: str) -> Breaks:
    return lambda payload: payload.pop(key)


def set_to(key: str, value: object) -> Breaks:
    return lambda payload: payload.__setitem__(key, value)


UNPARSABLE: dict[str, Breaks] = {  # discord.py's parser raises on each
    "an author that is not an object": set_to("author", "alice"),
    "an id that is not a number": set_to("id", "not-a-snowflake"),
    "no channel_id": drop("channel_id"),
}
UNNORMALISABLE: dict[str, Breaks] = {  # discord.py reads each; normalize cannot map it
    "no author": drop("author"),
    "content that is not text": set_to("content", 5),
}


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as dc:
        guild = dc.add_guild("home")
        general = dc.add_channel(guild, "general")
        other = dc.add_channel(guild, "other")
        alice = dc.add_user("alice", global_name="Alice")
        w = World(dc, guild, general, other, dc.add_thread(general), alice, dc.add_dm(alice))
        try:
            yield w
        finally:
            if w.adapter is not None:
                await w.adapter.stop()


async def push_broken(world: World, breaks: Breaks) -> dict[str, Any]:
    payload = world.dc.message_payload(world.dm, world.alice, f"{SECRET} in a bad message")
    breaks(payload)
    await world.dc.dispatch("MESSAGE_CREATE", payload)
    return payload


def skip_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and "skipped" in r.getMessage()
    ]


@pytest.mark.parametrize("kind", list(UNPARSABLE))
async def test_a_message_discord_py_cannot_parse_no_longer_ends_the_connection(
    world: World, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: the parser's exception left ``Client.connect``; nothing was read again while
    the heartbeat thread kept the socket (and ``connected``) up."""
    adapter = await world.start()
    await push_broken(world, UNPARSABLE[kind])
    await world.dc.push_message(world.dm, world.alice, "after it")
    assert (await world.next()).text == "after it"
    assert adapter.skipped == {"unparsable": 1, "unnormalisable": 0}
    assert adapter.connected
    [line] = skip_lines(caplog)
    assert line.startswith("discord: skipped MESSAGE_CREATE #") and ": unparsable (" in line
    assert SECRET not in caplog.text


async def test_a_skipped_event_is_not_replayed_by_a_resume(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = await world.start()
    bad = await push_broken(world, UNPARSABLE["no channel_id"])
    await world.dc.push_message(world.dm, world.alice, "one")
    assert (await world.next()).text == "one"
    [line] = skip_lines(caplog)
    assert f"(id {bad['id']}): unparsable (KeyError: channel_id)" in line
    await world.dc.drop_connection()  # RESUME replays what the client had not acknowledged
    await world.dc.push_message(world.dm, world.alice, "two")
    assert (await world.next()).text == "two"
    await world.dc.wait_for(lambda: len(world.dc.resumes) == 1)
    assert adapter.skipped == {"unparsable": 1, "unnormalisable": 0}  # acknowledged once
    assert adapter.connected


@pytest.mark.parametrize("kind", list(UNNORMALISABLE))
async def test_a_message_normalize_cannot_map_is_skipped_and_counted(
    world: World, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = await world.start()
    bad = await push_broken(world, UNNORMALISABLE[kind])
    await world.dc.push_message(world.dm, world.alice, "after it")
    assert (await world.next()).text == "after it"
    assert adapter.skipped == {"unparsable": 0, "unnormalisable": 1}
    [line] = skip_lines(caplog)
    assert line.startswith(f"discord: skipped MESSAGE_CREATE (id {bad['id']}): unnormalisable (")
    assert "Ignoring exception" not in caplog.text  # ours to count, not discord.py's to log
    assert SECRET not in caplog.text


INTERACTIONS: dict[str, tuple[Breaks, str]] = {
    "an id that is not a number": (set_to("id", "x"), "unparsable"),  # the parser
    "no command name": (lambda p: p["data"].pop("name"), "unparsable"),  # the command tree
    "no user": (lambda p: [p.pop("user", None), p.pop("member", None)], "unnormalisable"),
}


@pytest.mark.parametrize("kind", list(INTERACTIONS))
async def test_an_interaction_that_cannot_be_used_is_skipped_and_counted_once(
    world: World, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    breaks, reason = INTERACTIONS[kind]
    adapter = await world.start()
    sample = world.dc.interaction_payload("memory", {"args": SECRET}, world.alice, world.dm)
    payload = copy.deepcopy(sample.payload)
    breaks(payload)
    await world.dc.dispatch("INTERACTION_CREATE", payload)
    await world.dc.push_interaction("help", None, world.alice, world.dm)
    command = await world.next()
    assert (command.text, command.is_command) == ("/help", True)
    assert adapter.skipped == {"unparsable": 0, "unnormalisable": 0} | {reason: 1}
    assert sample.id not in {c.interaction_id for c in world.dc.callbacks}  # never deferred
    [line] = skip_lines(caplog)
    assert line.startswith("discord: skipped INTERACTION_CREATE") and f": {reason} (" in line
    assert SECRET not in caplog.text
    assert world.inbox.empty() and adapter.connected
