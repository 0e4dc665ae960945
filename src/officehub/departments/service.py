from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.departments import repository
from officehub.departments.models import Department
from officehub.departments.schemas import DepartmentCreate, DepartmentUpdate
from officehub.kit.errors import NotFound
from officehub.kit.pagination import PageParams


async def get_department(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Department:
    record = await repository.get_department(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Department", ident)
    return record


async def list_departments(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Department], int]:
    return await repository.list_departments(session, office_id, params)


async def create_department(
    session: AsyncSession, office_id: str, body: DepartmentCreate
) -> Department:
    department = Department(office_id=office_id, name=body.name)
    session.add(department)
    await session.flush()
    return department


async def update_department(
    session: AsyncSession, office_id: str, ident: str, body: DepartmentUpdate
) -> Department:
    department = await get_department(session, office_id, ident, for_change=True)
    if body.name is not None:
        department.name = body.name
    await session.flush()
    return department


async def delete_department(session: AsyncSession, office_id: str, ident: str) -> Department:
    """Cascades: conversations assigned to it keep going unassigned to a department, and
    tickets drop it from their departments."""
    department = await get_department(session, office_id, ident, for_change=True)
    await repository.delete(session, department)
    return department
