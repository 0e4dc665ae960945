from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, or_, select, true
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import Case, CaseMovement
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.queue import Backoff, WorkQueue
from officehub.kit.repository import Keyset, get_scoped, keyset_page, scoped


async def get_case(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Case | None:
    return await get_scoped(session, Case, office_id, ident, for_change=for_change)


async def find_by_number(session: AsyncSession, office_id: str, number: str) -> Case | None:
    stmt = scoped(Case, office_id).where(Case.number == number)
    return (await session.scalars(stmt)).first()


async def list_cases(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    person_id: str | None = None,
    conversation_id: str | None = None,
    legal_area_id: str | None = None,
    watch: bool | None = None,
    court: str | None = None,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[Case], int]:
    stmt = scoped(Case, office_id)
    if seen is not None:
        stmt = stmt.where(seen)
    if person_id is not None:
        stmt = stmt.where(Case.person_id == person_id)
    if conversation_id is not None:
        stmt = stmt.where(Case.conversation_id == conversation_id)
    if legal_area_id is not None:
        stmt = stmt.where(Case.legal_area_id == legal_area_id)
    if watch is not None:
        stmt = stmt.where(Case.watch == watch)
    if court is not None:
        stmt = stmt.where(Case.court == court)
    return await paginate(session, stmt.order_by(Case.created_at.desc(), Case.id.desc()), params)


async def cases_of_person(
    session: AsyncSession, office_id: str, person_id: str, limit: int
) -> list[Case]:
    stmt = (
        scoped(Case, office_id)
        .where(Case.person_id == person_id)
        .order_by(Case.created_at.desc(), Case.id.desc())
        .limit(limit)
    )
    return list(await session.scalars(stmt))


async def add(session: AsyncSession, record: Case) -> None:
    session.add(record)


async def delete(session: AsyncSession, record: Case) -> None:
    await session.delete(record)
    await session.flush()


async def movements_of(
    session: AsyncSession, office_id: str, case_id: str, params: PageParams
) -> tuple[list[CaseMovement], int]:
    stmt = (
        scoped(CaseMovement, office_id)
        .where(CaseMovement.case_id == case_id)
        .order_by(CaseMovement.occurred_at.desc(), CaseMovement.id.desc())
    )
    return await paginate(session, stmt, params)


async def latest_movements(
    session: AsyncSession, office_id: str, case_id: str, limit: int
) -> list[CaseMovement]:
    stmt = (
        scoped(CaseMovement, office_id)
        .where(CaseMovement.case_id == case_id)
        .order_by(CaseMovement.occurred_at.desc(), CaseMovement.id.desc())
        .limit(limit)
    )
    return list(await session.scalars(stmt))


CASES = WorkQueue(
    "case_checks",
    key=Case.id,
    lease=Case.next_check_at,
    token=Case.claim_token,
    open=and_(Case.watch.is_(True), Case.next_check_at.is_not(None)),
    backoff=Backoff.seconds(),  # the watcher sets each next check itself
    order_by=(Case.next_check_at, Case.id),
)
"""Watched cases due for a check: ``next_check_at`` is due time and lease (``kit.queue``)."""


async def claim_due(
    session: AsyncSession,
    now: datetime,
    lease: timedelta,
    token: str,
    limit: int,
    *,
    only_case: str | None = None,
    only_office: str | None = None,
    never_checked_until: datetime | None = None,
) -> list[Case]:
    """Due watched cases (or, by hand, every watched case of ``only_case``/``only_office``),
    oldest due first, leased to ``token`` until ``now + lease`` through the one queue
    (``SKIP LOCKED`` on PostgreSQL, so workers claim different cases): a worker that dies
    mid-check leaves them due again then. ``never_checked_until``: also the cases never
    checked yet whose first check is set before then (a case claimed or put off since is
    set later)."""
    where: list[ColumnElement[bool]] = []
    due_when: ColumnElement[bool] | None = None
    if only_case is not None or only_office is not None:
        due_when = true()
        if only_case is not None:
            where.append(Case.id == only_case)
        if only_office is not None:
            where.append(Case.office_id == only_office)
    elif never_checked_until is not None:
        never_checked = and_(Case.check_status.is_(None), Case.next_check_at <= never_checked_until)
        due_when = or_(Case.next_check_at <= now, never_checked)
    ids = await CASES.claim(
        session,
        now,
        lease,
        token,
        limit,
        where=where,
        due_when=due_when,
    )
    if not ids:
        return []
    stmt = (
        select(Case)
        .where(Case.id.in_(ids), Case.claim_token == token)
        .order_by(Case.created_at, Case.id)
    )
    return list(await session.scalars(stmt))


async def insert_movements(
    session: AsyncSession, rows: Sequence[dict[str, Any]]
) -> list[CaseMovement]:
    """Inserts the rows not stored yet (unique by case, code and date); the ones inserted."""
    if not rows:
        return []
    table: Any = CaseMovement.__table__
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    stmt = insert(table).values(list(rows)).on_conflict_do_nothing().returning(*table.c)
    result = await session.execute(stmt)
    return [CaseMovement(**dict(row._mapping)) for row in result]


async def movements_by_ids(
    session: AsyncSession, office_id: str, ids: Sequence[str]
) -> list[CaseMovement]:
    stmt = (
        scoped(CaseMovement, office_id)
        .where(CaseMovement.id.in_(list(ids)))
        .order_by(CaseMovement.occurred_at, CaseMovement.id)
    )
    return list(await session.scalars(stmt))


def ids_where(office_id: str, clause: ColumnElement[bool]) -> Select[str]:
    """The ids of the office's cases ``clause`` keeps, as a subquery to filter by."""
    return select(Case.id).where(Case.office_id == office_id, clause)


def cases_of_person_page(
    office_id: str, person_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The person's cases, oldest first, a page after ``after``."""
    return keyset_page(Case, office_id, Case.person_id == person_id, Case.created_at, after, limit)


def movements_of_person_page(
    office_id: str, person_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The movements of the person's cases, oldest first, a page after ``after``."""
    return keyset_page(
        CaseMovement,
        office_id,
        CaseMovement.person_id == person_id,
        CaseMovement.occurred_at,
        after,
        limit,
    )
