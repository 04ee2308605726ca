"""What people see is what they meant: /memory numbers, /forget says what it removed,
/search shows the conversation (not tool output or headers), person ids name a platform."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.archive.database import Archive
from tests.gateway.rig import ADMIN, Rig, config


@pytest.fixture
async def rig(home: Path, archive: Archive) -> AsyncIterator[Rig]:
    made = Rig(home, archive, config())
    await made.gateway.start()
    for n, fact in enumerate(("likes green tea", "has a cat named Pixel", "drinks tea at noon")):
        await made.adapter.say(f"remember: {fact}")
        await made.adapter.wait_sent(n + 1)
    yield made
    await made.gateway.stop()


async def ask(rig: Rig, text: str, *, user: str = "1") -> str:
    before = len(rig.adapter.texts(user))
    await rig.adapter.say(text, user=user)
    await rig.adapter.wait_sent(before + 1, chat=user)
    return rig.adapter.texts(user)[before]


def user_md(rig: Rig) -> str:
    return (rig.home / "memories" / "telegram-1" / "USER.md").read_text()


async def test_memory_numbers_entries_across_both_files_and_forget_n_takes_the_number(
    rig: Rig,
) -> None:
    store = rig.home / "memories" / "telegram-1"
    (store / "MEMORY.md").write_text("Deploys go through staging first")
    listing = await ask(rig, "/memory")
    assert "1. Deploys go through staging first" in listing
    assert "2. likes green tea" in listing and "4. drinks tea at noon" in listing
    assert listing.endswith("/forget N forgets entry N.")
    assert "3. has a cat named Pixel" in await ask(rig, "/memory profile")  # same numbers
    assert await ask(rig, "/forget 3") == "Forgot entry 3 of USER.md: «has a cat named Pixel»"
    assert "Pixel" not in user_md(rig)
    assert "from 1 to 3" in await ask(rig, "/forget 9")


async def test_forget_text_removes_the_one_match_and_says_which(rig: Rig) -> None:
    assert await ask(rig, "/forget CAT NAMED") == (
        "Forgot entry 2 of USER.md: «has a cat named Pixel»"
    )


async def test_forget_text_matching_several_entries_lists_them_and_removes_none(
    rig: Rig,
) -> None:
    answer = await ask(rig, "/forget tea")
    assert answer.startswith("Several entries match «tea», so I forgot none.")
    assert "/forget 1 — USER.md: likes green tea" in answer
    assert "/forget 3 — USER.md: drinks tea at noon" in answer
    assert "green tea" in user_md(rig) and "noon" in user_md(rig)


async def test_forget_text_matching_nothing_says_how_to_find_the_entry(rig: Rig) -> None:
    answer = await ask(rig, "/forget zebra")
    assert "Nothing in my memory matches «zebra»" in answer and "/memory" in answer


async def test_search_shows_the_conversation_not_tool_output_or_headers(rig: Rig) -> None:
    await ask(rig, "search: Pixel")  # a tool call whose result mentions Pixel
    answer = await ask(rig, "/search Pixel")
    lines = answer.splitlines()
    assert lines and all(not line.strip().startswith(("[20", '{"success"')) for line in lines)
    assert '"results"' not in answer and "tool" not in answer
    assert "you: remember: has a cat named Pixel" in answer or "you: search: Pixel" in answer
    # a word only the tool's output holds finds nothing; the header's words show no header
    assert (await ask(rig, "/search discover")).startswith("Nothing in your past")
    header_hit = await ask(rig, "/search UTC")
    assert all("UTC" not in line for line in header_hit.splitlines() if "you:" in line)


async def test_search_that_matches_nothing_gives_advice_that_works_in_chat(rig: Rig) -> None:
    answer = await ask(rig, "/search zeppelin")
    assert "Nothing in your past conversations matches «zeppelin»" in answer
    assert "/sessions" in answer and "omit" not in answer


@pytest.mark.parametrize("who", ["5001", "tg:5001", "telegram:"])
async def test_admin_commands_name_the_accepted_person_forms(rig: Rig, who: str) -> None:
    answer = await ask(rig, f"/admin memory {who}", user=ADMIN)
    assert answer.startswith(f"Unknown person '{who}'")
    assert "telegram:5001" in answer and "telegram-5001" in answer


async def test_admin_commands_take_either_spelling_of_a_person(rig: Rig) -> None:
    for who in ("telegram:1", "telegram-1", "Telegram:1"):
        answer = await ask(rig, f"/admin memory {who}", user=ADMIN)
        assert answer.startswith("telegram-1\n") and "Pixel" in answer
