"""The fake Discord, checked through a real ``discord.Client`` over loopback HTTP/WebSocket."""

from __future__ import annotations

import asyncio
import json
import time
import warnings
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
import yarl

with warnings.catch_warnings():  # discord.py imports the stdlib audioop, deprecated on 3.11+
    warnings.simplefilter("ignore", DeprecationWarning)
    import discord

from tests.fakes.discord_server import FakeDiscord, FakeUser

TOKEN = "fake-token-for-tests"


class _Recorder(discord.Client):
    """A plain discord.py client that queues what it receives."""

    def __init__(self) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(intents=intents, guild_ready_timeout=0.05, chunk_guilds_at_startup=False)
        self.messages: asyncio.Queue[discord.Message] = asyncio.Queue()
        self.interactions: asyncio.Queue[discord.Interaction] = asyncio.Queue()

    async def on_message(self, message: discord.Message) -> None:
        await self.messages.put(message)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self.interactions.put(interaction)


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point discord.py's two process-global hooks at a fake (restored after the test)."""

    def point(dc: FakeDiscord) -> None:
        monkeypatch.setattr(discord.http.Route, "BASE", dc.api_base)
        monkeypatch.setattr(
            discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(dc.gateway_url)
        )

    return point


@asynccontextmanager
async def connected(dc: FakeDiscord, token: str = TOKEN) -> AsyncIterator[_Recorder]:
    client = _Recorder()
    try:
        await client.login(token)
        task = asyncio.create_task(client.connect())
        try:
            async with asyncio.timeout(5):
                await client.wait_until_ready()
            yield client
        finally:
            await client.close()
            async with asyncio.timeout(5):
                await task
    finally:
        await client.close()


@pytest.fixture
async def dc(hooks: Any) -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(token=TOKEN, heartbeat_interval=0.2) as fake:
        hooks(fake)
        yield fake


async def test_login_identify_ready_and_cache(dc: FakeDiscord) -> None:
    guild = dc.add_guild("home")
    general = dc.add_channel(guild, "general")
    thread = dc.add_thread(general, "plans")
    async with connected(dc) as client:
        assert client.user is not None and client.user.id == dc.bot.id
        assert client.application_id == dc.application_id
        assert isinstance(client.get_channel(general), discord.TextChannel)
        cached = client.get_channel(thread)
        assert isinstance(cached, discord.Thread) and cached.parent_id == general
        assert dc.identify[0]["token"] == TOKEN
        assert dc.identify[0]["intents"] == client.intents.value
        assert client.intents.message_content
        assert dc.compression == ["zlib-stream"]
        await asyncio.sleep(0.5)  # a few heartbeats go by; ACKs keep the latency finite
        assert client.latency < 1.0
    paths = [(c.method, c.path) for c in dc.calls]
    assert ("GET", "/users/@me") in paths and ("GET", "/oauth2/applications/@me") in paths


async def test_frames_are_one_zlib_stream_with_sync_flush(dc: FakeDiscord) -> None:
    dc.add_guild("home")
    inflater = zlib.decompressobj()
    frames: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as session:
        url = dc.gateway_url + "?v=10&encoding=json&compress=zlib-stream"
        async with session.ws_connect(url) as ws:
            for _ in range(3):
                msg = await ws.receive(timeout=5)
                if not frames:
                    await ws.send_str(json.dumps({"op": 2, "d": {"token": TOKEN, "intents": 1}}))
                assert msg.type is aiohttp.WSMsgType.BINARY
                assert msg.data.endswith(b"\x00\x00\xff\xff")
                frames.append(json.loads(inflater.decompress(msg.data)))
    assert [f["op"] for f in frames] == [10, 0, 0]
    assert frames[0]["d"]["heartbeat_interval"] == 200
    assert [f["t"] for f in frames[1:]] == ["READY", "GUILD_CREATE"]
    assert [f["s"] for f in frames[1:]] == [1, 2]
    assert frames[1]["d"]["resume_gateway_url"] == dc.gateway_url


async def test_messages_reach_the_client_in_channels_threads_and_dms(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    thread = dc.add_thread(general)
    alice = dc.add_user("alice", global_name="Alice")
    dm = dc.add_dm(alice)
    async with connected(dc) as client:
        await dc.push_message(general, alice, f"<@{dc.bot.id}> hello")
        first = await asyncio.wait_for(client.messages.get(), 5)
        assert first.content == f"<@{dc.bot.id}> hello"
        assert [u.id for u in first.mentions] == [dc.bot.id]
        assert isinstance(first.author, discord.Member) and first.author.display_name == "Alice"
        await dc.push_message(thread, alice, "in the thread")
        second = await asyncio.wait_for(client.messages.get(), 5)
        assert isinstance(second.channel, discord.Thread)
        await dc.push_message(dm, alice, "privately")
        third = await asyncio.wait_for(client.messages.get(), 5)
        assert isinstance(third.channel, discord.DMChannel) and third.guild is None
        assert third.created_at.tzinfo is not None


async def test_sends_are_recorded_echoed_and_replies_resolve(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    alice = dc.add_user("alice")
    async with connected(dc) as client:
        channel = client.get_channel(general)
        assert isinstance(channel, discord.TextChannel)
        mine = await channel.send("from the bot", allowed_mentions=discord.AllowedMentions.none())
        echoed = await asyncio.wait_for(client.messages.get(), 5)
        assert echoed.id == mine.id and echoed.author.id == dc.bot.id
        [sent] = await dc.wait_sent(1, channel_id=general)
        assert sent.content == "from the bot" and sent.message_id == mine.id
        assert sent.allowed_mentions == {"parse": []}
        payload = await dc.push_message(general, alice, "answering you", reply_to=mine.id)
        reply = await asyncio.wait_for(client.messages.get(), 5)
        assert reply.reference is not None and reply.reference.message_id == mine.id
        resolved = reply.reference.resolved
        assert isinstance(resolved, discord.Message) and resolved.author.id == dc.bot.id
        await dc.redeliver(payload)
        again = await asyncio.wait_for(client.messages.get(), 5)
        assert again.id == reply.id
        await mine.edit(content="edited")
        assert dc.sent[-1].kind == "edit" and dc.sent[-1].content == "edited"
        await channel.typing()
        assert [c for c, _ in dc.typing] == [general]


async def test_rest_errors_carry_discord_codes(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    closed = dc.add_dm(dc.add_user("bob"))
    dc.forbid(general)
    dc.forbid(closed, 50007)
    async with connected(dc) as client:
        with pytest.raises(discord.Forbidden) as forbidden:
            await client.get_partial_messageable(general).send("x")
        assert forbidden.value.code == 50013
        with pytest.raises(discord.Forbidden) as dm_closed:
            await client.get_partial_messageable(closed).send("x")
        assert dm_closed.value.code == 50007
        with pytest.raises(discord.NotFound) as unknown:
            await client.get_partial_messageable(12345).send("x")
        assert unknown.value.code == 10003
        open_channel = dc.add_channel(guild)
        with pytest.raises(discord.HTTPException) as too_long:
            await client.get_partial_messageable(open_channel).send("x" * 2001)
        assert too_long.value.status == 400 and too_long.value.code == 50035
        await client.get_partial_messageable(open_channel).send("x" * 2000)
        dc.fail_next(503, path=r"/messages$")
        with pytest.raises(discord.DiscordServerError):
            await client.get_partial_messageable(open_channel).send("y")


async def test_bad_token_is_401(dc: FakeDiscord) -> None:
    client = _Recorder()
    try:
        with pytest.raises(discord.LoginFailure):
            await client.login("wrong-token")
    finally:
        await client.close()
    assert dc.calls[-1].status == 401


async def test_flood_delays_only_its_channel(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    slow, fast = dc.add_channel(guild, "slow"), dc.add_channel(guild, "fast")
    dc.flood(slow, retry_after=0.6)
    async with connected(dc) as client:
        started = time.monotonic()
        await asyncio.gather(
            client.get_partial_messageable(slow).send("a"),
            client.get_partial_messageable(fast).send("b"),
        )
    by_channel = {s.channel_id: s.time - started for s in dc.sent}
    assert by_channel[fast] < 0.3
    assert by_channel[slow] > 0.55
    limited = [c for c in dc.calls if c.status == 429]
    assert len(limited) == 1 and limited[0].path == f"/channels/{slow}/messages"


async def test_429_wire_shape(dc: FakeDiscord) -> None:
    channel = dc.add_channel(dc.add_guild())
    dc.flood(channel, retry_after=2.5)
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{dc.api_base}/channels/{channel}/messages",
            json={"content": "x"},
            headers={"Authorization": f"Bot {TOKEN}"},
        ) as response,
    ):
        assert response.status == 429
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["Via"] == "1.1 google"
        assert response.headers["X-RateLimit-Remaining"] == "0"
        assert float(response.headers["X-RateLimit-Reset-After"]) == 2.5
        body = await response.json()
    assert body == {"message": "You are being rate limited.", "retry_after": 2.5, "global": False}


async def test_drop_connection_resumes_and_replays(dc: FakeDiscord) -> None:
    alice = dc.add_user("alice")
    dm = dc.add_dm(alice)
    async with connected(dc) as client:
        await dc.drop_connection()
        await dc.push_message(dm, alice, "sent while the socket was down")
        message = await asyncio.wait_for(client.messages.get(), 5)
        assert message.content == "sent while the socket was down"
        await dc.wait_for(lambda: len(dc.resumes) == 1)
        assert dc.resumes[0]["session_id"] and len(dc.identify) == 1
        await dc.drop_connection(code=None)  # TCP abort, no close frame
        await dc.push_message(dm, alice, "after an abort")
        message = await asyncio.wait_for(client.messages.get(), 5)
        assert message.content == "after an abort"


async def test_interactions_defer_followup_and_deadline(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    alice = dc.add_user("alice")
    async with connected(dc) as client:
        pushed = await dc.push_interaction("memory", {"args": "notes"}, alice, general)
        interaction = await asyncio.wait_for(client.interactions.get(), 5)
        assert interaction.id == pushed.id and interaction.guild_id == guild
        assert interaction.data is not None and interaction.data.get("name") == "memory"
        assert interaction.user.id == alice.id
        await interaction.response.defer(ephemeral=True, thinking=True)
        assert dc.callbacks[0].type == 5 and dc.callbacks[0].flags == 64
        await interaction.edit_original_response(content="part one")
        followup = await interaction.followup.send("part two", ephemeral=True, wait=True)
        kinds = [(s.kind, s.content, s.ephemeral) for s in dc.sent]
        assert kinds == [("original", "part one", True), ("followup", "part two", True)]
        assert dc.sent[1].message_id == followup.id
        async with aiohttp.ClientSession() as session:  # discord.py guards this itself
            url = f"{dc.api_base}/interactions/{pushed.id}/{pushed.token}/callback"
            async with session.post(url, json={"type": 5}) as twice:
                assert twice.status == 400 and (await twice.json())["code"] == 40060

        dc.interaction_deadline = 0.0
        await dc.push_interaction("memory", None, alice, general)
        late = await asyncio.wait_for(client.interactions.get(), 5)
        with pytest.raises(discord.NotFound) as expired:
            await late.response.defer()
        assert expired.value.code == 10062


def _buttons(*pairs: tuple[str, str]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for label, custom_id in pairs:
        view.add_item(discord.ui.Button(label=label, custom_id=custom_id))
    view.stop()  # nothing for discord.py to dispatch: the test reads the raw interaction
    return view


async def test_buttons_are_kept_on_messages_and_a_press_is_a_component_interaction(
    dc: FakeDiscord,
) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    alice = dc.add_user("alice")
    async with connected(dc) as client:
        channel = client.get_partial_messageable(general)
        sent = await channel.send("Save it?", view=_buttons(("Yes", "y"), ("No", "n")))
        await asyncio.wait_for(client.messages.get(), 5)  # the echo
        assert dc.sent[-1].buttons == [("Yes", "y"), ("No", "n")]
        with pytest.raises(LookupError):
            await dc.press(sent.id, "maybe", alice)  # no such button on it
        pressed = await dc.press(sent.id, "y", alice)
        interaction = await asyncio.wait_for(client.interactions.get(), 5)
        assert interaction.type is discord.InteractionType.component
        assert interaction.data is not None and interaction.data.get("custom_id") == "y"
        assert interaction.message is not None and interaction.message.id == sent.id
        assert interaction.message.content == "Save it?" and interaction.user.id == alice.id
        assert interaction.id == pressed.id and pressed.message_id == sent.id
        await interaction.response.defer()  # 6: the pressed message changes later
        assert [c.type for c in dc.callbacks] == [6]
        await interaction.edit_original_response(content="Saved.", view=None)
        assert (dc.sent[-1].kind, dc.sent[-1].message_id) == ("edit", sent.id)
        assert dc.sent[-1].buttons == [] and dc.messages[sent.id]["content"] == "Saved."

        again = await channel.send("And this?", view=_buttons(("Yes", "y2")))
        await dc.press(again.id, "y2", alice)
        update = await asyncio.wait_for(client.interactions.get(), 5)
        await update.response.edit_message(content="Done.", view=None)  # 7: UPDATE_MESSAGE
        assert dc.callbacks[-1].type == 7
        assert (dc.sent[-1].kind, dc.sent[-1].content, dc.sent[-1].buttons) == (
            "edit",
            "Done.",
            [],
        )
        kept = await channel.send("Keep?", view=_buttons(("Keep", "k")))
        await channel.get_partial_message(kept.id).edit(content="Keep!")  # no components: kept
        assert (dc.sent[-1].kind, dc.sent[-1].buttons) == ("edit", [("Keep", "k")])


async def test_components_discord_refuses_and_callbacks_only_a_press_may_use(
    dc: FakeDiscord,
) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    alice = dc.add_user("alice")
    async with connected(dc) as client:
        channel = client.get_partial_messageable(general)
        for bad in (
            _buttons(("x" * 81, "a")),  # label over 80
            _buttons(("a", "a" * 101)),  # custom_id over 100
        ):
            with pytest.raises(discord.HTTPException) as refused:
                await channel.send("x", view=bad)
            assert refused.value.status == 400 and refused.value.code == 50035
        await dc.push_interaction("memory", None, alice, general)
        command = await asyncio.wait_for(client.interactions.get(), 5)
        async with aiohttp.ClientSession() as session:  # what discord.py itself would refuse
            button = {"type": 2, "style": 1, "label": "b", "custom_id": "b"}
            six_rows = [
                {"type": 1, "components": [button | {"custom_id": f"b{n}"}]} for n in range(6)
            ]
            duplicated = [{"type": 1, "components": [button, button]}]
            headers = {"Authorization": f"Bot {TOKEN}"}
            for components in (six_rows, duplicated):
                body = {"content": "x", "components": components}
                url = f"{dc.api_base}/channels/{general}/messages"
                async with session.post(url, json=body, headers=headers) as refused_raw:
                    assert refused_raw.status == 400 and (await refused_raw.json())["code"] == 50035
            url = f"{dc.api_base}/interactions/{command.id}/{command.token}/callback"
            async with session.post(url, json={"type": 6}) as wrong:
                assert wrong.status == 400 and (await wrong.json())["code"] == 50035


async def test_an_ephemeral_message_can_be_pressed_only_by_whom_it_was_shown_to(
    dc: FakeDiscord,
) -> None:
    guild = dc.add_guild()
    general = dc.add_channel(guild)
    alice, bob = dc.add_user("alice"), dc.add_user("bob")
    async with connected(dc) as client:
        await dc.push_interaction("memory", None, alice, general)
        command = await asyncio.wait_for(client.interactions.get(), 5)
        await command.response.defer(ephemeral=True, thinking=True)
        card = await command.edit_original_response(content="Yours", view=_buttons(("Ok", "ok")))
        with pytest.raises(LookupError):
            await dc.press(card.id, "ok", bob)
        await dc.press(card.id, "ok", alice)
        press = await asyncio.wait_for(client.interactions.get(), 5)
        await press.response.defer()
        await press.edit_original_response(content="Yours, done", view=None)
        assert (dc.sent[-1].kind, dc.sent[-1].ephemeral, dc.sent[-1].buttons) == ("edit", True, [])
        with pytest.raises(discord.NotFound):  # only its interaction's token edits it
            await (
                client.get_partial_messageable(general)
                .get_partial_message(card.id)
                .edit(content="no")
            )


async def test_dm_interaction_has_user_and_dm_channel(dc: FakeDiscord) -> None:
    alice = dc.add_user("alice")
    dm = dc.add_dm(alice)
    async with connected(dc) as client:
        await dc.push_interaction("help", None, alice, dm)
        interaction = await asyncio.wait_for(client.interactions.get(), 5)
        assert interaction.guild_id is None and interaction.user.id == alice.id
        assert isinstance(interaction.channel, discord.DMChannel)
        await interaction.response.send_message("hi")
        assert dc.sent[-1].kind == "message" and dc.sent[-1].channel_id == dm


async def test_command_sync_is_recorded(dc: FakeDiscord) -> None:
    guild = dc.add_guild()
    async with connected(dc) as client:
        tree = discord.app_commands.CommandTree(client)

        @tree.command(name="memory", description="Show memory")
        async def memory(interaction: discord.Interaction, args: str | None = None) -> None:
            del interaction, args

        synced = await tree.sync()
        assert [c.name for c in synced] == ["memory"]
        assert dc.commands[0]["name"] == "memory"
        assert dc.commands[0]["options"][0]["name"] == "args"
        await tree.sync(guild=discord.Object(guild))
        assert dc.guild_commands[guild] == []
    assert any(c.method == "PUT" for c in dc.calls)


async def test_leaving_the_fake_releases_hung_requests(hooks: Any) -> None:
    started = time.monotonic()
    async with FakeDiscord(token=TOKEN) as dc, aiohttp.ClientSession() as session:
        dc.hang_next(path="/users/@me")
        request = asyncio.create_task(
            session.get(f"{dc.api_base}/users/@me", headers={"Authorization": f"Bot {TOKEN}"})
        )
        await asyncio.sleep(0.2)
        assert not request.done()
        await dc.close()
        response = await asyncio.wait_for(request, 3)
        assert response.status == 503
        response.release()
    assert time.monotonic() - started < 3


def test_user_payload_shape() -> None:
    assert FakeUser(1, "a").payload()["discriminator"] == "0"
    assert "bot" not in FakeUser(1, "a").payload()
    assert FakeUser(1, "b", bot=True).payload()["bot"] is True


# -- sharding ------------------------------------------------------------------------------


async def _identify(dc: FakeDiscord, shard: Any) -> tuple[list[dict[str, Any]], int | None]:
    """IDENTIFY on a raw socket (no compression) with ``shard`` (``None``: leave it out);
    the frames received before the fake went quiet for 0.3 s, and the close code."""
    frames: list[dict[str, Any]] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(dc.gateway_url + "?v=10&encoding=json") as ws,
    ):
        frames.append(json.loads((await ws.receive(timeout=5)).data))  # HELLO
        identify: dict[str, Any] = {"token": TOKEN, "intents": 1}
        if shard is not None:
            identify["shard"] = shard
        await ws.send_str(json.dumps({"op": 2, "d": identify}))
        while True:
            try:
                msg = await ws.receive(timeout=0.3)
            except TimeoutError:
                return frames, None
            if msg.type is not aiohttp.WSMsgType.TEXT:
                return frames, ws.close_code
            frames.append(json.loads(msg.data))


async def test_a_shard_gets_only_its_guilds_and_a_bad_shard_is_closed_4010(
    dc: FakeDiscord,
) -> None:
    even, odd = dc.add_guild("even", id=1000 << 22), dc.add_guild("odd", id=1001 << 22)
    frames, code = await _identify(dc, [1, 2])
    assert code is None
    ready = frames[1]["d"]
    assert ready["shard"] == [1, 2] and [g["id"] for g in ready["guilds"]] == [str(odd)]
    assert [(f["t"], f["d"]["id"]) for f in frames[2:]] == [("GUILD_CREATE", str(odd))]
    frames, _ = await _identify(dc, None)  # unsharded: shard 0 of 1, every guild
    assert "shard" not in frames[1]["d"]
    assert {g["id"] for g in frames[1]["d"]["guilds"]} == {str(even), str(odd)}
    for bad in ([2, 2], [-1, 2], [0], "0,1", [True, 2]):
        frames, code = await _identify(dc, bad)
        assert code == 4010, bad
        assert [f["op"] for f in frames] == [10]  # HELLO, then the close: no READY
    assert [i.get("shard") for i in dc.identify] == [[1, 2], None, [2, 2], [-1, 2], [0], "0,1",
                                                    [True, 2]]  # fmt: skip


async def test_events_go_to_the_shard_of_their_guild_and_dms_to_shard_0(
    dc: FakeDiscord,
) -> None:
    even, odd = dc.add_guild("even", id=1000 << 22), dc.add_guild("odd", id=1001 << 22)
    channels = {even: dc.add_channel(even), odd: dc.add_channel(odd)}
    alice = dc.add_user("alice")
    dm = dc.add_dm(alice)
    received: dict[int, list[str]] = {0: [], 1: []}
    async with aiohttp.ClientSession() as session:
        sockets = [await session.ws_connect(dc.gateway_url) for _ in range(2)]
        try:
            for shard, ws in enumerate(sockets):
                await ws.receive(timeout=5)
                identify = {"token": TOKEN, "intents": 1, "shard": [shard, 2]}
                await ws.send_str(json.dumps({"op": 2, "d": identify}))
            await dc.wait_for(lambda: len(dc.identify) == 2)
            await dc.push_message(channels[even], alice, "to the even guild")
            await dc.push_message(channels[odd], alice, "to the odd guild")
            await dc.push_message(dm, alice, "a dm")
            for shard, ws in enumerate(sockets):
                while True:
                    try:
                        msg = await ws.receive(timeout=0.3)
                    except TimeoutError:
                        break
                    frame = json.loads(msg.data)
                    if frame.get("t") == "MESSAGE_CREATE":
                        received[shard].append(frame["d"]["content"])
        finally:
            for ws in sockets:
                await ws.close()
    assert received == {0: ["to the even guild", "a dm"], 1: ["to the odd guild"]}


async def test_gateway_bot_recommends_the_configured_shard_count(hooks: Any) -> None:
    async with FakeDiscord(token=TOKEN, recommended_shards=3) as fake:
        hooks(fake)
        async with connected(fake) as client:
            shards, url, limits = await client.http.get_bot_gateway()
        assert (shards, url, limits["max_concurrency"]) == (3, fake.gateway_url, 1)
