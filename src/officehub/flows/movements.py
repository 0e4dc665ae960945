"""``SEARCH_MOVEMENTS``: a contact's case movements, asked of the partner system through an
adapter. The default adapter reads the movements the office records through the API."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.flows import repository

MAX_LISTED = 10


@dataclass(frozen=True)
class Movement:
    case_number: str
    description: str
    occurred_at: datetime


class MovementsAdapter(Protocol):
    async def search(
        self, session: AsyncSession, office_id: str, person_id: str
    ) -> Sequence[Movement]: ...


class RecordedMovements:
    """The newest ``MAX_LISTED`` movements recorded for the contact."""

    async def search(
        self, session: AsyncSession, office_id: str, person_id: str
    ) -> Sequence[Movement]:
        rows = await repository.latest_movements(session, office_id, person_id, MAX_LISTED)
        return [Movement(r.case_number, r.description, r.occurred_at) for r in rows]


ADAPTER: MovementsAdapter = RecordedMovements()


def describe(found: Sequence[Movement]) -> str:
    if not found:
        return "Nenhuma movimentação encontrada."
    lines = ["Movimentações encontradas:"]
    lines += [f"{m.occurred_at:%d/%m/%Y} - {m.case_number}: {m.description}" for m in found]
    return "\n".join(lines)
