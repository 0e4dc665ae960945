from __future__ import annotations

from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped
from officehub.publications.models import CourtHoliday, Lawyer


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
