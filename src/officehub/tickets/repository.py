from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, lock_rows, replace_set, scoped
from officehub.tickets.models import Ticket, TicketAssignee, TicketDepartment, TicketStatus


async def get_ticket(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Ticket | None:
    return await get_scoped(session, Ticket, office_id, ident, for_change=for_change)


async def get_ticket_status(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> TicketStatus | None:
    return await get_scoped(session, TicketStatus, office_id, ident, for_change=for_change)


async def list_ticket_statuses(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[TicketStatus], int]:
    stmt = scoped(TicketStatus, office_id).order_by(TicketStatus.created_at, TicketStatus.id)
    return await paginate(session, stmt, params)


async def statuses_by_id(
    session: AsyncSession, office_id: str, ids: Sequence[str]
) -> dict[str, TicketStatus]:
    if not ids:
        return {}
    stmt = scoped(TicketStatus, office_id).where(TicketStatus.id.in_(set(ids)))
    return {s.id: s for s in await session.scalars(stmt)}


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
    stmt = scoped(Ticket, office_id)
    if seen is not None:
        stmt = stmt.where(seen)
    if status_id is not None:
        stmt = stmt.where(Ticket.status_id == status_id)
    if priority is not None:
        stmt = stmt.where(Ticket.priority == priority)
    if conversation_id is not None:
        stmt = stmt.where(Ticket.conversation_id == conversation_id)
    if assignee_id is not None:
        stmt = stmt.where(
            Ticket.id.in_(
                select(TicketAssignee.ticket_id).where(
                    TicketAssignee.office_id == office_id, TicketAssignee.user_id == assignee_id
                )
            )
        )
    if department_id is not None:
        stmt = stmt.where(
            Ticket.id.in_(
                select(TicketDepartment.ticket_id).where(
                    TicketDepartment.office_id == office_id,
                    TicketDepartment.department_id == department_id,
                )
            )
        )
    return await paginate(session, stmt.order_by(Ticket.created_at.desc(), Ticket.id), params)


async def links_of(
    session: AsyncSession, office_id: str, ticket_ids: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(assignee ids, department ids) of each ticket, for a page of tickets."""
    assignees: dict[str, list[str]] = {ident: [] for ident in ticket_ids}
    departments: dict[str, list[str]] = {ident: [] for ident in ticket_ids}
    if not ticket_ids:
        return assignees, departments
    rows = await session.execute(
        select(TicketAssignee.ticket_id, TicketAssignee.user_id)
        .where(TicketAssignee.office_id == office_id, TicketAssignee.ticket_id.in_(ticket_ids))
        .order_by(TicketAssignee.user_id)
    )
    for ticket_id, user_id in rows.all():
        assignees[ticket_id].append(user_id)
    rows = await session.execute(
        select(TicketDepartment.ticket_id, TicketDepartment.department_id)
        .where(TicketDepartment.office_id == office_id, TicketDepartment.ticket_id.in_(ticket_ids))
        .order_by(TicketDepartment.department_id)
    )
    for ticket_id, department_id in rows.all():
        departments[ticket_id].append(department_id)
    return assignees, departments


async def set_assignees(
    session: AsyncSession, office_id: str, ticket_id: str, user_ids: Sequence[str]
) -> None:
    await lock_rows(session, Ticket, office_id, Ticket.id == ticket_id)
    owner = ("ticket_id", ticket_id)
    await replace_set(session, TicketAssignee, office_id, owner, "user_id", user_ids)


async def set_departments(
    session: AsyncSession, office_id: str, ticket_id: str, department_ids: Sequence[str]
) -> None:
    await lock_rows(session, Ticket, office_id, Ticket.id == ticket_id)
    owner = ("ticket_id", ticket_id)
    await replace_set(session, TicketDepartment, office_id, owner, "department_id", department_ids)


async def tickets_quoting(
    session: AsyncSession, office_id: str, needles: Sequence[str]
) -> list[Ticket]:
    """The office's tickets whose title or description holds any of ``needles`` (any case;
    on SQLite, any ASCII case), locked for change."""
    quoted = [
        column.ilike(f"%{needle}%", escape="\\")
        for needle in (
            n.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for n in needles
        )
        for column in (Ticket.title, Ticket.description)
    ]
    stmt = scoped(Ticket, office_id).where(or_(*quoted)).order_by(Ticket.id).with_for_update()
    return list(await session.scalars(stmt))
