from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.repository import get_scoped
from officehub.tickets.models import Ticket, TicketStatus


async def get_ticket(session: AsyncSession, office_id: str, ident: str) -> Ticket | None:
    return await get_scoped(session, Ticket, office_id, ident)


async def get_ticket_status(
    session: AsyncSession, office_id: str, ident: str
) -> TicketStatus | None:
    return await get_scoped(session, TicketStatus, office_id, ident)
