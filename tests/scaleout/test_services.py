"""The services the scale-out tests stand on answer, and each test gets its own corner."""

from __future__ import annotations

import asyncpg
from redis.asyncio import Redis

from tests.services import RedisTarget


async def test_a_postgres_test_writes_in_a_schema_of_its_own(fresh_postgres_dsn: str) -> None:
    connection = await asyncpg.connect(fresh_postgres_dsn)
    try:
        schema = await connection.fetchval("SELECT current_schema()")
        assert schema is not None and schema.startswith("t_")
        await connection.execute("CREATE TABLE probe (x int)")
        assert await connection.fetchval("SELECT similarity('mnemo', 'memo')") > 0  # pg_trgm
        where = await connection.fetchval(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'probe'"
        )
        assert where == schema
    finally:
        await connection.close()


async def test_a_redis_test_has_a_prefix_of_its_own(redis_target: RedisTarget) -> None:
    client = Redis.from_url(redis_target.url)
    try:
        await client.set(redis_target.prefix + "probe", "1")
        assert await client.get(redis_target.prefix + "probe") == b"1"
    finally:
        await client.aclose()
