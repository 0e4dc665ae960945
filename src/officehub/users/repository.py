from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.repository import get_scoped
from officehub.users.models import User


async def get_user(session: AsyncSession, office_id: str, ident: str) -> User | None:
    return await get_scoped(session, User, office_id, ident)
