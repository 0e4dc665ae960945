"""``kit.raw_read``: a Core select read through the session's asyncpg connection on
PostgreSQL reads what SQLAlchemy reads, inside the session's transaction (its writes seen,
its locks held), with SQLAlchemy's errors and statement events. SQLite runs the same
statement through the session. A ``RawStatement`` (a write) is sent the same way: it
commits and rolls back with the session, from its async or its synchronous side."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import Integer, String, TypeDecorator, bindparam, cast, event, select, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.raw_read import RawSelect, RawStatement, on_raw_driver
from officehub.tags.models import Tag
from tests import factories as f
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture

PG_ONLY = pytest.mark.skipif(not PG_URL, reason="PostgreSQL only: the raw driver's path")

_TAGS = RawSelect(
    select(*Tag.__table__.c)
    .where(
        Tag.office_id == bindparam("office_id"),
        Tag.id.in_(bindparam("ids", expanding=True)),
        Tag.created_at <= bindparam("before", type_=Tag.__table__.c.created_at.type),
    )
    .order_by(Tag.name_key, Tag.id)
)
_TAG_FOR_UPDATE = RawSelect(select(Tag.id).where(Tag.id == bindparam("id")).with_for_update())


async def _tags(session: AsyncSession, office_id: str, n: int) -> list[Tag]:
    inbox = await f.make_inbox(session, office_id)
    made = [await f.make_tag(session, office_id, inbox.id, f"Tag {i}") for i in range(n)]
    made[0].modules = ["crm", "pessoas"]
    made[1].created_at = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    await session.commit()
    return made


async def test_rows_hold_the_values_sqlalchemy_reads(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Timestamps aware in UTC, JSON decoded, an expanding IN of 1, 2 and 3 values (each
    its own compiled shape), a bound timestamp through its type: as the ORM reads them."""
    made = await _tags(session, office_a.id, 3)
    later = datetime.now(UTC) + timedelta(days=1)
    async with app.state.read_sessionmaker() as reader:
        for n in (1, 2, 3, 2):
            ids = [t.id for t in made[:n]]
            values = {"office_id": office_a.id, "ids": ids, "before": later}
            rows = await _TAGS.rows(reader, values)
            orm = (
                select(Tag)
                .where(Tag.office_id == office_a.id, Tag.id.in_(ids), Tag.created_at <= later)
                .order_by(Tag.name_key, Tag.id)
            )
            records = (await reader.scalars(orm)).all()
            expected = [{c.key: getattr(r, c.key) for c in Tag.__table__.c} for r in records]
            assert len(rows) == n
            assert rows == expected
        assert all(r["created_at"].utcoffset() == timedelta(0) for r in rows)
        assert {tuple(r["modules"]) for r in rows} >= {("crm", "pessoas")}
        cut = {"office_id": office_a.id, "ids": [t.id for t in made], "before": made[1].created_at}
        assert [r["id"] for r in await _TAGS.rows(reader, cut)] == [made[1].id]


class _Marked(TypeDecorator[str]):
    """A type whose bind and result processing both show in the value."""

    impl = String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else f"in:{value}"

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else f"{value}:out"


async def test_values_go_through_their_types_bind_and_result_processing(app: FastAPI) -> None:
    marked = RawSelect(
        select(
            cast(bindparam("v", type_=_Marked()), _Marked()).label("v"),
            cast(bindparam("w", type_=String), String).label("w"),
        )
    )
    async with app.state.read_sessionmaker() as reader:
        assert await marked.rows(reader, {"v": "x", "w": "y"}) == [{"v": "in:x:out", "w": "y"}]
        expected = (await reader.execute(marked.statement, {"v": "x", "w": "y"})).mappings().all()
        assert [dict(expected[0])] == [{"v": "in:x:out", "w": "y"}]


@PG_ONLY
async def test_a_read_in_a_writing_session_sees_its_writes_and_its_rollback(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    values = {"office_id": office_a.id, "before": datetime.now(UTC) + timedelta(days=1)}
    async with app.state.sessionmaker() as writer:
        assert on_raw_driver(writer)
        tag = await f.make_tag(writer, office_a.id, inbox.id, "Nova")  # flushed, not committed
        found = await _TAGS.rows(writer, {**values, "ids": [tag.id]})
        assert [r["name"] for r in found] == ["Nova"]
        async with app.state.read_sessionmaker() as other:
            assert await _TAGS.rows(other, {**values, "ids": [tag.id]}) == []
        await writer.rollback()
        assert await _TAGS.rows(writer, {**values, "ids": [tag.id]}) == []


@PG_ONLY
async def test_a_raw_first_read_begins_the_transaction_and_its_lock_lasts_to_the_end(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The session's first statement is the raw one: it sends the ``BEGIN`` SQLAlchemy's
    adapter would have, so a ``FOR UPDATE`` is held until the session ends."""
    (tag, *_) = await _tags(session, office_a.id, 2)
    async with app.state.sessionmaker() as writer:
        assert [r["id"] for r in await _TAG_FOR_UPDATE.rows(writer, {"id": tag.id})] == [tag.id]
        async with app.state.engine.connect() as other:
            await other.execute(text("SET lock_timeout = '200ms'"))
            with pytest.raises(DBAPIError, match="lock"):
                await other.execute(select(Tag.id).where(Tag.id == tag.id).with_for_update())
            await other.rollback()
        await writer.commit()
    async with app.state.engine.connect() as other:
        found = await other.scalar(select(Tag.id).where(Tag.id == tag.id).with_for_update())
        assert found == tag.id


@PG_ONLY
async def test_a_read_only_session_reads_without_a_transaction(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    (tag, *_) = await _tags(session, office_a.id, 2)
    async with app.state.read_sessionmaker() as reader:
        await _TAG_FOR_UPDATE.rows(reader, {"id": tag.id})
        connection = await reader.connection()
        adapter: Any = (await connection.get_raw_connection()).dbapi_connection
        assert adapter._transaction is None


async def test_statement_listeners_see_the_raw_statement(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    (tag, *_) = await _tags(session, office_a.id, 2)
    sent: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        async with app.state.read_sessionmaker() as reader:
            await _TAG_FOR_UPDATE.rows(reader, {"id": tag.id})
    finally:
        event.remove(engine, "before_cursor_execute", record)
    [(statement, parameters)] = [(s, p) for s, p in sent if "FROM tags" in s]
    assert "FOR UPDATE" in statement or not PG_URL  # SQLite has no row locks
    assert tag.id in tuple(parameters)


@PG_ONLY
async def test_a_driver_error_is_sqlalchemys_and_the_session_goes_on(app: FastAPI) -> None:
    bad = RawSelect(select(cast(bindparam("n", type_=Tag.__table__.c.name.type), Integer)))
    async with app.state.read_sessionmaker() as reader:
        with pytest.raises(DBAPIError):
            await bad.rows(reader, {"n": "not a number"})
        await reader.rollback()
        assert await bad.rows(reader, {"n": "12"}) == [{"anon_1": 12}]


_RENAME = RawStatement(text("UPDATE tags SET name = :name WHERE id = :id"))
_COPY = RawStatement(text("INSERT INTO tags SELECT * FROM tags WHERE id = :id"))


async def _names(app: FastAPI, tags: list[Tag]) -> list[str]:
    async with app.state.read_sessionmaker() as reader:
        stmt = select(Tag.name).where(Tag.id.in_([t.id for t in tags])).order_by(Tag.id)
        return list((await reader.scalars(stmt)).all())


async def test_a_raw_write_commits_and_rolls_back_with_its_session(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    made = sorted(await _tags(session, office_a.id, 2), key=lambda t: t.id)
    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(statement)

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        async with app.state.sessionmaker() as writer:
            await _RENAME.execute(writer, {"id": made[0].id, "name": "Desfeita"})
            await writer.rollback()
        async with app.state.sessionmaker() as writer:
            await _RENAME.execute(writer, {"id": made[1].id, "name": "Renomeada"})
            async with app.state.read_sessionmaker() as other:  # not committed yet
                assert (await other.scalar(select(Tag.name).where(Tag.id == made[1].id))) == (
                    made[1].name
                )
            await writer.commit()
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert await _names(app, made) == [made[0].name, "Renomeada"]
    assert len([s for s in sent if s.startswith("UPDATE tags")]) == 2


async def test_a_raw_write_runs_from_the_sessions_synchronous_side(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``execute_sync``: from a session event (``before_commit``), in the commit's greenlet."""
    (tag, *_) = await _tags(session, office_a.id, 2)
    async with app.state.sessionmaker() as writer:
        params = {"id": tag.id, "name": "Síncrona"}
        await writer.run_sync(lambda s: _RENAME.execute_sync(s.connection(), params))
        await writer.commit()
    assert await _names(app, [tag]) == ["Síncrona"]


async def test_a_refused_raw_write_is_sqlalchemys_integrity_error(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    (tag, *_) = await _tags(session, office_a.id, 2)
    async with app.state.sessionmaker() as writer:
        with pytest.raises(IntegrityError):
            await _COPY.execute(writer, {"id": tag.id})
        await writer.rollback()
        await _RENAME.execute(writer, {"id": tag.id, "name": "Depois"})
        await writer.commit()
    assert await _names(app, [tag]) == ["Depois"]
