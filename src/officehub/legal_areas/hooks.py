"""The legal areas domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class LegalAreaDeleting:
    """The office's area is locked and about to go: what names it without a foreign key
    (a conversation's ``legalAreaId``) lets go of it in the same transaction."""

    session: AsyncSession
    office_id: str
    legal_area_id: str


legal_area_deleting: Hook[LegalAreaDeleting] = Hook("legal_area.deleting", required=True)
