from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.tickets import repository
from officehub.tickets.models import Ticket, TicketStatus


async def get_ticket(session: AsyncSession, office_id: str, ident: str) -> Ticket:
    record = await repository.get_ticket(session, office_id, ident)
    if record is None:
        raise NotFound.of("Ticket", ident)
    return record


async def get_ticket_status(session: AsyncSession, office_id: str, ident: str) -> TicketStatus:
    record = await repository.get_ticket_status(session, office_id, ident)
    if record is None:
        raise NotFound.of("Ticket status", ident)
    return record
