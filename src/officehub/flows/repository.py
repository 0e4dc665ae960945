from __future__ import annotations

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.flows.models import CaseMovement, Flow, FlowSession
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped


async def get_flow(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Flow | None:
    return await get_scoped(session, Flow, office_id, ident, for_change=for_change)


async def list_flows(
    session: AsyncSession, office_id: str, params: PageParams, *, inbox_id: str | None = None
) -> tuple[list[Flow], int]:
    stmt = scoped(Flow, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Flow.inbox_id == inbox_id)
    return await paginate(session, stmt.order_by(Flow.created_at, Flow.id), params)


async def delete(session: AsyncSession, record: Flow) -> None:
    await session.delete(record)
    await session.flush()


async def flow_for_inbox(
    session: AsyncSession, office_id: str, inbox_id: str, *, social: bool
) -> Flow | None:
    """The inbox's flow for this kind of channel: the oldest, when there are several."""
    stmt = (
        scoped(Flow, office_id)
        .where(Flow.inbox_id == inbox_id, Flow.is_social_flow == social)
        .order_by(Flow.created_at, Flow.id)
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def session_of(
    session: AsyncSession, office_id: str, conversation_id: str
) -> FlowSession | None:
    stmt = scoped(FlowSession, office_id).where(FlowSession.conversation_id == conversation_id)
    return (await session.scalars(stmt)).first()


async def add_session(session: AsyncSession, record: FlowSession) -> FlowSession:
    session.add(record)
    await session.flush()
    return record


async def latest_movements(
    session: AsyncSession, office_id: str, person_id: str, limit: int
) -> list[CaseMovement]:
    stmt = (
        scoped(CaseMovement, office_id)
        .where(CaseMovement.person_id == person_id)
        .order_by(CaseMovement.occurred_at.desc(), CaseMovement.id.desc())
        .limit(limit)
    )
    return list(await session.scalars(stmt))


async def list_movements(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    person_id: str | None = None,
    visible: ColumnElement[bool] | None = None,
) -> tuple[list[CaseMovement], int]:
    """``visible``: the caller's scope (their contacts' movements), page and total alike."""
    stmt = scoped(CaseMovement, office_id)
    if visible is not None:
        stmt = stmt.where(visible)
    if person_id is not None:
        stmt = stmt.where(CaseMovement.person_id == person_id)
    order = (CaseMovement.occurred_at.desc(), CaseMovement.id.desc())
    return await paginate(session, stmt.order_by(*order), params)


async def get_movement(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> CaseMovement | None:
    return await get_scoped(session, CaseMovement, office_id, ident, for_change=for_change)
