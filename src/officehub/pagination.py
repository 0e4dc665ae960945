"""The list envelope ``{data, totalResults, totalPages}`` and its ``page``/``limit`` query."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Depends, Query
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.schemas import ApiModel

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
MAX_PAGE = 1_000_000
"""Far past any real list, and keeps ``OFFSET`` within the databases' 64-bit integers."""

PageNumber = Annotated[int, Query(ge=1, le=MAX_PAGE, description="1-based page number")]


@dataclass(frozen=True)
class PageParams:
    page: int
    limit: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


def page_params(
    page: PageNumber = 1,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Items per page")] = DEFAULT_LIMIT,
) -> PageParams:
    return PageParams(page, limit)


PageDep = Annotated[PageParams, Depends(page_params)]


T = TypeVar("T")


class Page(ApiModel, Generic[T]):
    data: list[T]
    total_results: int
    total_pages: int

    @classmethod
    def of(cls, items: Sequence[T], total: int, params: PageParams) -> Page[T]:
        return cls(
            data=list(items), total_results=total, total_pages=math.ceil(total / params.limit)
        )


async def paginate(
    session: AsyncSession, stmt: Select[Any], params: PageParams
) -> tuple[list[Any], int]:
    """Runs ``stmt`` (already scoped and ordered) for one page, and counts the whole."""
    total = await session.scalar(select(func.count()).select_from(stmt.order_by(None).subquery()))
    rows = await session.scalars(stmt.limit(params.limit).offset(params.offset))
    return list(rows), int(total or 0)
