from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.users import repository
from officehub.users.models import User


async def get_user(session: AsyncSession, office_id: str, ident: str) -> User:
    record = await repository.get_user(session, office_id, ident)
    if record is None:
        raise NotFound.of("User", ident)
    return record
