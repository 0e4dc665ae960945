from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from officehub.inboxes import service
from officehub.inboxes.schemas import (
    BusinessHoursIn,
    BusinessHoursOut,
    InboxCreate,
    InboxOut,
    InboxUpdate,
    IntegrationCreate,
    IntegrationOut,
    IntegrationType,
    IntegrationUpdate,
)
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Inboxes"])


@router.post(
    "/inbox", status_code=201, response_model=InboxOut, responses=error_responses(400, 401)
)
async def create_inbox(body: InboxCreate, office: OfficeDep, session: SessionDep) -> InboxOut:
    return InboxOut.model_validate(await service.create_inbox(session, office.office_id, body))


@router.get("/inbox", response_model=Page[InboxOut], responses=error_responses(400, 401))
async def list_inboxes(office: OfficeDep, session: SessionDep, page: PageDep) -> Page[InboxOut]:
    items, total = await service.list_inboxes(session, office.office_id, page)
    return Page[InboxOut].of([InboxOut.model_validate(i) for i in items], total, page)


@router.get("/inbox/{id}", response_model=InboxOut, responses=error_responses(400, 401, 404))
async def read_inbox(id: PathId, office: OfficeDep, session: SessionDep) -> InboxOut:
    return InboxOut.model_validate(await service.get_inbox(session, office.office_id, id))


@router.patch("/inbox/{id}", response_model=InboxOut, responses=error_responses(400, 401, 404))
async def update_inbox(
    id: PathId, body: InboxUpdate, office: OfficeDep, session: SessionDep
) -> InboxOut:
    return InboxOut.model_validate(await service.update_inbox(session, office.office_id, id, body))


@router.delete(
    "/inbox/{id}",
    response_model=InboxOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Delete an inbox (409 while it holds conversations)",
)
async def delete_inbox(id: PathId, office: OfficeDep, session: SessionDep) -> InboxOut:
    return InboxOut.model_validate(await service.delete_inbox(session, office.office_id, id))


@router.get(
    "/inbox/{id}/business-hours",
    response_model=BusinessHoursOut | None,
    responses=error_responses(400, 401, 404),
    summary="An inbox's business hours (null: none, always open)",
)
async def read_business_hours(
    id: PathId, office: OfficeDep, session: SessionDep
) -> BusinessHoursOut | None:
    record = await service.get_business_hours(session, office.office_id, id)
    return None if record is None else BusinessHoursOut.model_validate(record)


@router.put(
    "/inbox/{id}/business-hours",
    response_model=BusinessHoursOut,
    responses=error_responses(400, 401, 404),
    summary="Set an inbox's business hours and away message",
)
async def put_business_hours(
    id: PathId, body: BusinessHoursIn, office: OfficeDep, session: SessionDep
) -> BusinessHoursOut:
    record = await service.put_business_hours(session, office.office_id, id, body)
    return BusinessHoursOut.model_validate(record)


@router.post(
    "/integration",
    status_code=201,
    response_model=IntegrationOut,
    responses=error_responses(400, 401, 404, 409),
    tags=["Integrations"],
)
async def create_integration(
    body: IntegrationCreate, office: OfficeDep, session: SessionDep, request: Request
) -> IntegrationOut:
    record = await service.create_integration(
        session, office.office_id, body, allow_private=_allow_private(request)
    )
    return IntegrationOut.model_validate(record)


@router.get(
    "/integration",
    response_model=Page[IntegrationOut],
    responses=error_responses(400, 401, 404),
    tags=["Integrations"],
    summary="List the office's channels",
)
async def list_integrations(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
    type: Annotated[IntegrationType | None, Query()] = None,
) -> Page[IntegrationOut]:
    items, total = await service.list_integrations(
        session, office.office_id, page, inbox_id=inbox_id, type=type
    )
    return Page[IntegrationOut].of([IntegrationOut.model_validate(i) for i in items], total, page)


@router.get(
    "/integration/{id}",
    response_model=IntegrationOut,
    responses=error_responses(400, 401, 404),
    tags=["Integrations"],
)
async def read_integration(id: PathId, office: OfficeDep, session: SessionDep) -> IntegrationOut:
    record = await service.get_integration(session, office.office_id, id)
    return IntegrationOut.model_validate(record)


@router.patch(
    "/integration/{id}",
    response_model=IntegrationOut,
    responses=error_responses(400, 401, 404, 409),
    tags=["Integrations"],
)
async def update_integration(
    id: PathId, body: IntegrationUpdate, office: OfficeDep, session: SessionDep, request: Request
) -> IntegrationOut:
    record = await service.update_integration(
        session, office.office_id, id, body, allow_private=_allow_private(request)
    )
    return IntegrationOut.model_validate(record)


@router.delete(
    "/integration/{id}",
    response_model=IntegrationOut,
    responses=error_responses(400, 401, 404, 409),
    tags=["Integrations"],
    summary="Delete a channel (409 while it carries conversations)",
)
async def delete_integration(id: PathId, office: OfficeDep, session: SessionDep) -> IntegrationOut:
    record = await service.delete_integration(session, office.office_id, id)
    return IntegrationOut.model_validate(record)


def _allow_private(request: Request) -> bool:
    return bool(request.app.state.settings.webhook_allow_private)
