"""``menus.menu_for``: the gateway's commands spelled the way Telegram takes them (pure;
setMyCommands and editMessageText over the wire: test_client.py)."""

from __future__ import annotations

from adapters.base import BotCommand
from adapters.telegram.menus import menu_for


def entries(commands: list[BotCommand]) -> list[tuple[str, str]]:
    return [(c.command, c.description) for c in menu_for(commands)]


def test_names_are_respelled_lower_case_with_underscores() -> None:
    menu = [BotCommand("Rotate-Logs", "Rotate"), BotCommand("skill.run", "Run a skill")]
    assert entries(menu) == [("rotate_logs", "Rotate"), ("skill_run", "Run a skill")]


def test_unusable_and_taken_names_stay_out_and_the_first_spelling_wins() -> None:
    menu = [
        BotCommand("deploy-app", "first"),
        BotCommand("deploy_app", "second"),
        BotCommand("a" * 33, "too long"),
        BotCommand("café", "not ascii"),
        BotCommand("", "empty"),
    ]
    assert entries(menu) == [("deploy_app", "first")]


def test_descriptions_are_cut_to_256_and_an_empty_one_is_the_name() -> None:
    menu = [BotCommand("long", "d" * 300), BotCommand("bare", "")]
    assert entries(menu) == [("long", "d" * 256), ("bare", "bare")]


def test_at_most_100_entries() -> None:
    menu = [BotCommand(f"c{i}", f"command {i}") for i in range(120)]
    made = entries(menu)
    assert len(made) == 100 and made[-1] == ("c99", "command 99")
