"""The authorization choke point: deny by default, pairing, admins, groups."""

from __future__ import annotations

import dataclasses
import stat
from datetime import UTC, datetime
from pathlib import Path

from adapters import Identity, InboundMessage
from gateway.auth import CODE_ALPHABET, MAX_CODES_PER_DAY, Access, Auth, PairingStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def dm(user: str = "7", *, bot: bool = False) -> InboundMessage:
    return InboundMessage(
        platform="telegram", chat_id=user, chat_type="dm",
        sender=Identity("telegram", user, "Ada", is_bot=bot), text="hi", message_id="1",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )  # fmt: skip


def group(user: str, chat: str = "-100") -> InboundMessage:
    return dataclasses.replace(dm(user), chat_id=chat, chat_type="group")


def make(tmp_path: Path, clock: Clock, access: Access | None = None) -> Auth:
    return Auth(access or Access(), PairingStore(tmp_path / "pairing.json", clock=clock))


def test_deny_by_default_and_pairing_for_a_dm(tmp_path: Path) -> None:
    clock = Clock()
    auth = make(tmp_path, clock)
    first = auth.check(dm()).offer
    assert first is not None and first.new
    assert len(first.code) == 8 and set(first.code) <= set(CODE_ALPHABET)
    written = (tmp_path / "pairing.json").stat().st_ino
    again = auth.check(dm()).offer
    assert again is not None and again.code == first.code and not again.new  # the same code
    assert (tmp_path / "pairing.json").stat().st_ino == written  # and the file is not rewritten
    assert auth.pairing.approve(first.code.lower()) == "telegram:7"
    assert auth.check(dm()).action == "allow"
    assert stat.S_IMODE((tmp_path / "pairing.json").stat().st_mode) == 0o600
    # approvals persist: a new store over the same file agrees
    other = Auth(Access(), PairingStore(tmp_path / "pairing.json", clock=clock))
    assert other.check(dm()).action == "allow"
    assert other.pairing.revoke("telegram:7") and other.check(dm()).action == "pair"


def test_codes_expire_and_attempts_are_few(tmp_path: Path) -> None:
    clock = Clock()
    auth = make(tmp_path, clock)
    codes = []
    for _ in range(MAX_CODES_PER_DAY):
        offer = auth.check(dm()).offer
        assert offer is not None and offer.new
        codes.append(offer.code)
        clock.now += 3601  # the code expired: a new one is issued
    assert len(set(codes)) == MAX_CODES_PER_DAY
    assert auth.pairing.approve(codes[0]) is None  # expired
    assert auth.check(dm()).action == "ignore"  # attempts used up for today
    clock.now += 86_400
    assert auth.check(dm()).action == "pair"


def test_allowlists_admins_groups_and_bots(tmp_path: Path) -> None:
    clock = Clock()
    auth = make(tmp_path, clock, Access(
        allowed_users={"telegram": frozenset({"7"})},
        allowed_chats={"telegram": frozenset({"-100"})},
        admins=frozenset({"telegram:1"}),
    ))  # fmt: skip
    assert auth.check(dm("7")).action == "allow" and not auth.check(dm("7")).admin
    admin = auth.check(dm("1"))
    assert admin.action == "allow" and admin.admin
    assert auth.check(group("7")).action == "allow"
    assert auth.check(group("8")).action == "ignore"  # unknown people in groups: silence
    assert auth.check(group("7", chat="-999")).action == "ignore"  # chat not allowed
    assert auth.check(dm("7", bot=True)).action == "ignore"
    assert (
        not (tmp_path / "pairing.json").exists()
        or "8" not in (tmp_path / "pairing.json").read_text()
    )
    star = make(tmp_path, clock, Access(allowed_users={"telegram": frozenset({"*"})}))
    assert star.check(dm("12345")).action == "allow"


def test_a_corrupt_pairing_file_denies_and_is_kept_aside(tmp_path: Path) -> None:
    (tmp_path / "pairing.json").write_text("{broken", encoding="utf-8")
    auth = make(tmp_path, Clock())
    assert auth.check(dm()).action == "pair"  # nobody is approved; nothing crashed
    (aside,) = tmp_path.glob("pairing.json.corrupt.*")
    assert aside.read_text(encoding="utf-8") == "{broken"
