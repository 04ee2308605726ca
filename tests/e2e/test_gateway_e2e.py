"""The issue's scenarios, over the wire, on every platform (see stack.py for the rig).

Real python-telegram-bot / discord.py clients talk to the emulators on 127.0.0.1, the real
openai SDK talks to the fake model server, state lives in real files.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from memory.skills.store import SkillChange, SkillStore
from tests.e2e.stack import ADMIN, ALICE, BOB, STRANGER, Driver, long_reply, running, user_texts
from tests.fakes.openai_server import Dynamic, FakeOpenAI, Text

QUIET_S = 0.4  # how long "nothing more arrives" is watched for


async def test_dm_round_trip(home: Path, driver: Driver, openai: FakeOpenAI) -> None:
    chat = driver.dm_chat(ALICE)

    async def once_typing_shows(body: dict[str, Any]) -> Text:
        for _ in range(1000):  # a bound (10 s), not a measure
            if driver.typing_shown(chat):
                return Text("slow answer")
            await asyncio.sleep(0.01)
        return Text("typing was never shown")

    async with running(home, driver, openai):
        await driver.dm(ALICE, "hello there")
        assert await driver.replies(chat, 1) == ["echo: hello there"]
        openai.script(Dynamic(once_typing_shows))  # a turn long enough for "typing…"
        await driver.dm(ALICE, "a question that takes a while")
        assert await driver.replies(chat, 2) == [
            "echo: hello there",
            "slow answer",
        ]
    assert driver.typing_shown(driver.dm_chat(ALICE)) >= 1
    assert {"help", "memory", "new", "status", "admin"} <= set(driver.registered_commands())
    system = openai.requests[0].body["messages"][0]
    assert system["role"] == "system" and driver.platform.capitalize() in system["content"]


async def test_a_refusal_and_a_cut_off_answer_are_told_as_such(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    openai.script(
        Text(None, refusal="I can't help with that."),
        Text("The steps are: first unpack, then", finish_reason="length"),
        Text(""),
    )
    async with running(home, driver, openai):
        for n, text in enumerate(("how do I pick a lock?", "how do I install it?", "and?"), 1):
            await driver.dm(ALICE, text)  # one at a time: messages sent together are one turn
            replies = await driver.replies(driver.dm_chat(ALICE), n)
    assert replies == [
        "The model refused to answer this. Its words: “I can't help with that.”",
        "The steps are: first unpack, then\n\n"
        "(My answer was cut off here: it reached the model's length limit.)",
        "(The model sent an empty answer. Please try again, or ask in other words.)",
    ]


async def test_groups_answer_only_when_addressed(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    async with running(home, driver, openai):
        await driver.group(ALICE, "just chatting among ourselves")
        await driver.group(ALICE, "what time is it", mention=True)
        [reply] = await driver.replies(driver.group_chat, 1)
        await asyncio.sleep(QUIET_S)
    assert "what time is it" in reply
    assert driver.sent_count() == 1
    assert "just chatting" not in user_texts(openai)


async def test_threads_and_topics_are_sessions_of_their_own(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    async with running(home, driver, openai) as stack:
        await driver.group(ALICE, "in the channel", mention=True)
        await driver.replies(driver.group_chat, 1)
        await driver.thread(ALICE, "in the thread")
        assert await driver.thread_replies(1) == ["echo: in the thread"]
        channel = await stack.archive.latest_session(
            f"{driver.platform}:group:{driver.group_chat}:{ALICE}"
        )
        thread = await stack.archive.latest_session(
            f"{driver.platform}:thread:{driver.thread_key}:{ALICE}"
        )
    assert channel and thread and channel.id != thread.id
    last = openai.requests[-1].body["messages"]
    assert "in the channel" not in str(last)  # the thread's history is its own


async def test_admin_commands_and_refusals(home: Path, driver: Driver, openai: FakeOpenAI) -> None:
    async with running(home, driver, openai):
        await driver.dm(ALICE, "remember: Alice works night shifts")
        await driver.replies(driver.dm_chat(ALICE), 1)
        await driver.command(BOB, f"/admin memory {driver.platform}:{ALICE}")
        await driver.command(ADMIN, f"/admin memory {driver.platform}:{ALICE}")
        await driver.command(ADMIN, "/admin stats")
        [refusal] = await driver.replies(driver.dm_chat(BOB), 1)
        memory, stats = await driver.replies(driver.dm_chat(ADMIN), 2)
    assert "for the admins" in refusal and "night shifts" not in refusal
    assert "night shifts" in memory
    assert "Turns today (UTC): 1" in stats


async def test_pairing_admits_a_stranger(home: Path, driver: Driver, openai: FakeOpenAI) -> None:
    stranger = driver.dm_chat(STRANGER)
    async with running(home, driver, openai):
        await driver.dm(STRANGER, "hi, who are you?")
        [offer] = await driver.replies(stranger, 1)
        code = offer.split("\n\n")[1].strip()
        assert not openai.requests  # a stranger never reaches the model
        await driver.command(ADMIN, f"/pair approve {code}")
        [approved] = await driver.replies(driver.dm_chat(ADMIN), 1)
        assert f"{driver.platform}:{STRANGER}" in approved
        await driver.replies(stranger, 2)  # "you're approved"
        await driver.dm(STRANGER, "thanks")
        replies = await driver.replies(stranger, 3)
    assert replies[2] == "echo: thanks"


async def test_long_replies_are_chunked_with_fences_intact(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai):
        await driver.dm(ALICE, "long: 9000")
        await driver.replies(chat, 2)
        await asyncio.sleep(QUIET_S)
    blocks = driver.code_blocks(chat)
    assert len(blocks) >= 2
    assert all(opened == closed for opened, closed in blocks)  # every chunk closes its block
    assert sum(opened for opened, _ in blocks) >= 2  # the block was reopened after a cut


async def test_a_reply_too_long_for_a_chat_ends_with_the_whole_text_as_a_file(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai):  # gateway.max_reply_messages: 6 by default
        await driver.dm(ALICE, "long: 60000")
        sent = await driver.replies(chat, 6)
        await asyncio.sleep(QUIET_S)
        assert len(driver.all_replies(chat)) == 6  # five chunks, then the file
    [(name, data)] = driver.sent_files(chat)
    assert name == "reply.md" and data.decode() == long_reply(60000)
    assert sent[-1].startswith("The whole answer (") and "characters) is in this file" in sent[-1]
    assert all(opened == closed for opened, closed in driver.code_blocks(chat)[:5])


async def test_flood_control_delays_only_that_chat(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    async with running(home, driver, openai):
        driver.flood(driver.dm_chat(ALICE), 1)
        start = asyncio.get_running_loop().time()
        await driver.dm(ALICE, "first")
        await driver.dm(BOB, "second")
        await driver.replies(driver.dm_chat(ALICE), 1)
        await driver.replies(driver.dm_chat(BOB), 1)
    alice = driver.sent_at(driver.dm_chat(ALICE))[0] - start
    bob = driver.sent_at(driver.dm_chat(BOB))[0] - start
    assert alice >= 0.95  # waited out retry_after
    assert bob < alice - 0.5  # while Bob's chat was not held up


async def test_a_redelivered_update_is_answered_once(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai):
        handle = await driver.dm(ALICE, "only once please")
        await driver.replies(chat, 1)
        await driver.redeliver(handle)
        await driver.dm(ALICE, "and this")
        replies = await driver.replies(chat, 2)
        await asyncio.sleep(QUIET_S)
    assert replies == ["echo: only once please", "echo: and this"]
    assert driver.sent_count() == 2


async def test_a_restart_in_the_middle_of_a_turn_is_noticed(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    async with running(home, driver, openai, drain_timeout_s=0.2):
        await driver.dm(ALICE, "slow: 30")
        for _ in range(100):
            if openai.requests:
                break
            await asyncio.sleep(0.05)
    # the drain gave up on the turn: nothing was sent, and the next start says so
    assert driver.sent_count() == 0
    async with running(home, driver, openai):
        [notice] = await driver.replies(chat, 1)
    assert "restarted" in notice and "send it again" in notice


async def test_a_restart_delivers_an_undelivered_reply_once(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    chat = driver.dm_chat(ALICE)
    driver.unavailable(chat, times=6)  # the reply's attempts and the final flush all fail
    async with running(home, driver, openai) as first:
        await driver.dm(ALICE, "are you there?")
        for _ in range(100):
            if (await first.gateway.ledger.counts()).get(
                "pending"
            ) and not first.gateway.router.lanes:
                break
            await asyncio.sleep(0.05)
    assert driver.sent_count() == 0
    async with running(home, driver, openai):
        assert await driver.replies(chat, 1) == ["echo: are you there?"]
    async with running(home, driver, openai):
        await asyncio.sleep(QUIET_S)
    assert driver.sent_count() == 1
    assert len(openai.requests) == 1  # the turn itself never ran again


async def test_a_skill_is_in_the_menu_and_runs_as_a_command(
    home: Path, driver: Driver, openai: FakeOpenAI
) -> None:
    SkillStore(home / "skills").apply(
        SkillChange(
            "create",
            "rotate-logs",
            content="---\nname: rotate-logs\ndescription: Rotate the app's logs safely\n---\n"
            "Move the file, then send SIGHUP.\n",
        )
    )
    # Telegram's menu takes only _, so the skill is /rotate_logs there
    typed = "rotate_logs" if driver.platform == "telegram" else "rotate-logs"
    async with running(home, driver, openai):
        assert typed in driver.registered_commands()
        await driver.command(ALICE, f"/{typed} on web1")
        [reply] = await driver.replies(driver.dm_chat(ALICE), 1)
    assert reply.startswith("echo: [The person asked you to use the skill 'rotate-logs'")
    user = openai.requests[-1].body["messages"][-1]["content"]
    assert "send SIGHUP" in user and user.rstrip().endswith("on web1")
    assert "send SIGHUP" not in openai.requests[-1].body["messages"][0]["content"]
