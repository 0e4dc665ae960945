from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.fast_messages.models import FastMessage
from officehub.repository import get_scoped


async def get_fast_message(session: AsyncSession, office_id: str, ident: str) -> FastMessage | None:
    return await get_scoped(session, FastMessage, office_id, ident)
