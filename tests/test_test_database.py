"""The PostgreSQL leg's database per session (``tests/conftest.py``, ``_SessionDatabase``):
after a test it reads as the migrations left it, whatever the test did to it."""

from __future__ import annotations

import asyncpg
import pytest

from officehub.kit.ids import new_id
from tests.conftest import PG_URL, _pg_dsn, _SessionDatabase

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="PostgreSQL only: SQLite copies the template file for each test"
)


async def _rows(conn: asyncpg.Connection, query: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in await conn.fetch(query)]


async def test_an_emptied_session_database_reads_as_the_migrations_left_it(
    template_database: str,
) -> None:
    database = _SessionDatabase(template_database, name=f"officehub_check_{new_id()}")
    await database.create()
    try:
        conn = await asyncpg.connect(_pg_dsn(PG_URL, database.name))
        try:
            seeded = await _rows(conn, "SELECT * FROM legal_areas ORDER BY id")
            assert seeded, "the migrations seed the default legal areas"
            await conn.execute(
                "INSERT INTO offices (id, name, created_at, updated_at)"
                " VALUES ('coffice00000001', 'A', now(), now())"
            )
            await conn.execute("DELETE FROM legal_areas WHERE id = $1", seeded[0][0])
            await conn.execute("UPDATE legal_areas SET name = 'changed'")
            first = await conn.fetchval("SELECT nextval('outbox_consumer_events_seq_seq')")
            await conn.fetchval("SELECT nextval('outbox_consumer_events_seq_seq')")
        finally:
            await conn.close()
        # A connection left in a transaction holding a lock: ended, not waited for.
        holder = await asyncpg.connect(_pg_dsn(PG_URL, database.name))
        await holder.execute("BEGIN; LOCK TABLE offices IN ACCESS EXCLUSIVE MODE")

        await database.reset()

        assert holder.is_closed() or await _closed_on_use(holder)
        conn = await asyncpg.connect(_pg_dsn(PG_URL, database.name))
        try:
            assert await conn.fetchval("SELECT count(*) FROM offices") == 0
            assert await _rows(conn, "SELECT * FROM legal_areas ORDER BY id") == seeded
            again = await conn.fetchval("SELECT nextval('outbox_consumer_events_seq_seq')")
            assert again == first
        finally:
            await conn.close()
    finally:
        await database.drop()


async def _closed_on_use(conn: asyncpg.Connection) -> bool:
    try:
        await conn.fetchval("SELECT 1")
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
        return True
    finally:
        conn.terminate()
    return False


async def test_a_session_database_whose_schema_a_test_changed_is_made_again(
    template_database: str,
) -> None:
    database = _SessionDatabase(template_database, name=f"officehub_check_{new_id()}")
    await database.create()
    try:
        conn = await asyncpg.connect(_pg_dsn(PG_URL, database.name))
        try:
            await conn.execute(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
            )
            await conn.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON offices"
                " FOR EACH ROW EXECUTE FUNCTION refuse()"
            )
            await conn.execute("ALTER TABLE contacts ADD COLUMN extra text")
        finally:
            await conn.close()

        await database.reset()

        conn = await asyncpg.connect(_pg_dsn(PG_URL, database.name))
        try:
            await conn.execute(
                "INSERT INTO offices (id, name, created_at, updated_at)"
                " VALUES ('coffice00000001', 'A', now(), now())"
            )
            columns = await conn.fetchval(
                "SELECT count(*) FROM information_schema.columns"
                " WHERE table_name = 'contacts' AND column_name = 'extra'"
            )
            assert columns == 0
        finally:
            await conn.close()
    finally:
        await database.drop()
