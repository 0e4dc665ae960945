from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.case_notices.models import CaseNotice, CaseNoticeSettings
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.queue import lock_skipping
from officehub.kit.repository import get_scoped, scoped


async def get_notice(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> CaseNotice | None:
    return await get_scoped(session, CaseNotice, office_id, ident, for_change=for_change)


async def list_notices(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    status: str | None = None,
    case_id: str | None = None,
    visible: ColumnElement[bool] | None = None,
) -> tuple[list[CaseNotice], int]:
    stmt = scoped(CaseNotice, office_id)
    if visible is not None:
        stmt = stmt.where(visible)
    if status is not None:
        stmt = stmt.where(CaseNotice.status == status)
    if case_id is not None:
        stmt = stmt.where(CaseNotice.case_id == case_id)
    stmt = stmt.order_by(CaseNotice.created_at.desc(), CaseNotice.id.desc())
    return await paginate(session, stmt, params)


async def add(session: AsyncSession, notice: CaseNotice) -> None:
    session.add(notice)


async def notified_movements(
    session: AsyncSession, office_id: str, movement_ids: list[str]
) -> set[str]:
    stmt = scoped(CaseNotice, office_id).where(CaseNotice.movement_id.in_(movement_ids))
    return {n.movement_id for n in await session.scalars(stmt)}


async def get_settings(session: AsyncSession, office_id: str) -> CaseNoticeSettings | None:
    stmt = scoped(CaseNoticeSettings, office_id)
    found: CaseNoticeSettings | None = (await session.scalars(stmt)).first()
    return found


async def lock_settings(session: AsyncSession, office_id: str) -> CaseNoticeSettings | None:
    stmt = scoped(CaseNoticeSettings, office_id).with_for_update()
    found: CaseNoticeSettings | None = (await session.scalars(stmt)).first()
    return found


async def add_settings(session: AsyncSession, settings: CaseNoticeSettings) -> None:
    session.add(settings)


async def due(session: AsyncSession, now: datetime, limit: int) -> list[CaseNotice]:
    """APPROVED notices due by ``now`` across offices, oldest first, row-locked (other
    workers skip them on PostgreSQL)."""
    stmt = (
        select(CaseNotice)
        .where(CaseNotice.status == "APPROVED", CaseNotice.send_after <= now)
        .order_by(CaseNotice.send_after, CaseNotice.id)
        .limit(limit)
    )
    return list(await session.scalars(lock_skipping(session, stmt)))


async def follow_merge(session: AsyncSession, office_id: str, kept_id: str, other_id: str) -> None:
    await session.execute(
        update(CaseNotice)
        .where(CaseNotice.office_id == office_id, CaseNotice.person_id == other_id)
        .values(person_id=kept_id)
        .execution_options(synchronize_session=False)
    )
