"""Runs the Alembic migrations to the single newest revision."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text

from officehub.kit.db import create_engine

MIGRATIONS = Path(__file__).parent / "migrations"
# Any fixed number: processes that start together take turns migrating PostgreSQL.
_ADVISORY_LOCK = 7_450_118


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _upgrade(connection: Connection) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate_async(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
            await conn.run_sync(_upgrade)
    finally:
        await engine.dispose()


def migrate(url: str) -> None:
    asyncio.run(migrate_async(url))
