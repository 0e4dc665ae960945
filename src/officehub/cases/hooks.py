"""The cases domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class MovementsAnnounced:
    """Fired by the watcher after it announced new movements of a watched case (in the
    transaction that stored them): an upper domain may act on them (case notices)."""

    session: AsyncSession
    office_id: str
    case_id: str
    movement_ids: tuple[str, ...]
    conversation_id: str | None
    now: datetime


movements_announced: Hook[MovementsAnnounced] = Hook("case.movements_announced", required=True)
