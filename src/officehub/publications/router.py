from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from officehub.kit.auth import ROLES, OfficeDep, role_override
from officehub.kit.config import Settings
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.schemas import IsoDate
from officehub.publications import service
from officehub.publications.schemas import (
    CourtHolidayCreate,
    CourtHolidayOut,
    LawyerCreate,
    LawyerOut,
    LawyerUpdate,
    PublicationOut,
    PublicationUpdate,
)

router = Router(tags=["Publications"])


@router.post(
    "/lawyers",
    status_code=201,
    response_model=LawyerOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Register a lawyer of the office by OAB registration",
)
async def create_lawyer(body: LawyerCreate, office: OfficeDep, session: SessionDep) -> LawyerOut:
    return await service.create_lawyer(session, office.office_id, body)


@router.get("/lawyers", response_model=Page[LawyerOut], responses=error_responses(400, 401))
async def list_lawyers(office: OfficeDep, session: SessionDep, page: PageDep) -> Page[LawyerOut]:
    items, total = await service.list_lawyers(session, office.office_id, page)
    return Page[LawyerOut].of(items, total, page)


@router.patch(
    "/lawyers/{id}",
    response_model=LawyerOut,
    responses=error_responses(400, 401, 404),
    summary="Rename a lawyer or link it to the office's user who is the lawyer",
)
async def update_lawyer(
    id: PathId, body: LawyerUpdate, office: OfficeDep, session: SessionDep
) -> LawyerOut:
    return await service.update_lawyer(session, office.office_id, id, body)


@router.delete("/lawyers/{id}", response_model=LawyerOut, responses=error_responses(400, 401, 404))
async def delete_lawyer(id: PathId, office: OfficeDep, session: SessionDep) -> LawyerOut:
    return await service.delete_lawyer(session, office.office_id, id)


@router.post(
    "/court-holidays",
    status_code=201,
    response_model=CourtHolidayOut,
    responses=error_responses(400, 401, 409),
    summary="Register a local holiday of the office's courts (deadlines skip it)",
)
async def create_court_holiday(
    body: CourtHolidayCreate, office: OfficeDep, session: SessionDep
) -> CourtHolidayOut:
    return await service.create_holiday(session, office.office_id, body)


@router.get(
    "/court-holidays", response_model=Page[CourtHolidayOut], responses=error_responses(400, 401)
)
async def list_court_holidays(
    office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[CourtHolidayOut]:
    items, total = await service.list_holidays(session, office.office_id, page)
    return Page[CourtHolidayOut].of(items, total, page)


@router.delete(
    "/court-holidays/{id}",
    response_model=CourtHolidayOut,
    responses=error_responses(400, 401, 404),
)
async def delete_court_holiday(
    id: PathId, office: OfficeDep, session: SessionDep
) -> CourtHolidayOut:
    return await service.delete_holiday(session, office.office_id, id)


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@router.get(
    "/publications",
    response_model=Page[PublicationOut],
    responses=error_responses(400, 401, 404),
    summary="The office's court publications (DJEN), newest first",
)
async def list_publications(
    request: Request,
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    lawyer_id: Annotated[Id | None, Query(alias="lawyerId")] = None,
    case_id: Annotated[Id | None, Query(alias="caseId")] = None,
    since: Annotated[
        IsoDate | None, Query(alias="from", description="Made available on or after (aaaa-mm-dd)")
    ] = None,
    until: Annotated[
        IsoDate | None, Query(alias="to", description="Made available on or before (aaaa-mm-dd)")
    ] = None,
    unread: Annotated[bool | None, Query(description="Only the unread (true) or read")] = None,
) -> Page[PublicationOut]:
    items, total = await service.list_publications(
        session,
        office.office_id,
        page,
        _settings(request),
        lawyer_id=lawyer_id,
        case_id=case_id,
        since=since,
        until=until,
        unread=unread,
    )
    return Page[PublicationOut].of(items, total, page)


@router.get(
    "/publications/{id}", response_model=PublicationOut, responses=error_responses(400, 401, 404)
)
async def get_publication(
    id: PathId, request: Request, office: OfficeDep, session: SessionDep
) -> PublicationOut:
    return await service.get_publication(session, office.office_id, id, _settings(request))


@router.patch(
    "/publications/{id}",
    response_model=PublicationOut,
    responses=error_responses(400, 401, 404),
    summary="Choose the period in business days (recounts deadlineAt) or mark read/unread",
    openapi_extra=role_override(*ROLES),  # the office's lawyers work their publications
)
async def update_publication(
    id: PathId, body: PublicationUpdate, request: Request, office: OfficeDep, session: SessionDep
) -> PublicationOut:
    return await service.update_publication(session, office.office_id, id, body, _settings(request))
