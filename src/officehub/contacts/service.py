from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import repository
from officehub.contacts.models import Contact
from officehub.errors import NotFound


async def get_contact(session: AsyncSession, office_id: str, ident: str) -> Contact:
    record = await repository.get_contact(session, office_id, ident)
    if record is None:
        raise NotFound.of("Contact", ident)
    return record
