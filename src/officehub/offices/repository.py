from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.offices.models import Office


async def find_office(session: AsyncSession, office_id: str) -> Office | None:
    return await session.scalar(select(Office).where(Office.id == office_id))
