"""The normalised message vocabulary."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from adapters import Identity, InboundMessage
from memory import validate_person


def message(**changes: object) -> InboundMessage:
    base = InboundMessage(
        platform="telegram",
        chat_id="-100123",
        chat_type="group",
        sender=Identity("telegram", "4242", "Ada"),
        text="hello",
        message_id="77",
        timestamp=datetime(2026, 11, 30, tzinfo=UTC),
        update_id="9001",
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_person_ids_are_the_ones_memory_accepts() -> None:
    for user_id in ("4242", "123456789012345678", "Alice.B"):
        person = Identity("discord", user_id).person
        assert validate_person(person) == person
    assert Identity("telegram", "4242").person == "telegram-4242"
    assert Identity("telegram", "4242").qualified == "telegram:4242"


def test_group_messages_are_for_the_bot_only_when_addressed() -> None:
    assert not message().addressed_to_bot
    assert message(mentions_bot=True).addressed_to_bot
    assert message(replies_to_bot=True).addressed_to_bot
    assert message(is_command=True).addressed_to_bot
    assert message(chat_type="dm").addressed_to_bot


def test_dedup_key_prefers_the_update_id() -> None:
    assert message().dedup_key == "telegram:-100123:9001"
    assert message(update_id=None).dedup_key == "telegram:-100123:77"


def test_messages_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        message().text = "changed"  # type: ignore[misc]
