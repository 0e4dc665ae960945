"""Cases: the unified number checked and routed to its court, CRUD, and the events."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases import events, repository
from officehub.cases.explain import explain
from officehub.cases.models import Case, CaseMovement
from officehub.cases.numbers import (
    CaseNumber,
    CaseNumberError,
    CourtNotSupported,
    court_of,
    parse,
)
from officehub.cases.schemas import CaseCreate, CaseMovementOut, CaseOut, CaseUpdate
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.events.service import emit
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.legal_areas import service as legal_areas

INVALID_CASE_NUMBER = "INVALID_CASE_NUMBER"
COURT_NOT_SUPPORTED = "COURT_NOT_SUPPORTED"
CASE_EXISTS = "CASE_EXISTS"
FIRST_CHECK_SPREAD = timedelta(minutes=1)
"""A newly watched case is checked within this time (spread, so a bulk import does not
send every request at once)."""
_CHANGEABLE = ("conversationId", "legalAreaId", "watch")


def checked_number(raw: str, field: str = "body.number") -> tuple[CaseNumber, str, str]:
    """The number, its court's DataJud alias and name; else 400 naming ``field``."""
    try:
        number = parse(raw)
        court = court_of(number)
    except CaseNumberError as exc:
        raise ValidationFailed.field(field, str(exc), code=INVALID_CASE_NUMBER) from exc
    except CourtNotSupported as exc:
        raise ValidationFailed.field(field, str(exc), code=COURT_NOT_SUPPORTED) from exc
    return number, court.alias, court.name


def court_name(case: Case) -> str:
    return court_of(CaseNumber(case.number)).name


def case_out(case: Case) -> CaseOut:
    return CaseOut(
        id=case.id,
        person_id=case.person_id,
        conversation_id=case.conversation_id,
        legal_area_id=case.legal_area_id,
        number=CaseNumber(case.number).formatted,
        court=case.court,
        court_name=court_name(case),
        watch=case.watch,
        next_check_at=case.next_check_at if case.watch else None,
        last_checked_at=case.last_checked_at,
        last_movement_at=case.last_movement_at,
        check_status=case.check_status,
        source_stale_since=case.source_stale_since,
        created_at=case.created_at,
        updated_at=case.updated_at,
    )


def movement_out(movement: CaseMovement) -> CaseMovementOut:
    found = explain(movement.code, movement.description, movement.complements)
    return CaseMovementOut(
        id=movement.id,
        case_id=movement.case_id,
        person_id=movement.person_id,
        case_number=movement.case_number,
        code=movement.code,
        description=movement.description,
        explanation=None if found is None else found.text,
        category=None if found is None else found.category,
        occurred_at=movement.occurred_at,
        created_at=movement.created_at,
    )


def first_check_at(now: datetime) -> datetime:
    return now + FIRST_CHECK_SPREAD * random.random()  # noqa: S311 - spread, not secret


async def get_case(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Case:
    case = await repository.get_case(session, office_id, ident, for_change=for_change)
    if case is None:
        raise NotFound.of("Case", ident)
    return case


async def _check_conversation(
    session: AsyncSession, office_id: str, conversation_id: str, person_id: str, field: str
) -> None:
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    if conversation.person_id != person_id:
        raise ValidationFailed.field(field, "the conversation is not the case's contact's")


def _exists(number: str) -> Conflict:
    return Conflict(
        "Case already registered",
        details=f"The office already has case {number}",
        code=CASE_EXISTS,
    )


async def create_case(session: AsyncSession, office_id: str, body: CaseCreate) -> CaseOut:
    number, alias, _name = checked_number(body.number)
    await contacts.get_contact(session, office_id, body.person_id)
    if body.conversation_id is not None:
        await _check_conversation(
            session, office_id, body.conversation_id, body.person_id, "body.conversationId"
        )
    if body.legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
    if await repository.find_by_number(session, office_id, number.digits) is not None:
        raise _exists(number.formatted)
    now = utcnow()
    case = Case(
        office_id=office_id,
        person_id=body.person_id,
        conversation_id=body.conversation_id,
        legal_area_id=body.legal_area_id,
        number=number.digits,
        court=alias,
        watch=body.watch,
        next_check_at=first_check_at(now) if body.watch else None,
        check_status=None,
        check_error=None,
    )
    await repository.add(session, case)
    await flush_or_conflict(session, _exists(number.formatted))
    return case_out(case)


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
) -> tuple[list[CaseOut], int]:
    """``seen``: the WHERE clause of the cases the caller may see (``cases.visibility``)."""
    if person_id is not None:
        await contacts.get_contact(session, office_id, person_id)
    if conversation_id is not None:
        await conversations.get_conversation(session, office_id, conversation_id)
    if legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, legal_area_id)
    rows, total = await repository.list_cases(
        session,
        office_id,
        params,
        person_id=person_id,
        conversation_id=conversation_id,
        legal_area_id=legal_area_id,
        watch=watch,
        court=court,
        seen=seen,
    )
    return [case_out(c) for c in rows], total


async def read_case(session: AsyncSession, office_id: str, ident: str) -> CaseOut:
    return case_out(await get_case(session, office_id, ident))


async def update_case(
    session: AsyncSession, office_id: str, ident: str, body: CaseUpdate
) -> CaseOut:
    case = await get_case(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    before = (case.conversation_id, case.legal_area_id, case.watch)
    if "conversation_id" in sent:
        if body.conversation_id is not None:
            await _check_conversation(
                session, office_id, body.conversation_id, case.person_id, "body.conversationId"
            )
        case.conversation_id = body.conversation_id
    if "legal_area_id" in sent:
        if body.legal_area_id is not None:
            await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
        case.legal_area_id = body.legal_area_id
    if "watch" in sent and body.watch is not None and body.watch != case.watch:
        case.watch = body.watch
        case.next_check_at = first_check_at(utcnow()) if body.watch else None
        # an unwatched case is not asked: no silence to report (a re-watch starts afresh)
        case.source_failing_since = case.source_stale_since = None
    await session.flush()
    after = (case.conversation_id, case.legal_area_id, case.watch)
    changes = [
        name
        for name, old, new in zip(
            ("conversationId", "legalAreaId", "watch"), before, after, strict=True
        )
        if old != new
    ]
    if changes:
        await emit_updated(session, case, changes)
    return case_out(case)


async def delete_case(session: AsyncSession, office_id: str, ident: str) -> CaseOut:
    case = await get_case(session, office_id, ident, for_change=True)
    out = case_out(case)
    await repository.delete(session, case)
    return out


async def list_movements(
    session: AsyncSession, office_id: str, ident: str, params: PageParams
) -> tuple[list[CaseMovementOut], int]:
    case = await get_case(session, office_id, ident)
    rows, total = await repository.movements_of(session, office_id, case.id, params)
    return [movement_out(m) for m in rows], total


async def recipient_conversation(session: AsyncSession, case: Case) -> str | None:
    """Where the client hears of the case: its conversation, else the contact's latest."""
    if case.conversation_id is not None:
        return case.conversation_id
    latest = await conversations.latest_of_person(session, case.office_id, case.person_id)
    return None if latest is None else latest.id


def movement_data(
    case: Case, movement: CaseMovement, conversation_id: str | None
) -> events.CaseMovementPayload:
    return events.CaseMovementPayload(
        **dict(movement_out(movement)), court=case.court, conversation_id=conversation_id
    )


async def emit_movement(
    session: AsyncSession, case: Case, movement: CaseMovement, conversation_id: str | None
) -> None:
    integration_id = None
    if conversation_id is not None:
        conversation = await conversations.get_conversation(
            session, case.office_id, conversation_id
        )
        integration_id = conversation.integration_id
    await emit(
        session,
        case.office_id,
        events.MOVEMENT_CREATED,
        movement_data(case, movement, conversation_id),
        conversation_id=conversation_id,
        integration_id=integration_id,
    )


async def emit_updated(session: AsyncSession, case: Case, changes: list[str]) -> None:
    data = events.CaseUpdatedPayload(**dict(case_out(case)), changes=changes)
    await emit(session, case.office_id, events.UPDATED, data)


async def _recorded_with(session: AsyncSession, case: Case) -> tuple[str | None, str | None]:
    """The conversation (the case's, else the contact's latest) and integration a case's
    source event is recorded with, as ``case.movement.created`` is: automation rules treat
    it alike."""
    conversation_id = await recipient_conversation(session, case)
    if conversation_id is None:
        return None, None
    conversation = await conversations.get_conversation(session, case.office_id, conversation_id)
    return conversation_id, conversation.integration_id


async def emit_stale(
    session: AsyncSession, case: Case, failing_since: datetime, error: str | None
) -> None:
    data = events.CaseSourceStalePayload(
        **dict(case_out(case)), failing_since=failing_since, error=error
    )
    conversation_id, integration_id = await _recorded_with(session, case)
    await emit(
        session,
        case.office_id,
        events.SOURCE_STALE,
        data,
        conversation_id=conversation_id,
        integration_id=integration_id,
    )


async def emit_recovered(session: AsyncSession, case: Case, stale_from: datetime) -> None:
    data = events.CaseSourceRecoveredPayload(**dict(case_out(case)), stale_from=stale_from)
    conversation_id, integration_id = await _recorded_with(session, case)
    await emit(
        session,
        case.office_id,
        events.SOURCE_RECOVERED,
        data,
        conversation_id=conversation_id,
        integration_id=integration_id,
    )


async def latest_by_case(
    session: AsyncSession, office_id: str, person_id: str, cases: int, per_case: int
) -> list[tuple[str, list[CaseMovement]]]:
    """The contact's newest ``cases`` cases (formatted number), each with its newest
    ``per_case`` movements."""
    found = []
    for case in await repository.cases_of_person(session, office_id, person_id, cases):
        moves = await repository.latest_movements(session, office_id, case.id, per_case)
        found.append((CaseNumber(case.number).formatted, moves))
    return found


async def movements_by_ids(
    session: AsyncSession, office_id: str, ids: tuple[str, ...]
) -> list[CaseMovement]:
    """The office's movements of these ids, in the order they happened."""
    return await repository.movements_by_ids(session, office_id, ids)
