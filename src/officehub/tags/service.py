from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.tags import repository
from officehub.tags.models import Tag


async def get_tag(session: AsyncSession, office_id: str, ident: str) -> Tag:
    record = await repository.get_tag(session, office_id, ident)
    if record is None:
        raise NotFound.of("Tag", ident)
    return record
