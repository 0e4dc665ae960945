from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.inboxes import repository
from officehub.inboxes.models import Inbox, Integration


async def get_inbox(session: AsyncSession, office_id: str, ident: str) -> Inbox:
    record = await repository.get_inbox(session, office_id, ident)
    if record is None:
        raise NotFound.of("Inbox", ident)
    return record


async def get_integration(session: AsyncSession, office_id: str, ident: str) -> Integration:
    record = await repository.get_integration(session, office_id, ident)
    if record is None:
        raise NotFound.of("Integration", ident)
    return record
