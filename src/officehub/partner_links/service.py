"""A contact's link to its record in the partner system.

One link is active at a time. Unlinking marks the link (``unlinked_at``) and keeps it, the
contact and the partner record; nothing stored for the contact is deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import service as contacts
from officehub.kit.errors import Conflict, NotFound
from officehub.kit.timeutil import utcnow
from officehub.partner_links import repository
from officehub.partner_links.schemas import LinkIn, LinkOut, Partner

if TYPE_CHECKING:
    from officehub.contacts.models import PartnerLink

NOT_LINKED = LinkOut(linked=False, link_id=None, partner=None, linked_at=None, source=None)


def link_out(link: PartnerLink) -> LinkOut:
    return LinkOut(
        linked=link.unlinked_at is None,
        link_id=link.id,
        partner=Partner.model_validate(link.partner),
        linked_at=link.linked_at,
        source=link.source,
    )


async def read_link(session: AsyncSession, office_id: str, contact_id: str) -> LinkOut:
    await contacts.get_contact(session, office_id, contact_id)
    link = await repository.latest_link(session, office_id, contact_id)
    return NOT_LINKED if link is None else link_out(link)


async def create_link(
    session: AsyncSession, office_id: str, contact_id: str, body: LinkIn
) -> LinkOut:
    await contacts.get_contact(session, office_id, contact_id, for_change=True)
    current = await repository.latest_link(session, office_id, contact_id)
    if current is not None and current.unlinked_at is None:
        raise Conflict(
            "The contact is already linked",
            details=f"Unlink {current.id} first (DELETE .../link/{current.id})",
        )
    link = await repository.new_link(
        session,
        office_id,
        contact_id,
        partner=body.partner.model_dump(mode="json", by_alias=True),
        source=body.source,
        linked_at=utcnow(),
    )
    return link_out(link)


async def unlink(session: AsyncSession, office_id: str, contact_id: str, link_id: str) -> LinkOut:
    """Ends the link named; unlinking an ended link again answers it unchanged."""
    await contacts.get_contact(session, office_id, contact_id, for_change=True)
    link = await repository.get_link_of(session, office_id, contact_id, link_id)
    if link is None:
        raise NotFound.of("Partner link", link_id)
    if link.unlinked_at is None:
        link.unlinked_at = utcnow()
        await session.flush()
    return link_out(link)
