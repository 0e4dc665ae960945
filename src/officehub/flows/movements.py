"""``SEARCH_MOVEMENTS``: a contact's case movements, asked of the partner system through an
adapter. The default adapter reads the ``case_movements`` table: the latest movements of
each of the contact's watched cases (found on DataJud), and those the office records
through the API."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases import service as cases
from officehub.flows import repository
from officehub.kit.timeutil import as_utc

MAX_LISTED = 10
MAX_CASES = 5
PER_CASE = 3


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
    """The newest ``PER_CASE`` movements of each of the contact's newest ``MAX_CASES``
    cases, with the newest ones recorded for the contact; at most ``MAX_LISTED``, newest
    first (every case keeps its place before the rest fill the list)."""

    async def search(
        self, session: AsyncSession, office_id: str, person_id: str
    ) -> Sequence[Movement]:
        chosen: dict[str, Movement] = {}
        for number, moves in await cases.latest_by_case(
            session, office_id, person_id, MAX_CASES, PER_CASE
        ):
            for m in moves:
                chosen[m.id] = Movement(number, m.description, m.occurred_at)
        rows = await repository.latest_movements(session, office_id, person_id, MAX_LISTED)
        for r in rows:
            if len(chosen) >= MAX_LISTED:
                break
            chosen.setdefault(r.id, Movement(r.case_number, r.description, r.occurred_at))
        found = sorted(chosen.values(), key=lambda m: m.occurred_at, reverse=True)
        return found[:MAX_LISTED]


ADAPTER: MovementsAdapter = RecordedMovements()


def describe(found: Sequence[Movement], zone: ZoneInfo) -> str:
    """The client's answer; each date the movement's day in the office's time zone."""
    if not found:
        return "Nenhuma movimentação encontrada."
    lines = ["Movimentações encontradas:"]
    lines += [
        f"{as_utc(m.occurred_at).astimezone(zone):%d/%m/%Y} - {m.case_number}: {m.description}"
        for m in found
    ]
    return "\n".join(lines)
