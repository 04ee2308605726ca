"""The pairing state: caps that evict instead of refusing, deny, block, and time left; on both
backends (``storage``: the file on disk, a row in PostgreSQL)."""

from __future__ import annotations

import dataclasses
import json
import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters import ChatType, Identity, InboundMessage
from gateway.auth import Access, Auth
from gateway.pairing.store import (
    CODE_TTL_S,
    MAX_CODES_PER_DAY,
    MAX_PENDING,
    PairingStore,
    qualified_id,
    time_left,
)
from tests.stores import Storage


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def dm(user: str, chat_type: ChatType = "dm") -> InboundMessage:
    return InboundMessage(
        platform="telegram", chat_id=user if chat_type == "dm" else "-100",
        chat_type=chat_type, sender=Identity("telegram", user, "Ada"),
        text="hi", message_id="1", timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(storage: Storage, clock: Clock) -> PairingStore:
    return PairingStore(storage.pairing_documents(), clock=clock)


def stored(store: PairingStore) -> dict[str, Any]:
    document = store.documents.read(store.name)
    assert document.raw is not None
    return dict(json.loads(document.raw))


def test_the_pending_cap_evicts_the_oldest_codes_and_says_so(
    store: PairingStore, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    first = store.request("telegram:1", "first\x1b[2J")
    for n in range(2, MAX_PENDING + 1):
        clock.now += 1
        assert store.request(f"telegram:{n}", "Mallory") is not None
    assert len(store.listing().pending) == MAX_PENDING
    caplog.set_level(logging.WARNING, logger="gateway.pairing.store")
    clock.now += 1
    newcomer = store.request("telegram:newcomer", "Real Person", "newcomer")
    assert newcomer is not None and newcomer.new  # a real newcomer still gets a code
    codes = {p.code: p.who for p in store.listing().pending}
    assert len(codes) == MAX_PENDING and codes[newcomer.code] == "telegram:newcomer"
    assert first is not None and first.code not in codes  # the oldest made room
    assert store.approve(first.code) is None
    [record] = caplog.records
    assert "evicted the 1 oldest" in record.getMessage()
    assert "telegram:" not in record.getMessage() and "Mallory" not in record.getMessage()


def test_a_waiting_or_capped_stranger_costs_no_write(store: PairingStore, clock: Clock) -> None:
    offer = store.request("telegram:7", "Ada", "7")
    assert offer is not None and offer.new and offer.expires_at == clock.now + CODE_TTL_S
    written = store.documents.version(store.name)
    for _ in range(50):
        clock.now += 30
        again = store.request("telegram:7", "Ada", "7")
        assert again is not None and again.code == offer.code and not again.new
    assert store.documents.version(store.name) == written
    for _ in range(MAX_CODES_PER_DAY - 1):
        clock.now += CODE_TTL_S
        assert store.request("telegram:7", "Ada", "7") is not None
    clock.now += CODE_TTL_S
    assert store.request("telegram:7", "Ada", "7") is None  # the day's codes are used up
    capped = store.documents.version(store.name)
    for _ in range(20):
        assert store.request("telegram:7", "Ada", "7") is None
    assert store.documents.version(store.name) == capped
    clock.now += 86_400
    later = store.request("telegram:7", "Ada", "7")
    assert later is not None and later.new


def test_deny_drops_the_code_and_they_may_ask_again_within_the_cap(
    store: PairingStore, clock: Clock
) -> None:
    offer = store.request("telegram:7", "Ada", "7")
    assert offer is not None
    assert store.deny(offer.code.lower()) == "telegram:7"
    assert store.deny(offer.code) is None and store.approve(offer.code) is None
    again = store.request("telegram:7", "Ada", "7")
    assert again is not None and again.new and again.code != offer.code
    assert store.listing().approved == ()


def test_block_is_silent_everywhere_persists_and_beats_allowlists(
    storage: Storage, store: PairingStore, clock: Clock
) -> None:
    access = Access(
        allowed_users={"telegram": frozenset({"*"})},
        allowed_chats={"telegram": frozenset({"-100"})},
        admins=frozenset({"telegram:1"}),
    )
    offer = store.request("telegram:7", "Ada", "7")
    assert offer is not None and store.approve(offer.code) == "telegram:7"
    pending = store.request("telegram:8", "Bo", "8")
    assert store.block("telegram:7") and store.block("telegram:8") and store.block("telegram:1")
    assert not store.block("telegram:7")
    listing = store.listing()
    assert listing.approved == () and listing.pending == ()  # approval and code are gone
    assert set(listing.blocked) == {"telegram:7", "telegram:8", "telegram:1"}
    assert pending is not None and store.approve(pending.code) is None
    # a new process (a restart) reads the same state
    auth = Auth(access, PairingStore(storage.replica().pairing_documents(), clock=clock))
    for who in ("7", "8"):
        for message in (dm(who), dm(who, "group")):
            verdict = auth.check(message)
            assert verdict.action == "ignore" and verdict.reason == "blocked"
    assert auth.check(dm("1")).action == "allow"  # an admin cannot be locked out
    assert auth.check(dm("9")).action == "allow"
    assert auth.pairing.unblock("telegram:7") and not auth.pairing.unblock("telegram:7")
    assert auth.check(dm("7")).action == "allow"  # "*" lets them in again, unapproved
    assert "telegram:7" not in auth.pairing.listing().approved


def test_the_file_forgets_old_requests_and_chats(store: PairingStore, clock: Clock) -> None:
    for n in range(5):
        store.request(f"telegram:{n}", "x", str(n))
    clock.now += 86_401
    store.request("telegram:new", "y", "new")
    data = stored(store)
    assert list(data["requests"]) == ["telegram:new"]
    assert list(data["chats"]) == ["telegram:new"]
    assert [p["who"] for p in data["pending"]] == ["telegram:new"]


def test_listing_is_oldest_first_with_expiry(store: PairingStore, clock: Clock) -> None:
    store.request("telegram:1", "One")
    clock.now += 60
    store.request("telegram:2", "Two")
    listing = store.listing()
    assert [(p.who, p.name) for p in listing.pending] == [
        ("telegram:1", "One"),
        ("telegram:2", "Two"),
    ]
    assert listing.pending[1].expires_at - clock.now == CODE_TTL_S
    clock.now += CODE_TTL_S - 30
    assert [p.who for p in store.listing().pending] == ["telegram:2"]


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (3600, "1 hour"),
        (3599, "59 minutes"),
        (43 * 60 + 59, "43 minutes"),
        (61, "1 minute"),
        (59, "less than a minute"),
        (0, "less than a minute"),
        (2 * 3600 + 5 * 60, "2 hours 5 minutes"),
    ],
)
def test_time_left_is_rounded_down(seconds: float, said: str) -> None:
    assert time_left(seconds) == said


def test_qualified_ids() -> None:
    assert qualified_id(" Telegram:123 ") == "telegram:123"
    assert qualified_id("discord:456") == "discord:456"
    for bad in ("telegram-123", "telegram:", ":123", "tele gram:1", "telegram:1 2", ""):
        assert qualified_id(bad) is None, bad


def test_a_stranger_in_a_group_gets_no_code(store: PairingStore, clock: Clock) -> None:
    auth = Auth(Access(allowed_chats={"telegram": frozenset({"-100"})}), store)
    assert auth.check(dataclasses.replace(dm("7", "group"))).action == "ignore"
    assert store.listing().pending == ()


def test_a_gateway_takes_only_the_welcomes_of_its_own_platforms(storage: Storage) -> None:
    store = PairingStore(storage.pairing_documents())
    ada = store.request("telegram:7", "Ada", "7")
    bob = store.request("discord:8", "Bob", "80")
    assert ada is not None and bob is not None
    assert store.approve(ada.code) == "telegram:7" and store.approve(bob.code) == "discord:8"
    assert store.take_welcomes({"console"}) == []  # `mnemo chat` leaves them for `mnemo run`
    assert store.take_welcomes({"telegram"}) == [("telegram:7", "7")]
    assert store.take_welcomes({"telegram"}) == []  # each once
    assert store.take_welcomes() == [("discord:8", "80")]
