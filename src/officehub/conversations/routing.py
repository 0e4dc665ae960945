"""Who an inbox's routing gives a conversation to (issue 32): the choice alone, over the
candidates the repository read under the office's routing lock.

``ROUND_ROBIN``: the next candidate (by id) after the one the inbox gave the last
conversation to, wrapping around. ``LEAST_BUSY``: the fewest open conversations in the
office; ties go in the round robin's order. Either way only candidates under their capacity
(null: no limit) and, when the inbox routes ``byLegalArea`` and the conversation has a legal
area, those who handle it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Candidate:
    id: str
    capacity: int | None
    open_count: int
    legal_area_ids: frozenset[str]

    @property
    def has_room(self) -> bool:
        return self.capacity is None or self.open_count < self.capacity


def choose(
    policy: str,
    candidates: Sequence[Candidate],
    cursor: str | None,
    legal_area_id: str | None,
    by_legal_area: bool,
) -> Candidate | None:
    """The candidate the conversation goes to, or None (it waits in the queue)."""
    able = [
        c
        for c in candidates
        if c.has_room
        and not (by_legal_area and legal_area_id and legal_area_id not in c.legal_area_ids)
    ]
    if not able:
        return None
    ordered = sorted(able, key=lambda c: c.id)
    if cursor is not None:
        after = [c for c in ordered if c.id > cursor]
        ordered = after + [c for c in ordered if c.id <= cursor]
    if policy == "LEAST_BUSY":
        return min(ordered, key=lambda c: c.open_count)
    return ordered[0]
