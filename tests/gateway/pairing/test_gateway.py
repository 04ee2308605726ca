"""Pairing through the gateway: what strangers are told and how often, admin notices with
buttons (batched, rate-limited), /pair deny, block and unblock. (Over the real platform
clients: tests/e2e/test_pairing_e2e.py.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from gateway.pairing.notices import SHOWN, AdminNotices, PairingRequest, admin_notice
from gateway.pairing.store import PairingStore
from memory.archive.database import Archive
from tests.gateway.harness import InChat
from tests.gateway.rig import ADMIN, Rig, config


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def quiet(rig: Rig, chat: str, count: int, within: float = 0.2) -> None:
    """Nothing beyond ``count`` messages reaches ``chat`` for a moment."""
    await asyncio.sleep(within)
    assert len(rig.adapter.texts(chat)) == count, rig.adapter.texts(chat)


async def test_a_stranger_gets_the_code_once_then_a_reminder_every_ten_minutes(
    home: Path, archive: Archive
) -> None:
    clock = Clock()
    rig = Rig(home, archive, config(), clock=clock)
    await rig.gateway.start()
    for _ in range(60):
        await rig.adapter.say("hello? anyone?", user="77", name="Stranger")
    await rig.adapter.wait_sent(1, chat="77")
    await quiet(rig, "77", 1)
    [offer] = rig.adapter.texts("77")
    code = offer.split("\n\n")[1]
    assert "valid for 1 hour" in offer
    clock.now += 9 * 60
    await rig.adapter.say("still there?", user="77")
    await quiet(rig, "77", 1)
    clock.now += 61
    await rig.adapter.say("hello??", user="77")
    await rig.adapter.wait_sent(2, chat="77")
    assert rig.adapter.texts("77")[1] == (
        f"Your pairing code {code} is still waiting for an admin, 49 minutes left."
    )
    for _ in range(5):
        await rig.adapter.say("helloooo", user="77")
    await quiet(rig, "77", 2)
    await rig.gateway.stop()
    assert not rig.model.requests
    # the 65 left unanswered were handed back to the adapter (no "thinking…" lingers)
    assert len(rig.adapter.dismissed) == 65
    assert await rig.gateway.ledger.interrupted() == []  # the unanswered ones are handled


async def test_admins_get_a_batched_notice_and_a_button_admits_the_person(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, config())
    notices = rig.gateway.pairing_desk.notices
    notices.batch_s, notices.gap_s = 0.2, 1.0
    await rig.gateway.start()
    await rig.adapter.say("hi", user="77", name="Stranger")
    await rig.adapter.say("hi", user="78", name="Eve\n[admin] approve all\x1b[2J")
    await rig.adapter.say("hi", user="79", name="")
    await rig.adapter.wait_sent(1, chat=ADMIN, within=2)
    await rig.adapter.say("hi", user="80", name="Late")  # inside the gap: waits for the next
    await quiet(rig, ADMIN, 1, within=0.4)
    notice = rig.adapter.sent[[s.message.chat_id for s in rig.adapter.sent].index(ADMIN)]
    text = notice.message.text
    assert text.startswith("3 new pairing requests on Telegram:")
    assert "telegram:77 (calls themselves “Stranger”)" in text
    assert "telegram:78 (calls themselves “Eve (admin) approve all(2J”)" in text
    assert "telegram:79 (gave no name)" in text
    assert len(text.splitlines()) == 5  # a name cannot add a line
    codes = {who: rig.adapter.texts(who)[0].split("\n\n")[1] for who in ("77", "78", "79")}
    assert notice.message.buttons == tuple(
        pair
        for who in ("77", "78", "79")
        for pair in (
            (f"Approve {codes[who]}", f"/pair approve {codes[who]}"),
            (f"Deny {codes[who]}", f"/pair deny {codes[who]}"),
        )
    )
    assert all(len(data.encode()) <= 64 for _label, data in notice.message.buttons)
    assert not any(codes["78"] in t for t in rig.adapter.texts("77"))  # nobody else's data
    await rig.adapter.wait_sent(2, chat=ADMIN, within=3)
    assert rig.adapter.texts(ADMIN)[1].startswith("New pairing request on Telegram:")
    assert "telegram:80 (calls themselves “Late”)" in rig.adapter.texts(ADMIN)[1]
    # pressing Approve runs the command itself; the notice is edited, nothing more is sent
    await rig.adapter.press(f"Approve {codes['77']}", user=ADMIN)
    await rig.adapter.wait_edits(1)
    await rig.adapter.press(f"Deny {codes['78']}", user=ADMIN)
    await rig.adapter.wait_edits(2)
    approved, denied = rig.adapter.edits
    assert approved.text.endswith(f"✓ {codes['77']}: approved (telegram:77)")
    assert denied.text.endswith(f"✗ {codes['78']}: denied (telegram:78)")
    assert approved.text.startswith("3 new pairing requests on Telegram:")
    assert [data for _label, data in denied.buttons] == [
        f"/pair approve {codes['79']}",
        f"/pair deny {codes['79']}",
    ]  # the request still waiting keeps its buttons
    assert len(rig.adapter.texts(ADMIN)) == 2
    # typed, the same command answers in words
    await rig.adapter.say(f"/pair deny {codes['79']}", user=ADMIN)
    await rig.adapter.wait_sent(3, chat=ADMIN)
    assert rig.adapter.texts(ADMIN)[2].startswith(f"Denied {codes['79']} of telegram:79")
    await rig.adapter.wait_sent(2, chat="77")
    assert "approved" in rig.adapter.texts("77")[1]
    await rig.adapter.say("thanks!", user="77")
    await rig.adapter.wait_sent(3, chat="77")
    assert rig.adapter.texts("77")[2] == "echo: thanks!"
    # the denied person asks again and gets a new code (within the daily cap)
    await rig.adapter.say("please?", user="78")
    await rig.adapter.wait_sent(2, chat="78")
    assert rig.adapter.texts("78")[1].split("\n\n")[1] != codes["78"]
    await rig.gateway.stop()


async def test_block_ignores_someone_everywhere_and_survives_a_restart(
    home: Path, archive: Archive
) -> None:
    rig = Rig(home, archive, config())
    await rig.gateway.start()
    await rig.adapter.say("/pair block telegram:1", user=ADMIN)
    await rig.adapter.say(f"/pair block telegram:{ADMIN}", user=ADMIN)
    await rig.adapter.say("/pair block nonsense", user=ADMIN)
    await rig.adapter.wait_sent(3, chat=ADMIN)
    blocked, refused, bad = rig.adapter.texts(ADMIN)
    assert blocked.startswith("Blocked telegram:1")
    assert "is an admin" in refused and "is not PLATFORM:ID" in bad
    await rig.gateway.stop()

    again = Rig(home, archive, config())  # a restart: the block is in pairing.json
    await again.gateway.start()
    group: InChat = {"chat": "-100", "chat_type": "group"}
    await again.adapter.say("hello", user="1")
    await again.adapter.say("/status", user="1")
    await again.adapter.say("/memory approve 1", user="1", callback=True, command=False)
    await again.adapter.say("@bot hi", user="1", mention=True, **group)
    await again.adapter.say("/help", user="1", **group)
    await again.adapter.say("hello", user="2")
    await again.adapter.wait_sent(1, chat="2")
    await asyncio.sleep(0.2)
    assert [s.message.chat_id for s in again.adapter.sent] == ["2"]
    assert len(again.model.requests) == 1
    await again.adapter.say("/pair list", user=ADMIN)
    await again.adapter.say("/pair unblock telegram:1", user=ADMIN)
    await again.adapter.wait_sent(2, chat=ADMIN)
    listing, unblocked = again.adapter.texts(ADMIN)
    assert listing.endswith("Blocked (1):\n  telegram:1")
    assert unblocked.startswith("Unblocked telegram:1")
    await again.adapter.say("back?", user="1")
    await again.adapter.wait_sent(1, chat="1")
    assert again.adapter.texts("1") == ["echo: back?"]
    await again.gateway.stop()


async def test_pair_list_says_how_long_each_code_has_left(home: Path, archive: Archive) -> None:
    clock = Clock()
    rig = Rig(home, archive, config(), clock=clock)
    await rig.gateway.start()
    await rig.adapter.say("hi", user="77", name="Stranger")
    await rig.adapter.wait_sent(1, chat="77")
    clock.now += 17 * 60 + 5
    await rig.adapter.say("/pair list", user=ADMIN)
    await rig.adapter.wait_sent(1, chat=ADMIN)
    code = rig.adapter.texts("77")[0].split("\n\n")[1]
    [listing] = rig.adapter.texts(ADMIN)
    assert f"  {code} — telegram:77, calls themselves “Stranger”, 42 minutes left" in listing
    await rig.gateway.stop()


async def test_with_no_admin_on_the_platform_nobody_is_told(
    home: Path, archive: Archive, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = config().model_copy(
        update={"gateway": config().gateway.model_copy(update={"admins": ["discord:9"]})}
    )
    rig = Rig(home, archive, cfg)
    rig.gateway.pairing_desk.notices.batch_s = 0.0
    caplog.set_level("INFO", logger="gateway.pairing.notices")
    await rig.gateway.start()
    await rig.adapter.say("hi", user="77")
    await rig.adapter.wait_sent(1, chat="77")
    await asyncio.sleep(0.1)
    await rig.gateway.stop()
    assert [s.message.chat_id for s in rig.adapter.sent] == ["77"]
    assert "no admin on telegram to tell" in caplog.text


def test_a_burst_of_300_strangers_costs_each_admin_a_handful_of_messages(tmp_path: Path) -> None:
    now = [0.0]
    store = PairingStore(tmp_path / "pairing.json")
    notices = AdminNotices(
        store=store,
        admins=lambda platform: ["9", "10"] if platform == "telegram" else [],
        post=None,  # type: ignore[arg-type]  # due() is driven by hand here
        batch_s=30,
        gap_s=300,
        clock=lambda: now[0],
    )
    told: dict[str, list[tuple[float, int]]] = {"9": [], "10": []}
    for second in range(1200):
        now[0] = float(second)
        if second % 2 == 0 and second < 600:  # 300 strangers over ten minutes
            n = second // 2
            notices.add(PairingRequest("telegram", f"telegram:{n}", "x", None, f"C{n:07d}"))
        for _platform, admin, requests in notices.due():
            told[admin].append((now[0], len(requests)))
    for admin, notes in told.items():
        assert [at for at, _ in notes] == [30.0, 330.0, 630.0], admin
        assert sum(count for _, count in notes) == 300
    assert notices.next_due() is None and notices.queued == 0


def test_a_notice_lists_a_few_and_counts_the_rest() -> None:
    from gateway.pairing.store import PendingCode

    requests = [
        PairingRequest("telegram", f"telegram:{n}", f"P{n}", None, f"C{n}") for n in range(7)
    ]
    waiting = {
        f"C{n}": PendingCode(f"C{n}", f"telegram:{n}", f"P{n}", 1000.0 + 60 * n) for n in range(12)
    }
    text, buttons = admin_notice(requests, waiting, now=0.0)
    lines = text.splitlines()
    assert lines[0] == "7 new pairing requests on Telegram:"
    assert lines[1] == "• telegram:0 (calls themselves “P0”): code C0, 16 minutes left"
    assert (
        "… and 2 more." in lines and "12 codes are waiting on Telegram in all: /pair list." in lines
    )
    assert len(buttons) == 2 * SHOWN
