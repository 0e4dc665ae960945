"""The office's data for its court publications: its lawyers (by OAB registration) and its
courts' local holidays (which deadlines skip, ``publications.deadlines``)."""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.errors import Conflict, NotFound
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict
from officehub.publications import deadlines, repository
from officehub.publications.models import CourtHoliday, Lawyer
from officehub.publications.schemas import (
    CourtHolidayCreate,
    CourtHolidayOut,
    LawyerCreate,
    LawyerOut,
    Oab,
)

LAWYER_EXISTS = "LAWYER_EXISTS"
COURT_HOLIDAY_EXISTS = "COURT_HOLIDAY_EXISTS"


def lawyer_out(lawyer: Lawyer) -> LawyerOut:
    return LawyerOut(
        id=lawyer.id,
        name=lawyer.name,
        oab=Oab(number=lawyer.oab_number, uf=lawyer.oab_uf),
        created_at=lawyer.created_at,
    )


def holiday_out(holiday: CourtHoliday) -> CourtHolidayOut:
    return CourtHolidayOut(
        id=holiday.id, date=holiday.day, name=holiday.name, created_at=holiday.created_at
    )


def _lawyer_exists(number: str, uf: str) -> Conflict:
    return Conflict(
        "Lawyer already registered",
        details=f"The office already has the lawyer OAB/{uf} {number}",
        code=LAWYER_EXISTS,
    )


async def create_lawyer(session: AsyncSession, office_id: str, body: LawyerCreate) -> LawyerOut:
    number, uf = body.oab.number, body.oab.uf
    if await repository.find_lawyer(session, office_id, number, uf) is not None:
        raise _lawyer_exists(number, uf)
    lawyer = Lawyer(office_id=office_id, name=body.name, oab_number=number, oab_uf=uf)
    await repository.add(session, lawyer)
    await flush_or_conflict(session, _lawyer_exists(number, uf))
    return lawyer_out(lawyer)


async def list_lawyers(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[LawyerOut], int]:
    rows, total = await repository.list_lawyers(session, office_id, params)
    return [lawyer_out(r) for r in rows], total


async def delete_lawyer(session: AsyncSession, office_id: str, ident: str) -> LawyerOut:
    lawyer = await repository.get_lawyer(session, office_id, ident, for_change=True)
    if lawyer is None:
        raise NotFound.of("Lawyer", ident)
    out = lawyer_out(lawyer)
    await repository.delete(session, lawyer)
    return out


def _holiday_exists(day: str) -> Conflict:
    return Conflict(
        "Court holiday already registered",
        details=f"The office already has a court holiday on {day}",
        code=COURT_HOLIDAY_EXISTS,
    )


async def create_holiday(
    session: AsyncSession, office_id: str, body: CourtHolidayCreate
) -> CourtHolidayOut:
    holiday = CourtHoliday(office_id=office_id, day=body.date, name=body.name)
    await repository.add(session, holiday)
    await flush_or_conflict(session, _holiday_exists(body.date.isoformat()))
    return holiday_out(holiday)


async def list_holidays(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[CourtHolidayOut], int]:
    rows, total = await repository.list_holidays(session, office_id, params)
    return [holiday_out(r) for r in rows], total


async def delete_holiday(session: AsyncSession, office_id: str, ident: str) -> CourtHolidayOut:
    holiday = await repository.get_holiday(session, office_id, ident, for_change=True)
    if holiday is None:
        raise NotFound.of("Court holiday", ident)
    out = holiday_out(holiday)
    await repository.delete(session, holiday)
    return out


async def office_deadline(
    session: AsyncSession, office_id: str, published: date, days: int
) -> date:
    """The period's last day (``deadlines.deadline``) skipping the office's court holidays
    too (those of the next two years cover any period with the recess inside)."""
    local = await repository.holiday_days(
        session, office_id, published, published + timedelta(days=2 * 366 + days)
    )
    return deadlines.deadline(published, days, local)
