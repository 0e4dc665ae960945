from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

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
