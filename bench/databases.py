"""Scratch PostgreSQL databases for the benchmarks: made anew and migrated, then dropped.

Light on purpose (asyncpg and the migrations, not the app): a benchmark's worker processes
import it without the app's modules (``bench.queue_jobs`` measures their memory)."""

from __future__ import annotations

import asyncpg

from officehub.migrate import migrate_async

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
BASE = "postgresql+asyncpg://postgres@127.0.0.1:5432/"


def driver_url(database: str) -> str:
    """``database``'s URL for asyncpg itself (the app's is ``BASE + database``)."""
    return ADMIN.rsplit("/", 1)[0] + "/" + database


async def drop_database(database: str) -> None:
    admin = await asyncpg.connect(ADMIN)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    finally:
        await admin.close()


async def fresh_database(database: str) -> str:
    """``database`` made anew (dropped if it was there) and migrated: the app's URL of it."""
    await drop_database(database)
    admin = await asyncpg.connect(ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{database}"')
    finally:
        await admin.close()
    url = BASE + database
    await migrate_async(url)
    return url
