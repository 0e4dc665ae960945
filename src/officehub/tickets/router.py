from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.conversations.visibility import visible_conversation
from officehub.kit.auth import ActorDep, OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.tickets import service
from officehub.tickets.schemas import (
    TicketCreate,
    TicketOut,
    TicketPriority,
    TicketStatusCreate,
    TicketStatusOut,
    TicketUpdate,
)
from officehub.tickets.visibility import VisibleTicket, tickets_seen

router = Router(tags=["Tickets"])


@router.get(
    "/ticket-statuses",
    response_model=Page[TicketStatusOut],
    responses=error_responses(400, 401),
    summary="The office's ticket statuses",
)
async def list_ticket_statuses(
    office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[TicketStatusOut]:
    items, total = await service.list_ticket_statuses(session, office.office_id, page)
    return Page[TicketStatusOut].of([TicketStatusOut.model_validate(s) for s in items], total, page)


@router.post(
    "/ticket-statuses",
    status_code=201,
    response_model=TicketStatusOut,
    responses=error_responses(400, 401),
)
async def create_ticket_status(
    body: TicketStatusCreate, office: OfficeDep, session: SessionDep
) -> TicketStatusOut:
    status = await service.create_ticket_status(session, office.office_id, body)
    return TicketStatusOut.model_validate(status)


@router.post(
    "/ticket",
    status_code=201,
    response_model=TicketOut,
    responses=error_responses(400, 401, 404, 409),
)
async def create_ticket(body: TicketCreate, office: OfficeDep, session: SessionDep) -> TicketOut:
    if body.conversation_id is not None:
        await visible_conversation(session, office.who, body.conversation_id)
    ticket = await service.create_ticket(session, office.office_id, body)
    return (await service.present(session, office.office_id, [ticket]))[0]


@router.get("/ticket", response_model=Page[TicketOut], responses=error_responses(400, 401, 404))
async def list_tickets(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    actor: ActorDep,
    status_id: Annotated[Id | None, Query(alias="statusId")] = None,
    priority: Annotated[TicketPriority | None, Query()] = None,
    assignee_id: Annotated[Id | None, Query(alias="assigneeId")] = None,
    department_id: Annotated[Id | None, Query(alias="departmentId")] = None,
    conversation_id: Annotated[Id | None, Query(alias="conversationId")] = None,
) -> Page[TicketOut]:
    tickets, total = await service.list_tickets(
        session,
        office.office_id,
        page,
        status_id=status_id,
        priority=priority,
        assignee_id=assignee_id,
        department_id=department_id,
        conversation_id=conversation_id,
        seen=tickets_seen(actor),
    )
    return Page[TicketOut].of(
        await service.present(session, office.office_id, tickets), total, page
    )


@router.get("/ticket/{id}", response_model=TicketOut, responses=error_responses(400, 401, 404))
async def read_ticket(
    id: PathId, _visible: VisibleTicket, office: OfficeDep, session: SessionDep
) -> TicketOut:
    ticket = await service.get_ticket(session, office.office_id, id)
    return (await service.present(session, office.office_id, [ticket]))[0]


@router.patch(
    "/ticket/{id}", response_model=TicketOut, responses=error_responses(400, 401, 404, 409)
)
async def update_ticket(
    id: PathId, body: TicketUpdate, _visible: VisibleTicket, office: OfficeDep, session: SessionDep
) -> TicketOut:
    if body.conversation_id is not None:
        await visible_conversation(session, office.who, body.conversation_id)
    ticket = await service.update_ticket(session, office.office_id, id, body)
    return (await service.present(session, office.office_id, [ticket]))[0]
