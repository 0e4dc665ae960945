from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import Case
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.queue import lock_skipping
from officehub.kit.repository import get_scoped, scoped
from officehub.publications.models import CourtHoliday, Lawyer, Publication


async def get_lawyer(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Lawyer | None:
    return await get_scoped(session, Lawyer, office_id, ident, for_change=for_change)


async def find_lawyer(session: AsyncSession, office_id: str, number: str, uf: str) -> Lawyer | None:
    stmt = scoped(Lawyer, office_id).where(Lawyer.oab_number == number, Lawyer.oab_uf == uf)
    found: Lawyer | None = (await session.scalars(stmt)).first()
    return found


async def list_lawyers(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Lawyer], int]:
    stmt = scoped(Lawyer, office_id).order_by(Lawyer.name, Lawyer.id)
    return await paginate(session, stmt, params)


async def get_holiday(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> CourtHoliday | None:
    return await get_scoped(session, CourtHoliday, office_id, ident, for_change=for_change)


async def list_holidays(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[CourtHoliday], int]:
    stmt = scoped(CourtHoliday, office_id).order_by(CourtHoliday.day, CourtHoliday.id)
    return await paginate(session, stmt, params)


async def add(session: AsyncSession, record: Lawyer | CourtHoliday) -> None:
    session.add(record)


async def delete(session: AsyncSession, record: Lawyer | CourtHoliday) -> None:
    await session.delete(record)
    await session.flush()


async def holiday_days(session: AsyncSession, office_id: str, start: date, end: date) -> set[date]:
    stmt = scoped(CourtHoliday, office_id).where(CourtHoliday.day.between(start, end))
    return {h.day for h in await session.scalars(stmt)}


async def claim_lawyers(
    session: AsyncSession,
    now: datetime,
    lease: timedelta,
    limit: int,
    *,
    only_office: str | None = None,
    only_lawyer: str | None = None,
) -> list[Lawyer]:
    """The lawyers due for a sync (by hand: every one of ``only_office``/``only_lawyer``),
    their next sync moved ``lease`` later so another worker's run leaves them alone
    (``SKIP LOCKED`` on PostgreSQL)."""
    stmt = select(Lawyer.id)
    if only_office is not None or only_lawyer is not None:
        if only_office is not None:
            stmt = stmt.where(Lawyer.office_id == only_office)
        if only_lawyer is not None:
            stmt = stmt.where(Lawyer.id == only_lawyer)
    else:
        stmt = stmt.where(or_(Lawyer.next_sync_at.is_(None), Lawyer.next_sync_at <= now))
    stmt = stmt.order_by(Lawyer.next_sync_at, Lawyer.id).limit(limit)
    stmt = lock_skipping(session, stmt)
    ids = list(await session.scalars(stmt))
    if not ids:
        return []
    await session.execute(
        update(Lawyer)
        .where(Lawyer.id.in_(ids))
        .values(next_sync_at=now + lease)
        .execution_options(synchronize_session=False)
    )
    found = await session.scalars(select(Lawyer).where(Lawyer.id.in_(ids)).order_by(Lawyer.id))
    return list(found)


async def cases_by_number(
    session: AsyncSession, office_id: str, numbers: Sequence[str]
) -> dict[str, str]:
    """The office's case ids by their 20 digits."""
    if not numbers:
        return {}
    stmt = select(Case.number, Case.id).where(
        Case.office_id == office_id, Case.number.in_(sorted(set(numbers)))
    )
    return {number: ident for number, ident in (await session.execute(stmt)).all()}


async def insert_publications(
    session: AsyncSession, rows: Sequence[dict[str, Any]]
) -> list[Publication]:
    """Inserts the rows not stored yet (unique by office and DJEN id, and by office and
    hash: a duplicate, even one inserted by a sync running at the same time, is skipped);
    the ones inserted."""
    if not rows:
        return []
    table: Any = Publication.__table__
    insert = postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    stmt = insert(table).values(list(rows)).on_conflict_do_nothing().returning(*table.c)
    result = await session.execute(stmt)
    return [Publication(**dict(row._mapping)) for row in result]


async def get_publication(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Publication | None:
    return await get_scoped(session, Publication, office_id, ident, for_change=for_change)


async def list_publications(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    lawyer_id: str | None = None,
    case_id: str | None = None,
    since: date | None = None,
    until: date | None = None,
    unread: bool | None = None,
) -> tuple[list[Publication], int]:
    stmt = scoped(Publication, office_id)
    if lawyer_id is not None:
        stmt = stmt.where(Publication.lawyer_id == lawyer_id)
    if case_id is not None:
        stmt = stmt.where(Publication.case_id == case_id)
    if since is not None:
        stmt = stmt.where(Publication.made_available >= since)
    if until is not None:
        stmt = stmt.where(Publication.made_available <= until)
    if unread is True:
        stmt = stmt.where(Publication.read_at.is_(None))
    elif unread is False:
        stmt = stmt.where(Publication.read_at.is_not(None))
    stmt = stmt.order_by(Publication.made_available.desc(), Publication.id.desc())
    return await paginate(session, stmt, params)
