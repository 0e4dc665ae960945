"""Every CRM query, each scoped by office id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    bindparam,
    delete,
    func,
    literal,
    select,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.crm.models import Card, ColumnCount, Funnel, FunnelColumn
from officehub.kit.db import api_timestamp, column_values
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.queue import take
from officehub.kit.raw_read import RawSelect, Row, on_raw_driver
from officehub.kit.repository import (
    Keyset,
    get_all_for_change,
    get_scoped,
    keyset_page,
    lock_rows,
    scoped,
)
from officehub.kit.timeutil import isoformat


async def get_funnel(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Funnel | None:
    return await get_scoped(session, Funnel, office_id, ident, for_change=for_change)


async def list_funnels(
    session: AsyncSession,
    office_id: str,
    inbox_id: str | None,
    params: PageParams,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[Funnel], int]:
    stmt = scoped(Funnel, office_id).order_by(Funnel.created_at, Funnel.id)
    if seen is not None:
        stmt = stmt.where(seen)
    if inbox_id is not None:
        stmt = stmt.where(Funnel.inbox_id == inbox_id)
    return await paginate(session, stmt, params)


async def funnel_ids_of_inbox(session: AsyncSession, office_id: str, inbox_id: str) -> list[str]:
    stmt = select(Funnel.id).where(Funnel.office_id == office_id, Funnel.inbox_id == inbox_id)
    return list(await session.scalars(stmt))


async def get_column(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> FunnelColumn | None:
    return await get_scoped(session, FunnelColumn, office_id, ident, for_change=for_change)


async def columns_of(
    session: AsyncSession, office_id: str, funnel_ids: Sequence[str]
) -> list[FunnelColumn]:
    """The columns of the given funnels, each funnel's in ``index`` order."""
    if not funnel_ids:
        return []
    values = {"office_id": office_id, "funnel_ids": list(funnel_ids)}
    return list(await session.scalars(_COLUMNS_OF, values))


_COLUMNS_OF = (
    select(FunnelColumn)
    .where(
        FunnelColumn.office_id == bindparam("office_id"),
        FunnelColumn.funnel_id.in_(bindparam("funnel_ids", expanding=True)),
    )
    .order_by(FunnelColumn.funnel_id, FunnelColumn.position, FunnelColumn.created_at)
    .execution_options(populate_existing=True)
)


async def board_columns(session: AsyncSession, office_id: str, funnel_id: str) -> list[Row]:
    """The funnel's columns in order, each a dict of its column values (for the board's
    answer, where ``board_head`` does not read them: SQLite)."""
    return [column_values(c) for c in await columns_of(session, office_id, [funnel_id])]


BOARD_FUNNEL_FIELDS = ("id", "name", "card_config", "inbox_id", "created_at", "updated_at")
BOARD_COLUMN_FIELDS = {
    "id": "id",
    "funnel_id": "funnel_id",
    "name": "name",
    "color": "color",
    "index": "position",
    "kind": "kind",
    "time_limit_days": "time_limit_days",
    "show_badge_progress": "show_badge_progress",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
"""A board column's answer fields (``service._column_fields``) and the columns they are."""
_TIMES = ("created_at", "updated_at")


def _board_head(*, by_owner: bool) -> Select[Any]:
    """The funnel, its columns in order and each column's total (of the given owners), in
    one statement: a row per column (one with the column's fields NULL for a funnel
    without columns, none for a funnel of another office or none at all). The funnel's
    answer fields are labelled ``funnel_*``, the column's ``column_*`` (``BOARD_*_FIELDS``),
    the timestamps written by
    PostgreSQL (``api_timestamp``). The totals are ``board_totals``' sums, one per column
    through the counts' primary key."""
    office_id = bindparam("office_id", type_=String)
    total = select(func.sum(ColumnCount.cards)).where(
        ColumnCount.office_id == office_id, ColumnCount.column_id == FunnelColumn.id
    )
    if by_owner:
        total = total.where(ColumnCount.owner_key.in_(bindparam("user_ids", expanding=True)))

    def fields(model: Any, names: dict[str, str], prefix: str) -> list[Any]:
        table = model.__table__
        return [
            api_timestamp(table.c[n], f"{prefix}{a}")
            if n in _TIMES
            else table.c[n].label(f"{prefix}{a}")
            for a, n in names.items()
        ]

    return (
        select(
            *fields(Funnel, {n: n for n in BOARD_FUNNEL_FIELDS}, "funnel_"),
            *fields(FunnelColumn, BOARD_COLUMN_FIELDS, "column_"),
            total.scalar_subquery().label("total"),
        )
        .select_from(Funnel)
        .outerjoin(
            FunnelColumn,
            (FunnelColumn.office_id == office_id) & (FunnelColumn.funnel_id == Funnel.id),
        )
        .where(Funnel.office_id == office_id, Funnel.id == bindparam("funnel_id"))
        .order_by(FunnelColumn.position, FunnelColumn.created_at)
    )


_RAW_BOARD_HEAD = RawSelect(_board_head(by_owner=False))
_RAW_BOARD_HEAD_OF_OWNERS = RawSelect(_board_head(by_owner=True))


async def board_head(
    session: AsyncSession, office_id: str, funnel_id: str, user_ids: Sequence[str] | None
) -> tuple[Row, list[Row], dict[str, int]] | None:
    """PostgreSQL (the raw driver): the board's funnel, its columns (each its answer's
    fields) and their totals (of the given owners) in one round trip, their timestamps
    written as the API writes them;
    None when the office has no such funnel. What ``read_scoped``, ``board_columns`` and
    ``board_totals`` answer in three."""
    raw = _RAW_BOARD_HEAD if user_ids is None else _RAW_BOARD_HEAD_OF_OWNERS
    values = {"office_id": office_id, "funnel_id": funnel_id, "user_ids": list(user_ids or ())}
    rows = await raw.rows(session, values)
    if not rows:
        return None
    first = rows[0]
    funnel = {n: first[f"funnel_{n}"] for n in BOARD_FUNNEL_FIELDS}
    columns = [
        {n: row[f"column_{n}"] for n in BOARD_COLUMN_FIELDS}
        for row in rows
        if row["column_id"] is not None
    ]
    totals = {
        row["column_id"]: int(row["total"])
        for row in rows
        if row["column_id"] is not None and row["total"] is not None
    }
    return funnel, columns, totals


async def lock_funnel(session: AsyncSession, office_id: str, funnel_id: str) -> None:
    """Locks the funnel: its columns' positions are assigned, and its cards counted before a
    delete, under this lock (a concurrent card insert holds the funnel by foreign key)."""
    await lock_rows(session, Funnel, office_id, Funnel.id == funnel_id)


async def hold_funnel(session: AsyncSession, office_id: str, funnel_id: str) -> None:
    """Holds the funnel as a card insert's foreign key would (``FOR KEY SHARE``), before the
    insert's count trigger holds its column: references are then taken funnel first, column
    second, the order a column delete locks them in, so the two cannot deadlock."""
    await lock_rows(session, Funnel, office_id, Funnel.id == funnel_id, referring=True)


async def lock_funnels_of_inbox(session: AsyncSession, office_id: str, inbox_id: str) -> None:
    await lock_rows(session, Funnel, office_id, Funnel.inbox_id == inbox_id)


async def renumber(session: AsyncSession, ordered: Sequence[FunnelColumn]) -> None:
    """Gives the columns positions 0..n-1 in the given order, in two flushes (through
    negative positions) so the unique (funnel, position) index holds at every row."""
    moved = [(p, c) for p, c in enumerate(ordered) if c.position != p]
    for position, column in moved:
        column.position = -1 - position
    await session.flush()
    for position, column in moved:
        column.position = position
    await session.flush()


async def list_columns(
    session: AsyncSession,
    office_id: str,
    funnel_id: str | None,
    params: PageParams,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[FunnelColumn], int]:
    stmt = scoped(FunnelColumn, office_id).order_by(
        FunnelColumn.funnel_id, FunnelColumn.position, FunnelColumn.id
    )
    if seen is not None:
        stmt = stmt.where(seen)
    if funnel_id is not None:
        stmt = stmt.where(FunnelColumn.funnel_id == funnel_id)
    return await paginate(session, stmt, params)


async def column_has_cards(session: AsyncSession, office_id: str, column_id: str) -> bool:
    stmt = select(Card.id).where(Card.office_id == office_id, Card.column_id == column_id).limit(1)
    return (await session.scalar(stmt)) is not None


async def funnel_has_cards(session: AsyncSession, office_id: str, funnel_id: str) -> bool:
    stmt = select(Card.id).where(Card.office_id == office_id, Card.funnel_id == funnel_id).limit(1)
    return (await session.scalar(stmt)) is not None


async def inbox_has_cards(session: AsyncSession, office_id: str, inbox_id: str) -> bool:
    await lock_funnels_of_inbox(session, office_id, inbox_id)
    stmt = (
        select(Card.id)
        .join(Funnel, Funnel.id == Card.funnel_id)
        .where(Card.office_id == office_id, Funnel.office_id == office_id)
        .where(Funnel.inbox_id == inbox_id)
        .limit(1)
    )
    return (await session.scalar(stmt)) is not None


def _add_days(value: Any, days: int, dialect: str) -> ColumnElement[Any]:
    """``value + days`` on the database, in the format each stores times in."""
    if dialect == "sqlite":
        # SQLAlchemy stores SQLite times as 'YYYY-MM-DD HH:MM:SS.ffffff': shift the date and
        # time, keep the microseconds as they were.
        shifted = func.strftime("%Y-%m-%d %H:%M:%S", value, f"+{days} days")
        return shifted.concat(func.substr(value, 20, 7))
    return value + func.make_interval(0, 0, 0, literal(days))  # type: ignore[no-any-return]


async def reschedule_overdue(
    session: AsyncSession, office_id: str, column_id: str, time_limit_days: int | None
) -> None:
    """After a column's limit or kind changed: the due time of every stay not yet reported."""
    due: Any = None
    if time_limit_days is not None:
        dialect = session.get_bind().dialect.name
        due = _add_days(Card.column_changed_at, time_limit_days, dialect)
    await session.execute(
        update(Card)
        .where(
            Card.office_id == office_id,
            Card.column_id == column_id,
            Card.overdue_emitted_at.is_(None),
        )
        .values(overdue_at=due)
        .execution_options(synchronize_session=False)
    )


async def get_card(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Card | None:
    return await get_scoped(session, Card, office_id, ident, for_change=for_change)


async def find_card(
    session: AsyncSession, office_id: str, person_id: str, conversation_id: str | None
) -> Card | None:
    stmt = scoped(Card, office_id).where(
        Card.person_id == person_id,
        Card.conversation_id.is_(None)
        if conversation_id is None
        else Card.conversation_id == conversation_id,
    )
    return (await session.scalars(stmt)).first()


async def find_card_in_funnels(
    session: AsyncSession,
    office_id: str,
    person_id: str,
    conversation_id: str,
    funnel_ids: Sequence[str],
) -> Card | None:
    stmt = scoped(Card, office_id).where(
        Card.person_id == person_id,
        Card.conversation_id == conversation_id,
        Card.funnel_id.in_(funnel_ids),
    )
    return (await session.scalars(stmt)).first()


async def cards_by_ids(
    session: AsyncSession,
    office_id: str,
    ids: Sequence[str],
    seen: ColumnElement[bool] | None = None,
) -> list[Card]:
    """The office's cards among ``ids`` (meeting ``seen`` when given), locked for their
    delete (``get_all_for_change``)."""
    if not ids:
        return []
    where = [Card.id.in_(ids)] if seen is None else [Card.id.in_(ids), seen]
    return await get_all_for_change(session, Card, office_id, *where)


async def cards_of_conversation(
    session: AsyncSession, office_id: str, conversation_id: str
) -> list[Card]:
    stmt = scoped(Card, office_id).where(Card.conversation_id == conversation_id)
    return list(await session.scalars(stmt))


async def cards_of_person(session: AsyncSession, office_id: str, person_id: str) -> list[Card]:
    stmt = scoped(Card, office_id).where(Card.person_id == person_id).order_by(Card.id)
    return list(await session.scalars(stmt))


async def move_cards_of_person(
    session: AsyncSession, office_id: str, from_id: str, to_id: str
) -> None:
    await session.execute(
        update(Card)
        .where(Card.office_id == office_id, Card.person_id == from_id)
        .values(person_id=to_id)
        .execution_options(synchronize_session=False)
    )


async def delete_cards(session: AsyncSession, office_id: str, ids: Sequence[str]) -> None:
    await session.execute(
        delete(Card)
        .where(Card.office_id == office_id, Card.id.in_(ids))
        .execution_options(synchronize_session=False)
    )


BOARD_ITEM_COLUMNS = (
    Card.id,
    Card.channel,
    Card.funnel_id,
    Card.column_id,
    Card.custom_fields,
    Card.created_at,
    Card.updated_at,
    Card.user_id,
    Contact.id.label("person_id"),
    Contact.created_at.label("person_created_at"),
    Contact.updated_at.label("person_updated_at"),
    Contact.name.label("person_name"),
    Contact.email.label("person_email"),
    Contact.phone.label("person_phone"),
)
BOARD_ITEM_TIMES = ("created_at", "updated_at", "person_created_at", "person_updated_at")
"""The board rows' timestamps: ``board_page`` hands them back as the API writes them."""


def _board_item_columns(*, written: bool) -> tuple[Any, ...]:
    """``BOARD_ITEM_COLUMNS``, the timestamps written by PostgreSQL when ``written``."""
    if not written:
        return BOARD_ITEM_COLUMNS
    times = {
        "created_at": Card.created_at,
        "updated_at": Card.updated_at,
        "person_created_at": Contact.created_at,
        "person_updated_at": Contact.updated_at,
    }
    return tuple(
        api_timestamp(times[c.key], c.key) if c.key in times else c for c in BOARD_ITEM_COLUMNS
    )


async def board_page(
    session: AsyncSession,
    office_id: str,
    column_ids: Sequence[str],
    user_ids: Sequence[str] | None,
    params: PageParams,
) -> list[Row]:
    """One page of cards of every column, newest arrival first, in a single query; the
    rows' timestamps (``BOARD_ITEM_TIMES``) as the API writes them (``isoformat``): on
    PostgreSQL written by the database (``api_timestamp``), elsewhere here.

    Each column contributes its own ``ORDER BY column_changed_at DESC, id DESC LIMIT
    OFFSET`` branch, served by the ``(office_id, column_id, column_changed_at, id)`` index,
    so the cost is the page's, never the column's. Plain rows, not ORM objects: the board
    only reads them.
    """
    if not column_ids:
        return []
    values: dict[str, Any] = {
        "office_id": office_id,
        "page_limit": params.limit,
        "page_offset": params.offset,
        "user_ids": list(user_ids or ()),
    }
    values.update((f"column_{n}", column_id) for n, column_id in enumerate(column_ids))
    if on_raw_driver(session):
        return await _raw_board_page(len(column_ids), by_owner=user_ids is not None).rows(
            session, values
        )
    stmt = _board_page(len(column_ids), by_owner=user_ids is not None)
    rows = [dict(row) for row in (await session.execute(stmt, values)).mappings()]
    for row in rows:
        row.update((key, isoformat(row[key])) for key in BOARD_ITEM_TIMES)
    return rows


@lru_cache(maxsize=256)
def _raw_board_page(columns: int, *, by_owner: bool) -> RawSelect:
    return RawSelect(_board_page(columns, by_owner=by_owner, written=True))


@lru_cache(maxsize=256)
def _board_page(columns: int, *, by_owner: bool, written: bool = False) -> Select[Any]:
    """The board's statement for a funnel of ``columns`` columns, built once; every value
    (office, column ids ``column_0``…, owners, page) is bound."""
    office_id = bindparam("office_id", type_=String)
    branches: list[Select[Any]] = []
    for n in range(columns):
        branch = (
            select(Card.id)
            .where(Card.office_id == office_id, Card.column_id == bindparam(f"column_{n}"))
            .order_by(Card.column_changed_at.desc(), Card.id.desc())
            .limit(bindparam("page_limit", type_=Integer))
            .offset(bindparam("page_offset", type_=Integer))
        )
        if by_owner:
            branch = branch.where(Card.user_id.in_(bindparam("user_ids", expanding=True)))
        page = branch.subquery()
        branches.append(select(page.c.id))
    page_ids = union_all(*branches).subquery() if len(branches) > 1 else branches[0].subquery()
    return (
        select(*_board_item_columns(written=written))
        .select_from(Card)
        .join(page_ids, page_ids.c.id == Card.id)
        .join(Contact, Contact.id == Card.person_id)
        .where(Card.office_id == office_id, Contact.office_id == office_id)
        .order_by(Card.column_id, Card.column_changed_at.desc(), Card.id.desc())
    )


async def board_totals(
    session: AsyncSession,
    office_id: str,
    column_ids: Sequence[str],
    user_ids: Sequence[str] | None,
) -> dict[str, int]:
    """Cards per column (of the given owners): a sum over the few per-owner count rows
    (where ``board_head`` does not read them: SQLite)."""
    if not column_ids:
        return {}
    stmt = _BOARD_TOTALS_OF_OWNERS if user_ids is not None else _BOARD_TOTALS
    values = {
        "office_id": office_id,
        "column_ids": list(column_ids),
        "user_ids": list(user_ids or ()),
    }
    return {column_id: int(count) for column_id, count in (await session.execute(stmt, values))}


_BOARD_TOTALS = (
    select(ColumnCount.column_id, func.sum(ColumnCount.cards))
    .where(
        ColumnCount.office_id == bindparam("office_id"),
        ColumnCount.column_id.in_(bindparam("column_ids", expanding=True)),
    )
    .group_by(ColumnCount.column_id)
)
_BOARD_TOTALS_OF_OWNERS = _BOARD_TOTALS.where(
    ColumnCount.owner_key.in_(bindparam("user_ids", expanding=True))
)


def due_cards(now: datetime, batch: int) -> Select[str]:
    """Found through the partial ``overdue_at`` index: only unreported stays are in it."""
    return (
        select(Card.id)
        .where(Card.overdue_at.is_not(None), Card.overdue_at <= now)
        .order_by(Card.overdue_at)
        .limit(batch)
    )


async def claim_overdue(
    session: AsyncSession, now: datetime, batch: int
) -> list[tuple[Card, FunnelColumn]]:
    """Stays past their column's limit, across offices, oldest first, taken for this
    transaction (``kit.queue.take``: workers take different cards)."""
    ids = await take(session, due_cards(now, batch))
    if not ids:
        return []
    stmt = (
        select(Card, FunnelColumn)
        .join(
            FunnelColumn,
            (FunnelColumn.id == Card.column_id) & (FunnelColumn.office_id == Card.office_id),
        )
        .where(Card.id.in_(ids))
        .order_by(Card.overdue_at)
    )
    return [(card, column) for card, column in (await session.execute(stmt)).all()]


def cards_of_person_page(
    office_id: str, person_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The person's cards, oldest first, a page after ``after``."""
    return keyset_page(Card, office_id, Card.person_id == person_id, Card.created_at, after, limit)
