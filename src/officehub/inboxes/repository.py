from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes.models import Inbox, Integration
from officehub.repository import get_scoped


async def get_inbox(session: AsyncSession, office_id: str, ident: str) -> Inbox | None:
    return await get_scoped(session, Inbox, office_id, ident)


async def get_integration(session: AsyncSession, office_id: str, ident: str) -> Integration | None:
    return await get_scoped(session, Integration, office_id, ident)
