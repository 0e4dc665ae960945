"""The contacts domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class ContactDeleting:
    """Fired before the contact's row goes: what belongs to it may go first, or the deletion
    be vetoed by raising."""

    session: AsyncSession
    office_id: str
    contact_id: str


contact_deleting: Hook[ContactDeleting] = Hook("contact.deleting", required=True)


@dataclass(frozen=True)
class ContactMerging:
    """Fired while ``other_id`` is merged into ``kept_id`` (both rows locked), before the
    other's row goes: what an upper domain holds of the other moves to the kept one."""

    session: AsyncSession
    office_id: str
    kept_id: str
    other_id: str


contact_merging: Hook[ContactMerging] = Hook("contact.merging", required=True)
