from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.departments.models import Department
from officehub.repository import get_scoped


async def get_department(session: AsyncSession, office_id: str, ident: str) -> Department | None:
    return await get_scoped(session, Department, office_id, ident)
