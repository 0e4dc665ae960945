"""The inboxes domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class InboxDeleting:
    """The inbox is locked and holds no conversation; a subscriber may veto by raising."""

    session: AsyncSession
    office_id: str
    inbox_id: str


inbox_deleting: Hook[InboxDeleting] = Hook("inbox.deleting", required=True)
