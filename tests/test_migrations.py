"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

import officehub.models  # noqa: F401
from officehub.db import Base, create_engine
from officehub.migrate import alembic_config


def _diff(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": False})
    return list(compare_metadata(context, Base.metadata))


async def test_migrations_match_the_models(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(_diff)
    finally:
        await engine.dispose()
    assert diff == []


async def test_every_office_table_indexes_start_with_office_id() -> None:
    for table in Base.metadata.sorted_tables:
        if "office_id" not in table.c:
            continue
        for index in table.indexes:
            first = next(iter(index.columns)).name
            queue_index = str(index.name).endswith(("_due", "_undispatched"))
            assert first == "office_id" or queue_index, f"{table.name}.{index.name}: {first}"


def test_the_migration_history_has_one_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert len(heads) == 1, heads
