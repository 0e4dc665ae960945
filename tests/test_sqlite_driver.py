"""``officehub.kit.sqlite_driver``: SQLAlchemy's aiosqlite adapter with one job per statement on
aiosqlite's thread. What SQLAlchemy reads from a cursor must be what the stock adapter gave:
rows and their description, row counts (the ORM's check that an UPDATE found its row), the
last row id, ``executemany``, and errors translated to SQLAlchemy's exceptions."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from officehub.kit.db import create_engine
from officehub.kit.sqlite_driver import OneHopCursor


async def test_a_sqlite_engine_runs_each_statement_as_one_job(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'one.db'}")
    try:
        async with engine.begin() as conn:
            raw = await conn.get_raw_connection()
            assert raw.dbapi_connection is not None
            cursor: object = raw.dbapi_connection.cursor()
            assert type(cursor) is OneHopCursor
            await conn.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)"))
            many = await conn.execute(
                text("INSERT INTO t (name) VALUES (:name)"),
                [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            )
            assert many.rowcount == 3
            one = await conn.execute(text("INSERT INTO t (name) VALUES ('d')"))
            assert one.lastrowid == 4
            returned = await conn.execute(
                text("INSERT INTO t (name) VALUES ('e') RETURNING id, name")
            )
            assert [dict(row) for row in returned.mappings()] == [{"id": 5, "name": "e"}]
            changed = await conn.execute(text("UPDATE t SET name = name || '!' WHERE id < 3"))
            assert changed.rowcount == 2
            none_changed = await conn.execute(text("UPDATE t SET name = 'x' WHERE id = 99"))
            assert none_changed.rowcount == 0
            rows = await conn.execute(text("SELECT id, name FROM t ORDER BY id"))
            assert list(rows.keys()) == ["id", "name"]
            assert rows.all() == [(1, "a!"), (2, "b!"), (3, "c"), (4, "d"), (5, "e")]
            streamed = await conn.execute(text("SELECT name FROM t ORDER BY id"))
            assert streamed.fetchmany(2) == [("a!",), ("b!",)]
            assert streamed.fetchone() == ("c",)
            assert streamed.fetchall() == [("d",), ("e",)]
            empty = await conn.execute(text("SELECT name FROM t WHERE id = 99"))
            assert empty.first() is None
        async with engine.connect() as conn:
            with pytest.raises(IntegrityError):
                await conn.execute(text("INSERT INTO t (name) VALUES ('c')"))
            await conn.rollback()
            with pytest.raises(OperationalError):
                await conn.execute(text("SELECT nothing FROM nowhere"))
            await conn.rollback()
            count = await conn.scalar(text("SELECT count(*) FROM t"))
            assert count == 5
    finally:
        await engine.dispose()
