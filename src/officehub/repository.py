"""The one place that scopes a read by office: a record of another office is not there."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.db import Base

M = TypeVar("M", bound=Base)


def scoped(model: type[M], office_id: str) -> Select[M]:
    """``SELECT model WHERE office_id = :office_id``, to be narrowed further."""
    column: Any = model.__table__.c.office_id
    return select(model).where(column == office_id)


async def get_scoped(session: AsyncSession, model: type[M], office_id: str, ident: str) -> M | None:
    column: Any = model.__table__.c.id
    return (await session.scalars(scoped(model, office_id).where(column == ident))).first()


async def flush_or_conflict(session: AsyncSession, conflict: Exception) -> None:
    """Flushes; a unique index won first by a concurrent request raises ``conflict``.

    The checks before a write answer the common case with a helpful message; this covers the
    race between two requests that both passed them.
    """
    try:
        await session.flush()
    except IntegrityError as exc:
        raise conflict from exc
