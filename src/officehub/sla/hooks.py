"""The SLA policies' hook point (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class SlaPoliciesChanged:
    """A policy of the inbox was created, changed or deleted: which one applies to each
    open conversation of the inbox, and its due times, are computed again."""

    session: AsyncSession
    office_id: str
    inbox_id: str


sla_policies_changed: Hook[SlaPoliciesChanged] = Hook("sla_policies.changed", required=True)
