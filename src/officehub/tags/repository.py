from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.repository import get_scoped
from officehub.tags.models import Tag


async def get_tag(session: AsyncSession, office_id: str, ident: str) -> Tag | None:
    return await get_scoped(session, Tag, office_id, ident)
