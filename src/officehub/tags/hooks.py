"""The tags domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class TagDeleting:
    """Fired before the tag is locked and deleted: what carries it may let it go first (the
    conversations domain takes it off each conversation, with its events)."""

    session: AsyncSession
    office_id: str
    tag_id: str


tag_deleting: Hook[TagDeleting] = Hook("tag.deleting", required=True)
