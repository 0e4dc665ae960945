"""The pool outlives its connections: after PostgreSQL ends every backend of the app (as a
restart or ``pg_terminate_backend`` does), the next requests succeed, none retried by the
client. ``officehub.kit.db`` checks each connection on checkout (closed by the server? replaced)
instead of ``pool_pre_ping``'s three round trips per request.

"Next" means after the close reached this process. A backend that is ended sends its
``FATAL`` message, leaves ``pg_stat_activity``, and only then does its socket close; a
statement sent in that gap (well under a millisecond) fails, and the request answers 503 with
``Retry-After`` (``test_faults``), never 500. So the tests wait for the client's sockets
to see the close, not just for the server's view of the backends."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from tests.conftest import PG_URL, _pg_dsn
from tests.helpers import OfficeFixture

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="PostgreSQL-specific: ends the server's backends of the app"
)


async def _kill_backends_of(database: str) -> int:
    """Ends every other backend on ``database``; waits until they are gone."""
    admin = await asyncpg.connect(_pg_dsn(PG_URL, database))
    try:
        killed = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        for _ in range(200):
            left = await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            if left == 0:
                break
            await asyncio.sleep(0.01)
        assert left == 0
        return int(killed)
    finally:
        await admin.close()


async def _until_the_pool_saw_every_close(app: FastAPI) -> None:
    """Waits until each idle connection in the app's pool knows its socket closed."""
    idle = app.state.engine.sync_engine.pool._pool._queue._queue  # asyncio.Queue's deque
    for _ in range(500):
        open_ones = [
            record
            for record in list(idle)
            if record.dbapi_connection is not None
            and not record.dbapi_connection._connection.is_closed()
        ]
        if not open_ones:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(open_ones)} pooled connections never saw the server's close")


async def _fill_the_pool(client: httpx.AsyncClient, office: OfficeFixture) -> None:
    answers = await asyncio.gather(*(client.get("/tag", headers=office.headers) for _ in range(8)))
    assert [r.status_code for r in answers] == [200] * 8


async def test_requests_succeed_after_the_server_ended_every_connection(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await _fill_the_pool(client, office_a)
    async with app.state.engine.connect() as conn:
        database = await conn.scalar(text("SELECT current_database()"))
    assert await _kill_backends_of(str(database)) >= 1
    await _until_the_pool_saw_every_close(app)
    reads = await asyncio.gather(*(client.get("/tag", headers=office_a.headers) for _ in range(8)))
    assert [r.status_code for r in reads] == [200] * 8, [r.text for r in reads]
    write = await client.post("/inbox", json={"name": "Depois"}, headers=office_a.headers)
    assert write.status_code == 201, write.text
    listed = await client.get("/inbox", headers=office_a.headers)
    assert "Depois" in {i["name"] for i in listed.json()["data"]}


async def test_a_write_after_the_connections_were_ended_commits_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await _fill_the_pool(client, office_a)
    async with app.state.engine.connect() as conn:
        database = await conn.scalar(text("SELECT current_database()"))
    await _kill_backends_of(str(database))
    await _until_the_pool_saw_every_close(app)
    writes = await asyncio.gather(
        *(
            client.post("/people", json={"name": f"Pessoa {i}"}, headers=office_a.headers)
            for i in range(6)
        )
    )
    assert [r.status_code for r in writes] == [201] * 6, [r.text for r in writes]
    async with app.state.engine.connect() as conn:
        count = await conn.scalar(text("SELECT count(*) FROM contacts WHERE name LIKE 'Pessoa %'"))
    assert count == 6
