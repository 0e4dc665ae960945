from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.fast_messages import repository
from officehub.fast_messages.models import FastMessage


async def get_fast_message(session: AsyncSession, office_id: str, ident: str) -> FastMessage:
    record = await repository.get_fast_message(session, office_id, ident)
    if record is None:
        raise NotFound.of("Fast message", ident)
    return record
