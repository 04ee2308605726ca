"""The Discord side of an end-to-end conversation: the fake REST + gateway, pushed events.

People are Discord users whose ids are the scenario's small numbers (``ALICE`` = 1 ...), so
``discord:1`` names Alice in config and commands. Commands arrive as application-command
interactions (``/memory args:notes``), their answers as the interaction's response.
What the bot said is what it posted (``messages``): an edit of a message it had sent is
not a new message (``shown`` reads a message as edited)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from tests.e2e.stack import ADMIN, ALICE, BOB, STRANGER
from tests.fakes.discord_models import buttons_of
from tests.fakes.discord_server import FakeDiscord, FakeUser, Sent


class DiscordDriver:
    platform = "discord"

    def __init__(self, dc: FakeDiscord) -> None:
        self.dc = dc
        self.token = dc.token
        guild = dc.add_guild("home")
        self.channel = dc.add_channel(guild, "general")
        self.group_chat = str(self.channel)
        self.thread_channel = dc.add_thread(self.channel, "planning")
        self.thread_key = f"{self.channel}:{self.thread_channel}"
        self.users: dict[int, FakeUser] = {}
        self.dms: dict[int, int] = {}
        for uid, name in ((ALICE, "alice"), (BOB, "bob"), (ADMIN, "admin"), (STRANGER, "x")):
            user = dc.add_user(name, id=uid, global_name=name.capitalize())
            self.users[uid] = user
            self.dms[uid] = dc.add_dm(user)

    def rename(self, user: int, name: str) -> None:
        """From now on ``user`` writes under the display name ``name`` (their global name)."""
        renamed = dataclasses.replace(self.users[user], global_name=name)
        self.users[user] = self.dc.users[user] = renamed

    def config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "api_base": self.dc.api_base,
            "gateway_url": self.dc.gateway_url,
            "ready_wait_s": 0.05,
            "allowed_users": [str(ALICE), str(BOB), str(ADMIN)],
            "allowed_chats": [self.group_chat],
        }

    def dm_chat(self, user: int) -> str:
        return str(self.dms[user])

    async def dm(self, user: int, text: str) -> Any:
        return await self.dc.push_message(self.dms[user], self.users[user], text)

    async def group(self, user: int, text: str, *, mention: bool = False) -> Any:
        if mention:
            text = f"<@{self.dc.bot.id}> {text}"
        return await self.dc.push_message(self.channel, self.users[user], text)

    async def thread(self, user: int, text: str) -> Any:
        """A message in a thread of the channel, mentioning the bot."""
        text = f"<@{self.dc.bot.id}> {text}"
        return await self.dc.push_message(self.thread_channel, self.users[user], text)

    def messages(self, channel: int | None = None) -> list[Sent]:
        """What the bot posted (in ``channel``), in order; edits are not messages."""
        return [s for s in self.dc.sent if s.kind != "edit" and channel in (None, s.channel_id)]

    async def thread_replies(self, n: int, *, within: float = 10) -> list[str]:
        return await self.replies(str(self.thread_channel), n, within=within)

    async def command(self, user: int, text: str, *, group: bool = False) -> Any:
        name, _, rest = text.removeprefix("/").partition(" ")
        channel = self.channel if group else self.dms[user]
        options = {"args": rest} if rest else None
        return await self.dc.push_interaction(name, options, self.users[user], channel)

    async def typed_in_group(self, user: int, text: str) -> Any:
        """A command typed as a message in the channel (not an application command)."""
        return await self.dc.push_message(self.channel, self.users[user], text)

    def close_private_chat(self, user: int) -> None:
        self.dc.forbid(self.dms[user], 50007)  # "Cannot send messages to this user"

    def _private(self, user: int) -> list[str]:
        """What ``user`` alone sees: their DM, and ephemeral answers to their commands."""
        mine = {i for i, it in self.dc.interactions.items() if it.user.id == user}
        return [
            s.content
            for s in self.messages()
            if s.channel_id == self.dms[user] or (s.ephemeral and s.interaction_id in mine)
        ]

    async def private_texts(self, user: int, n: int, *, within: float = 10) -> list[str]:
        await self.dc.wait_for(lambda: len(self._private(user)) >= n, within)
        return self._private(user)

    def public_texts(self) -> list[str]:
        return [s.content for s in self.messages(self.channel) if not s.ephemeral]

    async def redeliver(self, handle: Any) -> None:
        await self.dc.redeliver(handle)

    def flood(self, chat: str, seconds: int) -> None:
        self.dc.flood(int(chat), seconds)

    def unavailable(self, chat: str, times: int) -> None:
        self.dc.fail_next(503, times=times, method="POST", path=rf"/channels/{chat}/messages")

    async def replies(self, chat: str, n: int, *, within: float = 10) -> list[str]:
        await self.dc.wait_for(lambda: len(self.messages(int(chat))) >= n, within)
        return [s.content for s in self.messages(int(chat))]

    def all_replies(self, chat: str) -> list[str]:
        return [s.content for s in self.messages(int(chat))]

    def sent_at(self, chat: str) -> list[float]:
        return [s.time for s in self.messages(int(chat))]

    def sent_count(self) -> int:
        return len(self.messages())

    def _buttons(self, message_id: int) -> list[tuple[str, str]]:
        """The buttons a message shows now (after any edit), as (label, custom_id)."""
        return buttons_of(self.dc.messages[message_id].get("components") or [])

    async def press(self, user: int, label: str) -> Any:
        """``user`` presses the button ``label`` (a real component) of the latest message
        that shows it to them now: in their DM, or an ephemeral answer to them in a
        channel. Discord sends a MESSAGE_COMPONENT interaction; the handle is the message id."""
        mine = {i for i, it in self.dc.interactions.items() if it.user.id == user}
        for sent in reversed(self.dc.sent):
            visible = sent.channel_id == self.dms[user] or (
                sent.ephemeral and sent.interaction_id in mine
            )
            if visible and label in dict(self._buttons(sent.message_id)):
                custom_id = dict(self._buttons(sent.message_id))[label]
                await self.dc.press(sent.message_id, custom_id, self.users[user])
                return sent.message_id
        raise AssertionError(f"no button {label!r} shown to {user}")

    async def shown(
        self, user: int, handle: Any, *, edits: int = 0, within: float = 10
    ) -> tuple[str, list[str]]:
        def edited() -> int:
            return sum(1 for s in self.dc.sent if s.kind == "edit" and s.message_id == handle)

        await self.dc.wait_for(lambda: edited() >= edits, within)
        return str(self.dc.messages[handle]["content"]), [t for t, _ in self._buttons(handle)]

    def left_thinking(self) -> int:
        """Slash commands whose deferred "thinking…" was neither filled nor withdrawn."""
        return sum(
            1
            for i in self.dc.interactions.values()
            if i.kind == 2 and i.callback is not None and i.callback.type == 5
            and i.original_id is None and not i.withdrawn
        )  # fmt: skip

    def presses_acknowledged(self) -> int:
        """Callbacks to presses (the fake refuses one after Discord's 3 seconds)."""
        return sum(1 for c in self.dc.callbacks if self.dc.interactions[c.interaction_id].kind == 3)

    def sent_files(self, chat: str) -> list[tuple[str, bytes]]:
        return [f for s in self.dc.sent if s.channel_id == int(chat) for f in s.files]

    def code_blocks(self, chat: str) -> list[tuple[int, int]]:
        counts = [s.content.count("```") for s in self.messages(int(chat))]
        return [(n - n // 2, n // 2) for n in counts]

    def registered_commands(self) -> list[str]:
        guild = [c for commands in self.dc.guild_commands.values() for c in commands]
        return [str(c["name"]) for c in [*self.dc.commands, *guild]]

    def typing_shown(self, chat: str) -> int:
        return sum(1 for channel, _ in self.dc.typing if channel == int(chat))

    async def malformed(self, user: int) -> dict[str, int]:
        """Dispatch, in ``user``'s DM, events the adapter must skip; how many of each reason
        (``adapters.skips``) they should count."""
        author, channel = self.users[user], self.dms[user]
        breaks: tuple[Callable[[dict[str, Any]], object], ...] = (
            lambda p: p.update(author="alice"),  # discord.py's parser raises on these two
            lambda p: p.pop("channel_id"),
            lambda p: p.update(content=5),  # normalize cannot map this one
        )
        for broken in breaks:
            payload = self.dc.message_payload(channel, author, "a broken message")
            broken(payload)
            await self.dc.dispatch("MESSAGE_CREATE", payload)
        command = self.dc.interaction_payload("help", None, author, channel).payload
        del command["data"]["name"]  # the command tree cannot read it
        await self.dc.dispatch("INTERACTION_CREATE", command)
        return {"unparsable": 3, "unnormalisable": 1}
