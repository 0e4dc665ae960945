"""The office's data for its court publications: its lawyers (by OAB registration) and its
courts' local holidays (which deadlines skip, ``publications.deadlines``)."""

from __future__ import annotations

import unicodedata
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases import repository as cases
from officehub.cases.numbers import CaseNumber
from officehub.kit.config import Settings
from officehub.kit.errors import Conflict, NotFound
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.publications import deadlines, djen, repository
from officehub.publications.models import CourtHoliday, Lawyer, Publication
from officehub.publications.schemas import (
    CourtHolidayCreate,
    CourtHolidayOut,
    LawyerCreate,
    LawyerOut,
    LawyerUpdate,
    Oab,
    PublicationCategory,
    PublicationOut,
    PublicationUpdate,
)
from officehub.users import repository as user_records
from officehub.users import service as users

CALENDAR = "CPC_BUSINESS_DAYS"
"""``publications.deadlines``: business days (CPC arts. 219, 220, 224), the national
holidays, Carnival, the recess and the office's court holidays."""
INTIMATION_DAYS = 5
"""An intimation's period when the lawyer chose none: CPC art. 218 §3 (no period set by law
or by the judge: five days)."""

LAWYER_EXISTS = "LAWYER_EXISTS"
COURT_HOLIDAY_EXISTS = "COURT_HOLIDAY_EXISTS"


def lawyer_out(lawyer: Lawyer) -> LawyerOut:
    return LawyerOut(
        id=lawyer.id,
        name=lawyer.name,
        oab=Oab(number=lawyer.oab_number, uf=lawyer.oab_uf),
        user_id=lawyer.user_id,
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
    if body.user_id is not None:
        await users.get_user(session, office_id, body.user_id)
    if await repository.find_lawyer(session, office_id, number, uf) is not None:
        raise _lawyer_exists(number, uf)
    lawyer = Lawyer(
        office_id=office_id, name=body.name, oab_number=number, oab_uf=uf, user_id=body.user_id
    )
    await repository.add(session, lawyer)
    await flush_or_conflict(session, _lawyer_exists(number, uf))
    return lawyer_out(lawyer)


async def list_lawyers(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[LawyerOut], int]:
    rows, total = await repository.list_lawyers(session, office_id, params)
    return [lawyer_out(r) for r in rows], total


async def update_lawyer(
    session: AsyncSession, office_id: str, ident: str, body: LawyerUpdate
) -> LawyerOut:
    """``name`` (null keeps it) and ``userId`` (a user of the office; null unlinks)."""
    lawyer = await repository.get_lawyer(session, office_id, ident, for_change=True)
    if lawyer is None:
        raise NotFound.of("Lawyer", ident)
    if body.user_id is not None:
        await users.get_user(session, office_id, body.user_id)
    if body.name is not None:
        lawyer.name = body.name
    if "user_id" in body.model_fields_set:
        lawyer.user_id = body.user_id
    await session.flush()
    return lawyer_out(lawyer)


async def assignee_of(session: AsyncSession, office_id: str, lawyer: Lawyer) -> list[str]:
    """Whom the lawyer's publication's ticket is assigned to: the linked user when they are
    still an active user of the office, else nobody."""
    if lawyer.user_id is None:
        return []
    user = await user_records.get_user(session, office_id, lawyer.user_id)
    return [user.id] if user is not None and user.is_active else []


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


def category_of(kind: str) -> PublicationCategory:
    """INTIMATION or CITATION from DJEN's ``tipoComunicacao`` (accents and case aside)."""
    plain = unicodedata.normalize("NFKD", kind).encode("ascii", "ignore").decode().lower()
    if plain.startswith("intimacao"):
        return "INTIMATION"
    if plain.startswith("citacao"):
        return "CITATION"
    return "OTHER"


def certificate_url(base_url: str, hash_: str | None) -> str | None:
    if not hash_:
        return None
    return f"{base_url.rstrip('/')}{djen.PATH}/{hash_}/certidao"


def end_of_day(day: date, time_zone: str) -> datetime:
    """The last instant of ``day`` in the time zone."""
    zone = ZoneInfo(time_zone)
    return datetime.combine(day + timedelta(days=1), time(), zone) - timedelta(milliseconds=1)


def publication_out(publication: Publication, settings: Settings) -> PublicationOut:
    p = publication
    at = end_of_day(p.deadline_at, settings.time_zone) if p.deadline_at else None
    return PublicationOut(
        id=p.id,
        lawyer_id=p.lawyer_id,
        case_id=p.case_id,
        ticket_id=p.ticket_id,
        djen_id=p.djen_id,
        hash=p.hash,
        made_available_on=p.made_available,
        published_on=p.published_on,
        court=p.court,
        kind=p.kind,
        category=p.category,
        organ=p.organ,
        text=p.text,
        case_number=CaseNumber(p.case_number).formatted if p.case_number else None,
        link=p.link,
        certificate_url=certificate_url(settings.djen_url, p.hash),
        read=p.read_at is not None,
        read_at=p.read_at,
        deadline_days=p.deadline_days,
        deadline_days_source=p.deadline_days_source,
        deadline_on=p.deadline_at,
        deadline_at=at,
        deadline_calendar=p.deadline_calendar,
        created_at=p.created_at,
        updated_at=p.updated_at,
    )


async def get_publication(
    session: AsyncSession, office_id: str, ident: str, settings: Settings
) -> PublicationOut:
    found = await repository.get_publication(session, office_id, ident)
    if found is None:
        raise NotFound.of("Publication", ident)
    return publication_out(found, settings)


async def list_publications(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    settings: Settings,
    *,
    lawyer_id: str | None = None,
    case_id: str | None = None,
    since: date | None = None,
    until: date | None = None,
    unread: bool | None = None,
) -> tuple[list[PublicationOut], int]:
    if lawyer_id is not None and await repository.get_lawyer(session, office_id, lawyer_id) is None:
        raise NotFound.of("Lawyer", lawyer_id)
    if case_id is not None and await cases.get_case(session, office_id, case_id) is None:
        raise NotFound.of("Case", case_id)
    rows, total = await repository.list_publications(
        session,
        office_id,
        params,
        lawyer_id=lawyer_id,
        case_id=case_id,
        since=since,
        until=until,
        unread=unread,
    )
    return [publication_out(r, settings) for r in rows], total


async def update_publication(
    session: AsyncSession, office_id: str, ident: str, body: PublicationUpdate, settings: Settings
) -> PublicationOut:
    """``deadlineDays`` (the lawyer's choice) recounts ``deadlineAt``; null removes the
    deadline. ``read`` marks it read (keeping the first time) or unread."""
    found = await repository.get_publication(session, office_id, ident, for_change=True)
    if found is None:
        raise NotFound.of("Publication", ident)
    sent = body.model_fields_set
    if "deadline_days" in sent:
        if body.deadline_days is None:
            found.deadline_days = found.deadline_days_source = None
            found.deadline_at = found.deadline_calendar = None
        else:
            found.deadline_days, found.deadline_days_source = body.deadline_days, "LAWYER"
            found.deadline_at = await office_deadline(
                session, office_id, found.published_on, body.deadline_days
            )
            found.deadline_calendar = CALENDAR
    if "read" in sent and body.read is not None:
        if not body.read:
            found.read_at = None
        elif found.read_at is None:
            found.read_at = utcnow()
    found.updated_at = utcnow()
    await session.flush()
    return publication_out(found, settings)
