from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.errors import Forbidden, NotFound
from officehub.kit.pagination import PageParams
from officehub.legal_areas import repository
from officehub.legal_areas.hooks import LegalAreaDeleting, legal_area_deleting
from officehub.legal_areas.models import LegalArea
from officehub.legal_areas.schemas import LegalAreaCreate, LegalAreaUpdate


async def get_legal_area(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> LegalArea:
    """The office's area or a default one; another office's area is not found."""
    record = await repository.get_visible(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Legal area", ident)
    return record


async def _own_legal_area(session: AsyncSession, office_id: str, ident: str) -> LegalArea:
    """The office's own area, locked for its change; a default one is refused (403)."""
    area = await get_legal_area(session, office_id, ident, for_change=True)
    if area.office_id is None:
        raise Forbidden(
            "Default legal area",
            details=f"{area.name} is a default legal area; offices cannot change or delete it",
            code="DEFAULT_LEGAL_AREA",
        )
    return area


async def list_legal_areas(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[LegalArea], int]:
    return await repository.list_visible(session, office_id, params)


async def create_legal_area(
    session: AsyncSession, office_id: str, body: LegalAreaCreate
) -> LegalArea:
    area = LegalArea(office_id=office_id, name=body.name, color=body.color)
    session.add(area)
    await session.flush()
    return area


async def update_legal_area(
    session: AsyncSession, office_id: str, ident: str, body: LegalAreaUpdate
) -> LegalArea:
    area = await _own_legal_area(session, office_id, ident)
    if body.name is not None:
        area.name = body.name
    if body.color is not None:
        area.color = body.color
    await session.flush()
    return area


async def delete_legal_area(session: AsyncSession, office_id: str, ident: str) -> LegalArea:
    area = await _own_legal_area(session, office_id, ident)
    await legal_area_deleting.fire(LegalAreaDeleting(session, office_id, ident))
    await repository.delete(session, area)
    return area
