"""A change PostgreSQL rolls back to break a deadlock, or one SQLite could not give the
write lock within its busy timeout, is answered 503 with ``Retry-After`` (nothing of it was
kept; the same request may succeed at once), never 500.

The deadlock is real: another transaction (the test's own connection, as a job or a second
process would) holds the office's conversation counters, the request closes a conversation
(its row locked, its counters taken at commit, ``0038_conversation_counts``), then the other
transaction asks for that conversation's row. The request waited first, so its backend's
deadlock check (``deadlock_timeout``, 1 s by default; 30 s for the test's connection) finds
the cycle and rolls the request back.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from officehub.kit.config import Settings
from tests import factories as f
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture, error_of
from tests.server import running_server

postgresql_only = pytest.mark.skipif(
    not PG_URL,
    reason="PostgreSQL only: SQLite has one writer, which waits for the lock (busy_timeout) "
    "instead of meeting another in a cycle",
)
sqlite_only = pytest.mark.skipif(
    bool(PG_URL), reason="SQLite only: its write lock is one for the whole file"
)


async def _waiting_for_lock(admin: asyncpg.Connection, pid: int) -> None:
    """Until the backend ``pid`` (the request's) waits for a lock."""
    async with asyncio.timeout(20):
        while True:
            waits = await admin.fetchval(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid <> $1", pid
            )
            if waits:
                return
            await asyncio.sleep(0.05)


@postgresql_only
async def test_a_change_rolled_back_by_a_deadlock_answers_503_and_is_not_kept(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        integration = await f.make_integration(s, office_a.id, inbox.id)
        contact = await f.make_contact(s, office_a.id)
        conversation = await f.make_conversation(s, office_a.id, contact.id, integration)
        await s.commit()
    dsn = make_url(settings.database_url).set(drivername="postgresql")
    other = await asyncpg.connect(dsn.render_as_string(hide_password=False))
    try:
        async with running_server(app) as base, httpx.AsyncClient(base_url=base) as client:
            other_pid = await other.fetchval("SELECT pg_backend_pid()")
            await other.execute("SET deadlock_timeout = '30s'")
            holding = other.transaction()
            await holding.start()
            await other.execute(
                "UPDATE conversation_counts SET conversations = conversations WHERE office_id = $1",
                office_a.id,
            )
            closing = asyncio.create_task(
                client.patch(
                    f"/conversation/{conversation.id}",
                    json={"status": "CLOSED"},
                    headers=office_a.headers,
                    timeout=30,
                )
            )
            await _waiting_for_lock(other, other_pid)  # the request, at its commit
            await other.execute(
                "SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE", conversation.id
            )
            answer = await closing
            await holding.rollback()

            assert answer.status_code == 503, answer.text
            assert error_of(answer)["code"] == "DATABASE_UNAVAILABLE"
            assert answer.headers["retry-after"] == "1"
            read = await client.get(f"/conversation/{conversation.id}", headers=office_a.headers)
            assert read.json()["status"] == "OPEN"  # nothing of the change was kept

            again = await client.patch(
                f"/conversation/{conversation.id}",
                json={"status": "CLOSED"},
                headers=office_a.headers,
            )
            assert again.status_code == 200, again.text
            assert again.json()["status"] == "CLOSED"
    finally:
        await other.close()


@sqlite_only
async def test_a_write_that_never_gets_sqlites_lock_answers_503_and_is_not_kept(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    path = make_url(settings.database_url).database
    assert path, settings.database_url
    other = sqlite3.connect(path, isolation_level=None)
    try:
        async with running_server(app) as base, httpx.AsyncClient(base_url=base) as client:
            other.execute("BEGIN IMMEDIATE")  # another process writing, for too long
            started = time.monotonic()
            refused = await client.post(
                "/people", json={"name": "Ana"}, headers=office_a.headers, timeout=60
            )
            took = time.monotonic() - started
            other.execute("ROLLBACK")

            assert refused.status_code == 503, refused.text
            assert error_of(refused)["code"] == "DATABASE_UNAVAILABLE"
            assert refused.headers["retry-after"] == "1"
            assert took >= 9, took  # it waited its busy timeout (10 s) for the lock
            listed = await client.get("/people", headers=office_a.headers)
            assert listed.json()["totalResults"] == 0  # nothing of it was kept

            made = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
            assert made.status_code == 201, made.text
    finally:
        other.close()
