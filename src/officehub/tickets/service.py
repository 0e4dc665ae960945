from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.departments import service as departments
from officehub.kit.errors import NotFound
from officehub.kit.pagination import PageParams
from officehub.tickets import repository
from officehub.tickets.models import Ticket, TicketStatus
from officehub.tickets.schemas import (
    TicketCreate,
    TicketOut,
    TicketStatusCreate,
    TicketStatusRef,
    TicketUpdate,
)
from officehub.users import service as users


async def get_ticket(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Ticket:
    record = await repository.get_ticket(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Ticket", ident)
    return record


async def get_ticket_status(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> TicketStatus:
    record = await repository.get_ticket_status(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Ticket status", ident)
    return record


async def list_ticket_statuses(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[TicketStatus], int]:
    return await repository.list_ticket_statuses(session, office_id, params)


async def create_ticket_status(
    session: AsyncSession, office_id: str, body: TicketStatusCreate
) -> TicketStatus:
    status = TicketStatus(office_id=office_id, name=body.name, color=body.color)
    session.add(status)
    await session.flush()
    return status


async def present(
    session: AsyncSession, office_id: str, tickets: Sequence[Ticket]
) -> list[TicketOut]:
    ids = [t.id for t in tickets]
    assignees, departments_of = await repository.links_of(session, office_id, ids)
    statuses = await repository.statuses_by_id(session, office_id, [t.status_id for t in tickets])
    return [
        TicketOut(
            id=t.id,
            office_id=t.office_id,
            title=t.title,
            description=t.description,
            status_id=t.status_id,
            status=TicketStatusRef.model_validate(statuses[t.status_id]),
            priority=t.priority,
            assignee_ids=assignees[t.id],
            department_ids=departments_of[t.id],
            conversation_id=t.conversation_id,
            created_at=t.created_at,
            updated_at=t.updated_at,
        )
        for t in tickets
    ]


async def list_tickets(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    status_id: str | None = None,
    priority: str | None = None,
    assignee_id: str | None = None,
    department_id: str | None = None,
    conversation_id: str | None = None,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[Ticket], int]:
    """``seen``: the WHERE clause of the tickets the caller may see (``tickets.visibility``)."""
    if status_id is not None:
        await get_ticket_status(session, office_id, status_id)
    await _check_people(
        session,
        office_id,
        [assignee_id] if assignee_id else None,
        [department_id] if department_id else None,
    )
    if conversation_id is not None:
        await conversations.get_conversation(session, office_id, conversation_id)
    return await repository.list_tickets(
        session,
        office_id,
        params,
        status_id=status_id,
        priority=priority,
        assignee_id=assignee_id,
        department_id=department_id,
        conversation_id=conversation_id,
        seen=seen,
    )


async def _check_people(
    session: AsyncSession,
    office_id: str,
    assignee_ids: Sequence[str] | None,
    department_ids: Sequence[str] | None,
) -> None:
    for ident in assignee_ids or ():
        await users.get_user(session, office_id, ident)
    for ident in department_ids or ():
        await departments.get_department(session, office_id, ident)


async def create_ticket(session: AsyncSession, office_id: str, body: TicketCreate) -> Ticket:
    await get_ticket_status(session, office_id, body.status_id)
    await _check_people(session, office_id, body.assignee_ids, body.department_ids)
    if body.conversation_id is not None:
        await conversations.get_conversation(session, office_id, body.conversation_id)
    ticket = Ticket(
        office_id=office_id,
        title=body.title,
        description=body.description,
        status_id=body.status_id,
        priority=body.priority,
        conversation_id=body.conversation_id,
    )
    session.add(ticket)
    await session.flush()
    await repository.set_assignees(session, office_id, ticket.id, body.assignee_ids)
    await repository.set_departments(session, office_id, ticket.id, body.department_ids)
    return ticket


async def update_ticket(
    session: AsyncSession, office_id: str, ident: str, body: TicketUpdate
) -> Ticket:
    ticket = await get_ticket(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    if body.status_id is not None:
        await get_ticket_status(session, office_id, body.status_id)
        ticket.status_id = body.status_id
    await _check_people(session, office_id, body.assignee_ids, body.department_ids)
    if "conversation_id" in sent:
        if body.conversation_id is not None:
            await conversations.get_conversation(session, office_id, body.conversation_id)
        ticket.conversation_id = body.conversation_id
    if body.title is not None:
        ticket.title = body.title
    if "description" in sent:
        ticket.description = body.description
    if body.priority is not None:
        ticket.priority = body.priority
    if body.assignee_ids is not None:
        await repository.set_assignees(session, office_id, ticket.id, body.assignee_ids)
    if body.department_ids is not None:
        await repository.set_departments(session, office_id, ticket.id, body.department_ids)
    await session.flush()
    return ticket
