from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.departments import repository
from officehub.departments.models import Department
from officehub.errors import NotFound


async def get_department(session: AsyncSession, office_id: str, ident: str) -> Department:
    record = await repository.get_department(session, office_id, ident)
    if record is None:
        raise NotFound.of("Department", ident)
    return record
