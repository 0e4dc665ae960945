from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from officehub.contacts.visibility import require_visible_contact, through_contact
from officehub.conversations.visibility import VisibleConversation
from officehub.flows import service
from officehub.flows.models import CaseMovement
from officehub.flows.schemas import (
    FlowCheckOut,
    FlowCreate,
    FlowOut,
    FlowSessionOut,
    FlowUpdate,
    MovementCreate,
    MovementOut,
)
from officehub.kit.auth import ROLES, OfficeDep, role_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.timeutil import utcnow
from officehub.webhooks.schemas import ActionDeliveryOut, DeliveryStatus

router = Router(tags=["Flows"])


def _allow_private(request: Request) -> bool:
    return bool(request.app.state.settings.webhook_allow_private)


@router.post(
    "/flow",
    status_code=201,
    response_model=FlowOut,
    responses=error_responses(400, 401, 404),
    summary="Create a flow (400 INVALID_FLOW_GRAPH when its step graph is broken)",
)
async def create_flow(
    body: FlowCreate, office: OfficeDep, session: SessionDep, request: Request
) -> FlowOut:
    return await service.create_flow(
        session, office.office_id, body, allow_private=_allow_private(request)
    )


@router.post(
    "/flow/check",
    response_model=FlowCheckOut,
    responses=error_responses(400, 401, 404),
    summary="Check a flow without saving it: the body of a create, answered with the "
    "problems a save would refuse (INVALID_FLOW_GRAPH's, by step) and its warnings; "
    "writes nothing",
)
async def check_flow(
    body: FlowCreate, office: OfficeDep, session: SessionDep, request: Request
) -> FlowCheckOut:
    return await service.check_flow(
        session, office.office_id, body, allow_private=_allow_private(request)
    )


@router.get("/flow", response_model=Page[FlowOut], responses=error_responses(400, 401, 404))
async def list_flows(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
) -> Page[FlowOut]:
    items, total = await service.list_flows(session, office.office_id, page, inbox_id=inbox_id)
    return Page[FlowOut].of(items, total, page)


@router.get("/flow/{id}", response_model=FlowOut, responses=error_responses(400, 401, 404))
async def read_flow(id: PathId, office: OfficeDep, session: SessionDep) -> FlowOut:
    return service.flow_out(await service.get_flow(session, office.office_id, id))


@router.patch(
    "/flow/{id}",
    response_model=FlowOut,
    responses=error_responses(400, 401, 404),
    summary="Update a flow; a new content is checked as on create",
)
async def update_flow(
    id: PathId, body: FlowUpdate, office: OfficeDep, session: SessionDep, request: Request
) -> FlowOut:
    return await service.update_flow(
        session, office.office_id, id, body, allow_private=_allow_private(request)
    )


@router.delete("/flow/{id}", response_model=FlowOut, responses=error_responses(400, 401, 404))
async def delete_flow(id: PathId, office: OfficeDep, session: SessionDep) -> FlowOut:
    return await service.delete_flow(session, office.office_id, id)


@router.get(
    "/flow/{id}/deliveries",
    response_model=Page[ActionDeliveryOut],
    responses=error_responses(400, 401, 404),
    summary="The flow's FIRE_WEBHOOK step deliveries, newest first: status, HTTP code, "
    "duration, response excerpt, every attempt, next attempt (kept 90 days)",
)
async def list_deliveries(
    id: PathId,
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    status: Annotated[DeliveryStatus | None, Query(description="Only this status")] = None,
) -> Page[ActionDeliveryOut]:
    items, total = await service.list_deliveries(session, office.office_id, id, page, status=status)
    return Page[ActionDeliveryOut].of(items, total, page)


@router.get(
    "/conversation/{id}/flow-session",
    response_model=FlowSessionOut,
    responses=error_responses(400, 401, 404),
    summary="The conversation's flow session: the flow, the current step, what it waits for",
    openapi_extra=role_override(*ROLES),
)
async def read_flow_session(
    id: PathId, _visible: VisibleConversation, office: OfficeDep, session: SessionDep
) -> FlowSessionOut:
    return await service.flow_session(session, office.office_id, id, utcnow())


@router.post(
    "/case-movements",
    status_code=201,
    response_model=MovementOut,
    responses=error_responses(400, 401, 404),
    summary="Record a movement of a contact's case (what SEARCH_MOVEMENTS steps list)",
)
async def record_movement(
    body: MovementCreate, office: OfficeDep, session: SessionDep
) -> MovementOut:
    return MovementOut.model_validate(
        await service.record_movement(session, office.office_id, body)
    )


@router.get(
    "/case-movements", response_model=Page[MovementOut], responses=error_responses(400, 401, 404)
)
async def list_movements(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    person_id: Annotated[Id | None, Query(alias="personId")] = None,
) -> Page[MovementOut]:
    """A SUPERVISOR sees the movements of the contacts they may see; a filter naming
    another one is 404, as the contact is (issue 39)."""
    who = office.who
    if person_id is not None:
        await require_visible_contact(session, who, person_id)
    visible = await through_contact(session, who, CaseMovement.person_id)
    items, total = await service.list_movements(
        session, office.office_id, page, person_id=person_id, visible=visible
    )
    return Page[MovementOut].of([MovementOut.model_validate(m) for m in items], total, page)


@router.delete(
    "/case-movements/{id}", response_model=MovementOut, responses=error_responses(400, 401, 404)
)
async def delete_movement(id: PathId, office: OfficeDep, session: SessionDep) -> MovementOut:
    return MovementOut.model_validate(await service.delete_movement(session, office.office_id, id))
