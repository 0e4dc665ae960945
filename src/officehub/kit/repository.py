"""The one place that scopes a read by office (a record of another office is not there),
and the write helpers every domain shares: row locks, row-by-row set changes, and a flush
whose refusal by the database answers the rule's 409."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    and_,
    bindparam,
    cast,
    column,
    delete,
    false,
    insert,
    or_,
    select,
    table,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.db import Base, holds_write_lock
from officehub.kit.errors import ServiceError
from officehub.kit.integrity import conflict_for
from officehub.kit.raw_read import RawSelect, Row, on_raw_driver

M = TypeVar("M", bound=Base)


def scoped(model: type[M], office_id: str) -> Select[M]:
    """``SELECT model WHERE office_id = :office_id``, to be narrowed further."""
    column: Any = model.__table__.c.office_id
    return select(model).where(column == office_id)


@cache
def _by_id(model: type[Base]) -> Select[Any]:
    """``SELECT model WHERE office_id = :office_id AND id = :ident``, built once per model:
    SQLAlchemy then finds its compiled form without building or hashing a statement."""
    table: Any = model.__table__
    return select(model).where(
        table.c.office_id == bindparam("office_id"), table.c.id == bindparam("ident")
    )


@cache
def _by_id_fresh(model: type[Base]) -> Select[Any]:
    return _by_id(model).execution_options(populate_existing=True)


@cache
def _by_id_for_update(model: type[Base]) -> Select[Any]:
    """``_by_id`` with ``FOR UPDATE OF`` the model's table, read afresh into the session's
    identity map (``populate_existing``): the values seen are the locked row's, not those
    an earlier read of the request left there."""
    return _by_id(model).with_for_update(of=model).execution_options(populate_existing=True)


async def get_scoped(
    session: AsyncSession, model: type[M], office_id: str, ident: str, *, for_change: bool = False
) -> M | None:
    """The office's record of this id, or None.

    ``for_change``: the read that decides a change (PATCH, PUT, DELETE, a POST that changes
    a record it read). Its row is write-locked to the end of the transaction before it is
    read, so concurrent changes of one record queue: each sees the one before it (a PATCH
    that repeats it changes nothing and emits nothing; an event's previous values are the
    ones it replaced), and a change queued behind a delete finds nothing (404), never a
    row gone from under its flush. PostgreSQL: ``SELECT … FOR UPDATE``. SQLite: a writing
    request already holds the database's write lock (``BEGIN IMMEDIATE``, see
    ``officehub.kit.db.get_session``), so a plain read sees the latest committed data; any
    other transaction takes it here first (``lock_rows``).
    """
    params = {"office_id": office_id, "ident": ident}
    if not for_change:
        found: M | None = (await session.scalars(_by_id(model), params)).first()
        return found
    if session.get_bind().dialect.name == "postgresql":
        locked: M | None = (await session.scalars(_by_id_for_update(model), params)).first()
        return locked
    if not holds_write_lock(session):
        table: Any = model.__table__
        await lock_rows(session, model, office_id, table.c.id == ident)
    fresh: M | None = (await session.scalars(_by_id_fresh(model), params)).first()
    return fresh


@cache
def _raw_by_id(model: type[Base]) -> RawSelect:
    """``_by_id``'s select of the table's columns, read through the raw driver."""
    table: Any = model.__table__
    return RawSelect(
        select(*table.c).where(
            table.c.office_id == bindparam("office_id"), table.c.id == bindparam("ident")
        )
    )


async def read_scoped(
    session: AsyncSession, model: type[M], office_id: str, ident: str
) -> M | Row | None:
    """The office's record of this id to answer with, or None: on PostgreSQL its columns as
    a dict through the raw driver (``kit.raw_read``; the same values by column name, no
    ORM object), elsewhere the record (``get_scoped``). Not for a read that decides a
    change (``get_scoped(for_change=True)``)."""
    if on_raw_driver(session):
        return await _raw_by_id(model).one_or_none(
            session, {"office_id": office_id, "ident": ident}
        )
    return await get_scoped(session, model, office_id, ident)


async def get_all_for_change(
    session: AsyncSession, model: type[M], office_id: str, *where: Any
) -> list[M]:
    """The office's records of ``model`` matching ``where``, each locked and read afresh as
    ``get_scoped(for_change=True)`` reads one (a bulk change: ``DELETE /funnel-column-card``)."""
    if session.get_bind().dialect.name != "postgresql" and not holds_write_lock(session):
        await lock_rows(session, model, office_id, *where)
    table: Any = model.__table__
    # By id: two bulk changes lock their common rows in one order (no deadlock).
    stmt = (
        scoped(model, office_id)
        .where(*where)
        .order_by(table.c.id)
        .execution_options(populate_existing=True)
    )
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(of=model)
    return list(await session.scalars(stmt))


async def lock_rows(
    session: AsyncSession, model: type[Base], office_id: str, *where: Any, referring: bool = False
) -> None:
    """Write-locks the office's rows of ``model`` matching ``where`` to the end of the
    transaction, before the checks that depend on them.

    PostgreSQL: ``SELECT … FOR UPDATE``, which also waits for (and then blocks) concurrent
    inserts referring to the rows by foreign key (they hold ``FOR KEY SHARE``), so a delete
    guard's check sees them. ``referring`` takes that ``FOR KEY SHARE`` up front instead, for
    a writer that must hold its references in a set order (no deadlock with a guard). SQLite:
    a no-op ``UPDATE``, which takes the database's write lock; every later read of the
    transaction then sees the latest committed data.
    """
    table: Any = model.__table__
    condition = [table.c.office_id == office_id, *where]
    if session.get_bind().dialect.name == "postgresql":
        stmt = select(table.c.id).where(*condition)
        if referring:
            stmt = stmt.with_for_update(read=True, key_share=True)  # FOR KEY SHARE
        else:
            stmt = stmt.with_for_update()
        await session.execute(stmt)
    else:
        # Every column with an ``onupdate`` (``updated_at``) keeps its value: a lock changes
        # nothing.
        same = {c.name: c for c in table.c if c.onupdate is not None or c.name == "id"}
        await session.execute(
            update(table).where(*condition).values(same),
            execution_options={"synchronize_session": False},
        )


async def flush_or_conflict(session: AsyncSession, conflict: ServiceError) -> None:
    """Flushes; a unique index won first by a concurrent request raises ``conflict``.

    The checks before a write answer the common case with a helpful message; this covers the
    race between two requests that both passed them. A refusal of another rule (a foreign
    key, say) raises that rule's own conflict (``officehub.kit.integrity``), never ``conflict``.
    """
    try:
        await session.flush()
    except IntegrityError as exc:
        found = conflict_for(exc)
        raise (conflict if found.code == conflict.code else found) from exc


async def insert_or_conflict(session: AsyncSession, record: Base, conflict: ServiceError) -> None:
    """Writes ``record`` (every column set, defaults included) with one Core insert, outside
    the unit of work, as ``flush_or_conflict`` would: the unit of work's bookkeeping for one
    new row costs more than the statement (``POST /people``). ``record`` stays out of the
    session: nothing reads it back there."""
    table: Any = record.__table__
    with conflicts_as(conflict):
        await session.execute(
            _insert_of(table), {c.name: getattr(record, c.key) for c in table.columns}
        )


@contextmanager
def conflicts_as(conflict: ServiceError) -> Iterator[None]:
    """A unique index refusing a write inside the block raises ``conflict``; another
    rule's refusal its own conflict (as ``flush_or_conflict``)."""
    try:
        yield
    except IntegrityError as exc:
        found = conflict_for(exc)
        raise (conflict if found.code == conflict.code else found) from exc


@cache
def _insert_of(table: Any) -> Any:
    return insert(table)


async def insert_ignoring_duplicates(
    session: AsyncSession, model: type[Base], rows: Sequence[dict[str, Any]]
) -> int:
    """``INSERT … ON CONFLICT DO NOTHING`` on either database; the number of rows inserted.

    Sets (a conversation's tags) grow row by row this way: concurrent additions all keep
    their rows, and the same row added twice at once is one row, not an error.
    """
    if not rows:
        return 0
    table: Any = model.__table__
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    result = await session.execute(insert(table).values(list(rows)).on_conflict_do_nothing())
    return int(getattr(result, "rowcount", 0) or 0)


async def replace_set(
    session: AsyncSession,
    model: type[Base],
    office_id: str,
    owner: tuple[str, str],
    member: str,
    wanted: Sequence[str],
) -> None:
    """Makes the owner's members (rows of a link table) exactly ``wanted``, touching only the
    difference: rows not wanted are deleted, missing ones inserted ``ON CONFLICT DO
    NOTHING``. Never delete-all-and-reinsert, which loses a concurrent change or answers a
    duplicate key. ``owner`` is (column, id), ``member`` the other column's name."""
    table: Any = model.__table__
    owner_column, owner_id = owner
    keep = list(dict.fromkeys(wanted))
    await session.execute(
        delete(table).where(
            table.c.office_id == office_id,
            table.c[owner_column] == owner_id,
            table.c[member].not_in(keep),
        )
    )
    rows = [{"office_id": office_id, owner_column: owner_id, member: ident} for ident in keep]
    await insert_ignoring_duplicates(session, model, rows)


MENTION_BATCH = 50
"""Ids matched per statement by ``mentioning`` (one ``LIKE`` each)."""


def mentioning(column: Any, ids: Sequence[str]) -> ColumnElement[bool]:
    """Rows whose JSON or text ``column`` names any of ``ids`` (a substring match on its
    text form, wildcards escaped). For the erasure of a contact: the records that carry its
    ids, phones or emails in a payload."""
    if not ids:
        return false()
    text_form = cast(column, String)
    return or_(*(text_form.like(f"%{_escaped(ident)}%", escape="\\") for ident in ids))


def _escaped(value: str) -> str:
    """``value`` matched as it is by ``LIKE … ESCAPE '\\'`` (an email's ``_`` too)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def batches(ids: Sequence[str], size: int = MENTION_BATCH) -> list[Sequence[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


async def person_ids(
    session: AsyncSession, office_id: str, idents: Sequence[str], *, model: type[Base]
) -> dict[str, str]:
    """``{id: person_id}`` of the office's records of ``model`` among ``idents`` (one select):
    the contact each concerns, for the audit trail."""
    table: Any = model.__table__
    stmt = select(table.c.id, table.c.person_id).where(
        table.c.office_id == office_id, table.c.id.in_(list(idents))
    )
    return {row.id: row.person_id for row in await session.execute(stmt)}


_OFFICES = table("offices", column("id"))


async def lock_office(session: AsyncSession, office_id: str) -> None:
    """Takes the office's row lock to the end of the transaction: what serialises the
    decisions that span the office (routing: a user's capacity counts the conversations of
    every inbox). Taken before any conversation, user or inbox row of the decision, so two
    deciders never wait on each other crosswise.

    PostgreSQL: ``SELECT … FOR NO KEY UPDATE`` (inserts that refer to the office, which take
    ``FOR KEY SHARE``, do not wait for it). SQLite: the database's write lock (a no-op
    ``UPDATE`` unless the transaction already holds it).
    """
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(
            select(_OFFICES.c.id).where(_OFFICES.c.id == office_id).with_for_update(key_share=True)
        )
    elif not holds_write_lock(session):
        await session.execute(
            update(_OFFICES).where(_OFFICES.c.id == office_id).values(id=_OFFICES.c.id)
        )


Keyset = tuple[Any, str]
"""Where a page read oldest first ended: the last row's ordering value and its id."""


def keyset_page(
    model: type[M], office_id: str, where: Any, order: Any, after: Keyset | None, limit: int
) -> Select[Any]:
    """At most ``limit`` rows of ``model`` in the office matching ``where``, oldest first by
    (``order``, id), after the row ``after`` names."""
    ident: Any = model.id  # type: ignore[attr-defined]
    stmt = scoped(model, office_id).where(where)
    if after is not None:
        stmt = stmt.where(or_(order > after[0], and_(order == after[0], ident > after[1])))
    return stmt.order_by(order, ident).limit(limit)
