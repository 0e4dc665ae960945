"""A PostgreSQL that refuses new connections (``max_connections``, or a role's or a
database's connection limit, reached: SQLSTATE 53300, ``too many connections``) is a
passing condition like an outage: 503 ``DATABASE_UNAVAILABLE`` with ``Retry-After``, never
500, and the request is served again once a connection can be opened.

The limit is a role's (``CONNECTION LIMIT 0``, set while the app's pool is empty): it
touches nothing another test or process uses, where lowering the server's own
``max_connections`` needs a restart and refuses everyone. Superusers are exempt from such
limits, so the app connects as a role of its own that may read and write all data.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from officehub.app import create_app
from officehub.kit.config import Settings
from tests.conftest import PG_URL
from tests.helpers import error_of, make_office
from tests.server import running_server

pytestmark = pytest.mark.skipif(
    not PG_URL,
    reason="PostgreSQL only: SQLite opens a file, with no server to refuse a connection",
)


def _dsn(settings: Settings) -> str:
    url = make_url(settings.database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


@pytest.fixture
async def limited_role(settings: Settings) -> AsyncIterator[str]:
    """A login role that may read and write every table (not a superuser), dropped after."""
    role = f"officehub_limited_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(_dsn(settings))
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN")
        await admin.execute(f"GRANT pg_read_all_data, pg_write_all_data TO {role}")
        yield role
    finally:
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role
        )
        await admin.execute(f"DROP ROLE IF EXISTS {role}")
        await admin.close()


async def _connection_limit(settings: Settings, role: str, limit: int) -> None:
    admin = await asyncpg.connect(_dsn(settings))
    try:
        await admin.execute(f"ALTER ROLE {role} CONNECTION LIMIT {limit}")
    finally:
        await admin.close()


async def test_a_database_refusing_new_connections_answers_503_with_retry_after_not_500(
    settings: Settings, limited_role: str
) -> None:
    url = make_url(settings.database_url).set(username=limited_role)
    app = create_app(
        settings.model_copy(
            update={
                "database_url": url.render_as_string(hide_password=False),
                "key_cache_seconds": 0,  # every request looks its key up: it connects
            }
        )
    )
    async with app.router.lifespan_context(app):
        office = await make_office(app, "Office A")
        async with running_server(app) as base, httpx.AsyncClient(base_url=base) as client:
            made = await client.post("/people", json={"name": "Ana"}, headers=office.headers)
            assert made.status_code == 201, made.text

            # The pool's connections closed, and no new one allowed for the role.
            await app.state.engine.dispose()
            await _connection_limit(settings, limited_role, 0)
            try:
                refusals = [
                    await client.request(method, path, json=body, headers=office.headers)
                    for method, path, body in (
                        ("GET", "/people", None),
                        ("POST", "/people", {"name": "Bia"}),
                    )
                ]
            finally:  # the app's shutdown writes (the audit trail): it must connect
                await _connection_limit(settings, limited_role, -1)
            for refused in refusals:
                assert refused.status_code == 503, refused.text
                assert error_of(refused)["code"] == "DATABASE_UNAVAILABLE"
                assert int(refused.headers["retry-after"]) >= 1

            again = await client.post("/people", json={"name": "Bia"}, headers=office.headers)
            assert again.status_code == 201, again.text
            names = {
                p["name"]
                for p in (await client.get("/people", headers=office.headers)).json()["data"]
            }
            assert names == {"Ana", "Bia"}  # the refused create kept nothing
