from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.repository import get_scoped


async def get_contact(session: AsyncSession, office_id: str, ident: str) -> Contact | None:
    return await get_scoped(session, Contact, office_id, ident)
