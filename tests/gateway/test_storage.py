"""``gateway.storage.open_storage``: a gateway runs the same on either backend, and on
PostgreSQL nothing of its state is in the home folder — a second replica, with a home of
its own, reads what the first wrote (memory, archive, pairing)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agent_core.models.scripted import ScriptedModel
from gateway.config import Config, Paths
from gateway.outbox import DeliveryPolicy
from gateway.storage import open_storage
from gateway.wiring import build_gateway
from memory.archive import Searcher
from tests.fakes.tcp_proxy import TcpProxy
from tests.gateway.harness import ChatAdapter
from tests.gateway.rig import ADMIN, config, responder
from tests.services import postgres_schema


@pytest.fixture(params=["sqlite", "postgres"])
async def environ(request: pytest.FixtureRequest) -> AsyncIterator[Mapping[str, str] | None]:
    """None: SQLite; else the environment that names a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield None
        return
    async with postgres_schema() as dsn:
        yield {"MNEMO_POSTGRES_DSN": dsn}


def _config(environ: Mapping[str, str] | None) -> Config:
    base = config()
    if environ is None:
        return base
    return base.model_copy(
        update={"storage": base.storage.model_copy(update={"backend": "postgres"})}
    )


async def test_a_gateway_keeps_its_state_on_the_configured_backend(
    tmp_path: Path, environ: Mapping[str, str] | None
) -> None:
    cfg = _config(environ)
    env = environ or {}
    home = tmp_path / "one"
    home.mkdir()
    paths = Paths(home, home / "config.yaml", explicit_config=False)
    adapter = ChatAdapter()
    async with open_storage(paths, cfg, env) as storage:
        gateway = build_gateway(
            paths=paths,
            config=cfg,
            storage=storage,
            model=ScriptedModel(respond=responder()),
            adapters={"telegram": adapter},
        )
        gateway.outbox.policy = DeliveryPolicy(backoff_s=0.01, max_attempts=3)
        async with gateway:
            await adapter.say("remember: keeps bees on the roof", user="1")
            await adapter.wait_sent(1)
            await adapter.say("/admin memory telegram:1", user=ADMIN)
            await adapter.wait_sent(1, chat=ADMIN)
        assert "keeps bees on the roof" in adapter.texts(ADMIN)[0]
    if environ is None:
        assert (home / "state.db").exists() and (home / "memories").exists()
        return
    assert not (home / "state.db").exists() and not (home / "memories").exists()
    other = tmp_path / "two"
    other.mkdir()
    paths = Paths(other, other / "config.yaml", explicit_config=False)
    async with open_storage(paths, cfg, env) as storage:
        entries = storage.stores.for_person("telegram-1").entries("user")
        assert entries == ["keeps bees on the roof"]
        found = await Searcher(storage.archive).discover("bees", viewer="telegram-1")
        assert found.results and "bees" in found.results[0].message.content
        assert (await Searcher(storage.archive).discover("bees", viewer="telegram-2")).results == ()


async def test_healthz_fails_while_the_database_is_cut_off(tmp_path: Path) -> None:
    """A replica whose link to PostgreSQL is severed says so on /healthz (the load balancer
    takes it out), naming the backend and the failure's kind, never the DSN."""
    async with postgres_schema() as dsn:
        address = urlsplit(dsn)
        assert address.hostname is not None and address.port is not None
        async with TcpProxy(address.hostname, address.port) as proxy:
            via = dsn.replace(f"{address.hostname}:{address.port}", f"127.0.0.1:{proxy.port}")
            cfg = _config({"MNEMO_POSTGRES_DSN": via})
            paths = Paths(tmp_path, tmp_path / "config.yaml", explicit_config=False)
            async with open_storage(paths, cfg, {"MNEMO_POSTGRES_DSN": via}) as storage:
                gateway = build_gateway(
                    paths=paths,
                    config=cfg,
                    storage=storage,
                    model=ScriptedModel(respond=responder()),
                    adapters={"telegram": ChatAdapter()},
                )
                await gateway.start()
                ok, lines = await gateway.health()
                assert ok and lines[-2:] == ["storage: postgres", "coordination: local"]
                await proxy.cut()
                ok, lines = await gateway.health()
                assert not ok
                (problem,) = [line for line in lines if line.startswith("storage: postgres:")]
                assert "not answering" in problem and "127.0.0.1" not in problem
                with pytest.raises(ConnectionRefusedError):  # its last flush finds no outbox
                    await gateway.stop()
