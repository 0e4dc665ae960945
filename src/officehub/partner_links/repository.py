from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import PartnerLink
from officehub.kit.repository import scoped


async def latest_link(session: AsyncSession, office_id: str, contact_id: str) -> PartnerLink | None:
    """The contact's active link, else its most recent one."""
    stmt = (
        scoped(PartnerLink, office_id)
        .where(PartnerLink.contact_id == contact_id)
        .order_by(
            PartnerLink.unlinked_at.is_not(None),
            PartnerLink.linked_at.desc(),
            PartnerLink.id.desc(),
        )
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def get_link_of(
    session: AsyncSession, office_id: str, contact_id: str, link_id: str
) -> PartnerLink | None:
    stmt = scoped(PartnerLink, office_id).where(
        PartnerLink.contact_id == contact_id, PartnerLink.id == link_id
    )
    return (await session.scalars(stmt)).first()


async def add_link(session: AsyncSession, link: PartnerLink) -> PartnerLink:
    session.add(link)
    await session.flush()
    return link


async def new_link(
    session: AsyncSession,
    office_id: str,
    contact_id: str,
    *,
    partner: dict[str, Any],
    source: str,
    linked_at: datetime,
) -> PartnerLink:
    """Stores an active link of the contact to its partner record."""
    return await add_link(
        session,
        PartnerLink(
            office_id=office_id,
            contact_id=contact_id,
            partner=partner,
            source=source,
            linked_at=linked_at,
            unlinked_at=None,
        ),
    )
