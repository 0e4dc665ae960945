from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped
from officehub.legal_areas.models import LegalArea


async def get_visible(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> LegalArea | None:
    """An area of the office, or a default area (``office_id`` null) every office sees.

    ``for_change``: the office's own area is locked (``get_scoped``); a default one, which
    no office changes, is only read."""
    if for_change:
        own = await get_scoped(session, LegalArea, office_id, ident, for_change=True)
        if own is not None:
            return own
    stmt = select(LegalArea).where(
        LegalArea.id == ident,
        or_(LegalArea.office_id == office_id, LegalArea.office_id.is_(None)),
    )
    return (await session.scalars(stmt)).first()


async def list_visible(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[LegalArea], int]:
    """The default areas first, then the office's own, each by name."""
    stmt = (
        select(LegalArea)
        .where(or_(LegalArea.office_id == office_id, LegalArea.office_id.is_(None)))
        .order_by(LegalArea.office_id.is_not(None), LegalArea.name, LegalArea.id)
    )
    return await paginate(session, stmt, params)


async def delete(session: AsyncSession, record: LegalArea) -> None:
    await session.delete(record)
    await session.flush()


async def legal_area_names(session: AsyncSession, office_id: str, ids: list[str]) -> dict[str, str]:
    """The names of the legal areas among ``ids`` the office sees (its own and the shared
    ones), by id."""
    stmt = select(LegalArea.id, LegalArea.name).where(
        or_(LegalArea.office_id == office_id, LegalArea.office_id.is_(None)),
        LegalArea.id.in_(ids),
    )
    return {str(i): str(n) for i, n in (await session.execute(stmt)).all()}
