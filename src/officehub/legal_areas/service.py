from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.errors import NotFound
from officehub.legal_areas import repository
from officehub.legal_areas.models import LegalArea


async def get_legal_area(session: AsyncSession, office_id: str, ident: str) -> LegalArea:
    """The office's area or a default one; another office's area is not found."""
    record = await repository.get_visible(session, office_id, ident)
    if record is None:
        raise NotFound.of("Legal area", ident)
    return record
