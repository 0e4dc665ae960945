from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.selectable import Subquery

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped
from officehub.sla.models import SlaPolicy


async def get_policy(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> SlaPolicy | None:
    return await get_scoped(session, SlaPolicy, office_id, ident, for_change=for_change)


async def list_policies(
    session: AsyncSession, office_id: str, params: PageParams, inbox_id: str | None
) -> tuple[list[SlaPolicy], int]:
    stmt = scoped(SlaPolicy, office_id)
    if inbox_id is not None:
        stmt = stmt.where(SlaPolicy.inbox_id == inbox_id)
    return await paginate(session, stmt.order_by(SlaPolicy.created_at, SlaPolicy.id), params)


async def policies_of_inbox(
    session: AsyncSession, office_id: str, inbox_id: str
) -> Sequence[SlaPolicy]:
    """The inbox's policies, oldest first (ties between equally specific ones: the oldest)."""
    params = {"office_id": office_id, "inbox_id": inbox_id}
    return (await session.scalars(_POLICIES_OF_INBOX, params)).all()


_POLICIES_OF_INBOX = (
    select(SlaPolicy)
    .where(
        SlaPolicy.office_id == bindparam("office_id"), SlaPolicy.inbox_id == bindparam("inbox_id")
    )
    .order_by(SlaPolicy.created_at, SlaPolicy.id)
)
"""Built once (every change of a conversation's priority, area or status reads it): a
request binds its values and SQLAlchemy finds the compiled form at once."""


async def add(session: AsyncSession, policy: SlaPolicy) -> None:
    session.add(policy)
    await session.flush()


async def delete(session: AsyncSession, policy: SlaPolicy) -> None:
    await session.delete(policy)
    await session.flush()


@dataclass(frozen=True, slots=True)
class PolicyTerms:
    """A policy as a conversation's service levels read it (``rules.applicable``, then its
    id and its times), read with other rows in one statement (``policy_terms_of``)."""

    id: str
    priority: str | None
    legal_area_id: str | None
    first_response_minutes: int
    next_response_minutes: int
    resolution_business_days: int


POLICY_TERMS = tuple(f"policy_{f}" for f in PolicyTerms.__slots__)
"""The columns of ``policy_terms_subquery``: each field of ``PolicyTerms`` as an array."""


def policy_terms_subquery(office_id: Any, inbox_id: Any) -> Subquery:
    """The inbox's policies as one row of arrays (PostgreSQL), in ``policies_of_inbox``'s
    order (oldest first): for a statement that reads them beside other rows."""
    order = (SlaPolicy.created_at, SlaPolicy.id)
    columns = [getattr(SlaPolicy, f) for f in PolicyTerms.__slots__]
    return (
        select(
            *(
                func.array_agg(aggregate_order_by(column, *order)).label(label)
                for column, label in zip(columns, POLICY_TERMS, strict=True)
            )
        )
        .where(SlaPolicy.office_id == office_id, SlaPolicy.inbox_id == inbox_id)
        .subquery("policies")
    )


def policy_terms_of(row: Mapping[str, Any]) -> list[PolicyTerms]:
    """The policies of a row read with ``policy_terms_subquery``'s columns, in their order."""
    arrays = [row[key] or () for key in POLICY_TERMS]
    return [PolicyTerms(*fields) for fields in zip(*arrays, strict=True)]
