"""Helpers the tests share."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from fastapi import FastAPI
from sqlalchemy import select

from officehub.events.models import OutboxEvent
from officehub.offices import service as offices


@dataclass(frozen=True)
class OfficeFixture:
    id: str
    key: str
    key_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"x-service-api-key": self.key}


async def make_office(
    app: FastAPI, name: str, permissions: list[str] | None = None
) -> OfficeFixture:
    async with app.state.sessionmaker() as s:
        office = await offices.create_office(s, name)
        created = await offices.create_api_key(s, office.id, "test", permissions)
        await s.commit()
        return OfficeFixture(office.id, created.key, created.record.id)


async def outbox(app: FastAPI, office_id: str, name: str | None = None) -> list[OutboxEvent]:
    """The events recorded for an office (optionally of one name), oldest first."""
    async with app.state.sessionmaker() as s:
        stmt = select(OutboxEvent).where(OutboxEvent.office_id == office_id)
        if name is not None:
            stmt = stmt.where(OutboxEvent.name == name)
        return list(await s.scalars(stmt.order_by(OutboxEvent.created_at, OutboxEvent.id)))


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The error body, checked for the contract's shape."""
    body: dict[str, Any] = response.json()
    assert set(body) == {"message", "statusCode", "code", "details"}, body
    assert body["statusCode"] == response.status_code
    return body


async def quiet_writers(app: FastAPI) -> None:
    """Stops the app's background writer (the audit trail's periodic flush, which holds
    SQLite's write lock while its transaction runs), for a test whose engine listener blocks
    the event loop (``delete_from_elsewhere`` on SQLite). The app's shutdown still flushes."""
    await app.state.audit.stop()


def delete_from_elsewhere(database_url: str, table: str, ident: str) -> list[threading.Thread]:
    """Deletes the row ``ident`` of ``table`` (with what cascades) from a connection of its
    own, outside the event loop: a concurrent delete landing wherever the caller is (an
    engine event listener). On PostgreSQL it runs in a thread the caller joins (it waits
    for the row locks the caller holds, if any)."""
    if database_url.startswith("postgresql"):
        dsn = database_url.replace("postgresql+asyncpg", "postgresql")

        async def run() -> None:
            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f"DELETE FROM {table} WHERE id = $1", ident)  # noqa: S608
            finally:
                await connection.close()

        thread = threading.Thread(target=lambda: asyncio.run(run()))
        thread.start()
        thread.join(timeout=1.0)
        return [thread]
    # On SQLite the delete runs right here, in the listener, on the event loop's thread:
    # an in-process writer of the app midway through a transaction (the audit trail's
    # flush) could not finish meanwhile. Callers stop it first (``quiet_writers``).
    path = Path(database_url.removeprefix("sqlite+aiosqlite:///"))
    with sqlite3.connect(path, timeout=10) as connection:
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute(f"DELETE FROM {table} WHERE id = ?", (ident,))  # noqa: S608
    return []


@asynccontextmanager
async def app_writers_paused(app: FastAPI) -> AsyncIterator[None]:
    """The app's own background writer (the audit trail's flush) flushed and stopped while a
    test migrates the database under it, then started again: a flush meeting a migration's
    DDL (``ALTER TABLE audit_entries``) deadlocked with it (stop 52's pre-check)."""
    await app.state.audit.stop()
    try:
        yield
    finally:
        app.state.audit.start()
