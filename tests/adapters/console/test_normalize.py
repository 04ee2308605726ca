"""A typed line as the gateway sees it."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters import Identity
from adapters.console import normalize

ADA = Identity("console", "ada", "ada")
NOW = datetime(2026, 1, 2, tzinfo=UTC)


def test_a_line_is_a_message_in_the_sessions_private_chat() -> None:
    message = normalize("  hello there \n", sender=ADA, chat_id="console-ada:garden",
                        message_id="m1", now=NOW)  # fmt: skip
    assert message is not None
    assert (message.platform, message.chat_type, message.chat_id) == (
        "console",
        "dm",
        "console-ada:garden",
    )
    assert message.text == "hello there" and not message.is_command
    assert message.sender.person == "console-ada" and message.sender.qualified == "console:ada"
    assert message.dedup_key == "console:console-ada:garden:m1"


def test_commands_and_blank_lines() -> None:
    command = normalize("/memory notes", sender=ADA, chat_id="c", message_id="1", now=NOW)
    assert command is not None and command.is_command and command.text == "/memory notes"
    assert normalize(" \t\n", sender=ADA, chat_id="c", message_id="2", now=NOW) is None
