"""Which policy applies to a conversation (pure): the most specific one of its inbox."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypeVar

from typing_extensions import TypeAliasType

Priority = TypeAliasType("Priority", Literal["LOW", "MEDIUM", "HIGH"])


class Candidate(Protocol):
    @property
    def priority(self) -> str | None: ...
    @property
    def legal_area_id(self) -> str | None: ...


P = TypeVar("P", bound=Candidate)


def applicable(policies: Sequence[P], priority: str, legal_area_id: str | None) -> P | None:
    """Among the inbox's ``policies`` (oldest first), those whose priority and legal area
    are unset or equal the conversation's; the one naming most of them wins (inbox +
    priority + area, then inbox + one of them, then the inbox alone); ties: the oldest."""
    best: P | None = None
    best_score = -1
    for policy in policies:
        if policy.priority is not None and policy.priority != priority:
            continue
        if policy.legal_area_id is not None and policy.legal_area_id != legal_area_id:
            continue
        score = (policy.priority is not None) + (policy.legal_area_id is not None)
        if score > best_score:
            best, best_score = policy, score
    return best
