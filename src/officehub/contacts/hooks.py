"""The contacts domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass, field

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
class ContactLocking:
    """Fired before a contact that is about to go (deletion, erasure) is locked: what must
    be locked before it is locked first. Locks are taken conversations first, then their
    contact, everywhere: a client's message locks its conversation and, in the same
    transaction, needs its contact; a deletion that locked the contact first and then
    waited for the conversation deadlocked with it on PostgreSQL."""

    session: AsyncSession
    office_id: str
    contact_id: str


contact_locking: Hook[ContactLocking] = Hook("contact.locking", required=True)


@dataclass(frozen=True)
class ContactMerging:
    """Fired while ``other_id`` is merged into ``kept_id`` (both rows locked), before the
    other's row goes: what an upper domain holds of the other moves to the kept one."""

    session: AsyncSession
    office_id: str
    kept_id: str
    other_id: str


contact_merging: Hook[ContactMerging] = Hook("contact.merging", required=True)


@dataclass(frozen=True)
class ContactErasing:
    """Fired when a contact is erased at its request, before ``contact_deleting`` and before
    its row goes: each upper domain adds to ``mentions`` the ids of the records it holds of
    the contact (conversations, cards, cases), so the outbox, webhook deliveries and jobs
    that name them are forgotten too, adds to ``files`` the storage keys of the contact's
    files, and removes what no database cascade reaches (rule runs). Subscribers run in
    registration order, so a later one reads what earlier ones added."""

    session: AsyncSession
    office_id: str
    contact_id: str
    mentions: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)


contact_erasing: Hook[ContactErasing] = Hook("contact.erasing", required=True)
