"""Runs the Alembic migrations to the single newest revision."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from officehub.kit.db import create_engine

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"
# Any fixed number: processes that start together take turns migrating PostgreSQL.
_ADVISORY_LOCK = 7_450_118
# The newest revision. A database already there is not handed to Alembic at all (reading
# the migration scripts costs a CLI command half a second); tests/test_migrations.py checks
# that this is Alembic's single head.
HEAD = "0039_conversation_pages"


def alembic_config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _upgrade(connection: Connection) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate_async(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
            if await _revision(conn) != HEAD:
                await conn.run_sync(_upgrade)
    finally:
        await engine.dispose()


async def _revision(conn: AsyncConnection) -> str | None:
    """The database's revision, or None for a database Alembic has not touched yet."""
    try:
        async with conn.begin_nested():
            found = await conn.execute(text("SELECT version_num FROM alembic_version"))
            versions = list(found.scalars())
    except DBAPIError:
        return None
    return versions[0] if len(versions) == 1 else None


def migrate(url: str) -> None:
    asyncio.run(migrate_async(url))
