"""Telegram's menus: the command menu (setMyCommands) and the text and buttons of a message
the bot sent (editMessageText).

Command menu. ``set_commands`` registers everyone's commands in the default scope and, in
each admin's own chat (``BotCommandScopeChat``), the admin commands too. An admin who has
not started the bot yet has no chat to scope: Telegram refuses that one, which is logged,
and the other admins still get theirs. ``menu_for`` spells the names the way Telegram takes
them.

Edits. ``edit`` replaces a message's text (plain) and inline keyboard; without
``reply_markup`` Telegram drops the keyboard, so no buttons removes them all. An edit that
changes nothing ("message is not modified") is taken as done.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from telegram import BotCommand as TgBotCommand
from telegram import BotCommandScopeChat
from telegram import error as tg
from telegram.ext import ExtBot

from adapters.base import BadRequest, BotCommand, PlatformError
from adapters.messages import Button
from adapters.telegram.errors import call, translate
from adapters.telegram.render import keyboard
from adapters.telegram.sending import chat_id

__all__ = ["edit", "menu_for", "set_commands"]

_LOGGER = logging.getLogger(__name__)
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")


def menu_for(commands: Sequence[BotCommand]) -> list[TgBotCommand]:
    """Telegram menu entries: names take only ``[a-z0-9_]{1,32}``, so ``-`` and ``.`` are
    spelled ``_`` (``rotate-logs`` -> ``/rotate_logs``, which the gateway maps back); a
    name still unusable, or taken already, stays out of the menu (typed, it still works).
    At most 100 entries, descriptions cut to 256 characters."""
    menu: dict[str, TgBotCommand] = {}
    for command in commands:
        name = command.name.lower().replace("-", "_").replace(".", "_")
        if _COMMAND_NAME.fullmatch(name) and name not in menu:
            menu[name] = TgBotCommand(name, (command.description or name)[:256])
    return list(menu.values())[:100]


async def set_commands(
    bot: Callable[[], ExtBot[Any]],
    commands: Sequence[BotCommand],
    admins: Sequence[str],
    *,
    token: str,
) -> None:
    """Register the menu (``menu_for``): everyone's commands in the default scope, with the
    admin commands too in each admin's own chat. ``bot`` gives the running bot for each call
    (``Unavailable`` once the adapter stopped)."""
    everyone = menu_for([c for c in commands if not c.admin])
    await call(bot().set_my_commands(everyone), "setMyCommands", token=token)
    full = menu_for(commands)
    for admin in admins:
        if not admin.isdigit():
            continue
        try:
            await call(
                bot().set_my_commands(full, scope=BotCommandScopeChat(int(admin))),
                "setMyCommands",
                token=token,
            )
        except PlatformError as exc:
            _LOGGER.warning("telegram: no admin menu for admin %s yet: %s", admin, exc)


async def edit(
    bot: Callable[[], ExtBot[Any]],
    chat: str,
    message_id: str,
    text: str,
    buttons: tuple[Button, ...],
    *,
    token: str,
) -> None:
    """editMessageText, plain; ``NotFound`` when the message is gone."""
    if not message_id.isdigit():
        raise BadRequest(f"telegram: a message id is a number, not {message_id!r}")
    try:
        await bot().edit_message_text(
            text, chat_id=chat_id(chat), message_id=int(message_id), reply_markup=keyboard(buttons)
        )
    except tg.BadRequest as exc:
        if "message is not modified" not in exc.message.lower():  # else: already so
            raise translate(exc, (), "editMessageText", token=token) from None
    except tg.TelegramError as exc:
        raise translate(exc, (), "editMessageText", token=token) from None
