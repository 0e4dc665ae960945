"""The contacts domain's hook points (see ``officehub.hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.hooks import Hook


@dataclass(frozen=True)
class ContactDeleting:
    """Fired before the contact's row goes: what belongs to it may go first, or the deletion
    be vetoed by raising."""

    session: AsyncSession
    office_id: str
    contact_id: str


contact_deleting: Hook[ContactDeleting] = Hook("contact.deleting", required=True)
