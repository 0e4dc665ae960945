from __future__ import annotations

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.legal_areas.models import LegalArea


async def get_visible(session: AsyncSession, office_id: str, ident: str) -> LegalArea | None:
    """An area of the office, or a default area (``office_id`` null) every office sees."""
    stmt = select(LegalArea).where(
        LegalArea.id == ident,
        or_(LegalArea.office_id == office_id, LegalArea.office_id.is_(None)),
    )
    return (await session.scalars(stmt)).first()
