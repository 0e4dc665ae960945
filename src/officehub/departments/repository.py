from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.departments.models import Department
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped


async def get_department(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Department | None:
    return await get_scoped(session, Department, office_id, ident, for_change=for_change)


async def list_departments(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Department], int]:
    stmt = scoped(Department, office_id).order_by(Department.name, Department.id)
    return await paginate(session, stmt, params)


async def delete(session: AsyncSession, record: Department) -> None:
    """Conversations keep going without the department; tickets lose it (foreign keys)."""
    await session.delete(record)
    await session.flush()
