"""The Telegram side of an end-to-end conversation: the fake Bot API, pushed updates."""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.stack import ADMIN, ALICE, BOB
from tests.fakes.telegram_server import DEFAULT_TOKEN, FakeBotAPI

GROUP = -100500
TOPIC = 7


class TelegramDriver:
    platform = "telegram"
    group_chat = str(GROUP)

    def __init__(self, api: FakeBotAPI) -> None:
        self.api = api
        self.names: dict[int, str] = {}

    def rename(self, user: int, name: str) -> None:
        """From now on ``user`` writes under the display name ``name`` (their first name)."""
        self.names[user] = name

    def _sender(self, user: int) -> int | dict[str, Any]:
        name = self.names.get(user)
        return user if name is None else self.api.user(user, first_name=name)

    token = DEFAULT_TOKEN

    def config(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "base_url": self.api.base_url,
            "allowed_users": [str(ALICE), str(BOB), str(ADMIN)],
            "allowed_chats": [self.group_chat],
        }

    def dm_chat(self, user: int) -> str:
        return str(user)

    async def dm(self, user: int, text: str) -> Any:
        return self.api.push_text(user, user, text)

    async def group(self, user: int, text: str, *, mention: bool = False) -> Any:
        if mention:
            text = f"@{self.api.username} {text}"
        return self.api.push_text(GROUP, self._sender(user), text, chat_type="supergroup")

    thread_key = f"{GROUP}:{TOPIC}"

    async def thread(self, user: int, text: str) -> Any:
        """A message in a forum topic of the group, mentioning the bot."""
        text = f"@{self.api.username} {text}"
        return self.api.push_text(GROUP, user, text, chat_type="supergroup", thread_id=TOPIC)

    async def thread_replies(self, n: int, *, within: float = 10) -> list[str]:
        """The first ``n`` messages sent into the topic (waiting for them)."""
        count = n
        while True:  # each wait is bounded; the group's other messages are skipped
            sent = await self.api.wait_sent(count, chat_id=GROUP, timeout=within)
            topic = [s.text for s in sent if s.thread_id == TOPIC]
            if len(topic) >= n:
                return topic[:n]
            count += n - len(topic)

    async def command(self, user: int, text: str, *, group: bool = False) -> Any:
        if group:
            name, _, rest = text.partition(" ")
            text = f"{name}@{self.api.username} {rest}".strip()
            return self.api.push_text(GROUP, user, text, chat_type="supergroup")
        return self.api.push_text(user, user, text)

    async def typed_in_group(self, user: int, text: str) -> Any:
        return await self.command(user, text, group=True)

    def close_private_chat(self, user: int) -> None:
        """Nothing to do: someone who never wrote to the bot privately cannot be written
        to (the fake answers 403, as Telegram does)."""

    async def private_texts(self, user: int, n: int, *, within: float = 10) -> list[str]:
        return await self.replies(str(user), n, within=within)

    def public_texts(self) -> list[str]:
        return self.all_replies(self.group_chat)

    async def redeliver(self, handle: Any) -> None:
        self.api.redeliver(handle)

    def flood(self, chat: str, seconds: int) -> None:
        self.api.flood(int(chat), retry_after=seconds)

    def unavailable(self, chat: str, times: int) -> None:
        self.api.fail("sendMessage", 502, "Bad Gateway", times=times, chat_id=int(chat))

    async def replies(self, chat: str, n: int, *, within: float = 10) -> list[str]:
        sent = await self.api.wait_sent(n, chat_id=int(chat), timeout=within)
        return [s.text for s in sent]

    def all_replies(self, chat: str) -> list[str]:
        return [s.text for s in self.api.sent if s.chat_id == int(chat)]

    def sent_at(self, chat: str) -> list[float]:
        return [s.time for s in self.api.sent if s.chat_id == int(chat)]

    def sent_count(self) -> int:
        return len(self.api.sent)

    def registered_commands(self) -> list[str]:
        return [c["command"] for commands in self.api.commands.values() for c in commands]

    def typing_shown(self, chat: str) -> int:
        return sum(
            1
            for c in self.api.calls_of("sendChatAction")
            if str(c.params.get("chat_id")) == chat and c.params.get("action") == "typing"
        )

    def _buttons(self, chat: int, message_id: int) -> list[tuple[str, str]]:
        """The inline buttons a message shows now (after any edit)."""
        rows = (self.api.message(chat, message_id).get("reply_markup") or {}).get(
            "inline_keyboard", []
        )
        return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]

    async def press(self, user: int, label: str) -> Any:
        """``user`` presses the button ``label`` under the latest message in their private
        chat that shows it now: a callback query, as Telegram delivers it, carrying the
        message as it is. The handle is the message id."""
        for sent in reversed(self.api.sent):
            if sent.chat_id == user and label in dict(self._buttons(user, sent.message_id)):
                data = dict(self._buttons(user, sent.message_id))[label]
                self.api.push_callback(user, user, data, sent.message_id)
                return sent.message_id
        raise AssertionError(f"no button {label!r} in the private chat of {user}")

    async def shown(
        self, user: int, handle: Any, *, edits: int = 0, within: float = 10
    ) -> tuple[str, list[str]]:
        def edited() -> int:
            return sum(1 for e in self.api.edits if (e.chat_id, e.message_id) == (user, handle))

        await self.api.wait_for(lambda: edited() >= edits, within)
        return (
            str(self.api.message(user, handle)["text"]),
            [text for text, _ in self._buttons(user, handle)],
        )

    def left_thinking(self) -> int:
        return 0  # a Telegram command is a message: nothing is held open

    def presses_acknowledged(self) -> int:
        return len(self.api.answered_callbacks)

    def sent_files(self, chat: str) -> list[tuple[str, bytes]]:
        return [s.document for s in self.api.sent if s.chat_id == int(chat) and s.document]

    def code_blocks(self, chat: str) -> list[tuple[int, int]]:
        """Per message to ``chat``: (code blocks opened, code blocks closed) in what was sent."""
        return [
            (s.source.count("<pre"), s.source.count("</pre>"))
            for s in self.api.sent
            if s.chat_id == int(chat)
        ]

    async def malformed(self, user: int) -> dict[str, int]:
        """Push into ``user``'s private chat updates the adapter must skip; how many of
        each reason (``adapters.skips``) they should count."""

        def message(**changes: Any) -> dict[str, Any]:
            fields: dict[str, Any] = {
                "message_id": 90_000 + len(self.api.pending_updates),
                "from": self.api.user(user),
                "chat": {"id": user, "type": "private", "first_name": f"User{user}"},
                "date": int(time.time()),
                "text": "a broken update",
            }
            fields.update(changes)
            return {key: value for key, value in fields.items() if value is not None}

        for broken in (
            message(date="yesterday"),  # PTB cannot read these two
            message(chat="private"),
            message(chat=None),  # normalize cannot map these two
            message(chat={"id": user, "type": "martian"}),
        ):
            self.api.push_raw({"message": broken})
        return {"unparsable": 2, "unnormalisable": 2}
