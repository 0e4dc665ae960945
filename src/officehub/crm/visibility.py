"""Which funnels and cards a signed-in user may see (issue 29).

A funnel belongs to one inbox, and so does every card on it: a SUPERVISOR or an AGENT sees
the funnels of their inboxes and their cards, nothing else (404 outside, as for a
conversation). A key or an ADMIN sees the whole office, at no extra query.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.visibility import sees_everything, visible_path
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.kit.auth import Actor
from officehub.kit.errors import NotFound


def funnels_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the funnels ``actor`` may see; ``None``: every one."""
    if sees_everything(actor):
        return None
    return Funnel.inbox_id.in_(actor.inbox_ids)


def cards_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the cards ``actor`` may see: those on a funnel they may see."""
    funnels = funnels_seen(actor)
    if funnels is None:
        return None
    return Card.funnel_id.in_(select(Funnel.id).where(Funnel.office_id == actor.office_id, funnels))


VisibleFunnel = Annotated[None, Depends(visible_path(Funnel, funnels_seen))]
"""A route dependency: the funnel of the path's ``{id}`` is one the caller may see."""
VisibleCard = Annotated[None, Depends(visible_path(Card, cards_seen))]
"""A route dependency: the card of the path's ``{id}`` is one the caller may see."""


def columns_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the columns ``actor`` may see: those of a funnel they may see."""
    funnels = funnels_seen(actor)
    if funnels is None:
        return None
    return FunnelColumn.funnel_id.in_(
        select(Funnel.id).where(Funnel.office_id == actor.office_id, funnels)
    )


async def require_column(session: AsyncSession, actor: Actor, column_id: str) -> None:
    """404 ``Column not found`` unless ``actor`` may see the column a body names (a card put
    there, a column added to its funnel): nobody places work in an inbox they are not in."""
    clause = columns_seen(actor)
    if clause is None:
        return
    stmt = select(FunnelColumn.id).where(
        FunnelColumn.office_id == actor.office_id, FunnelColumn.id == column_id, clause
    )
    if await session.scalar(stmt) is None:
        raise NotFound.of("Column", column_id)


async def require_funnel(session: AsyncSession, actor: Actor, funnel_id: str) -> None:
    """404 ``Funnel not found`` unless ``actor`` may see the funnel a body or query names."""
    clause = funnels_seen(actor)
    if clause is None:
        return
    stmt = select(Funnel.id).where(
        Funnel.office_id == actor.office_id, Funnel.id == funnel_id, clause
    )
    if await session.scalar(stmt) is None:
        raise NotFound.of("Funnel", funnel_id)


VisibleColumn = Annotated[None, Depends(visible_path(FunnelColumn, columns_seen))]
"""A route dependency: the column of the path's ``{id}`` is one the caller may see."""
