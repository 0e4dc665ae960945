"""The list envelope ``{data, totalResults, totalPages}`` and its ``page``/``limit`` query."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Depends, Query
from sqlalchemy import Integer, Row, Select, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.schemas import ApiModel

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


async def page_params(
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


class ListQuery:
    """A list's statement with its page form (``LIMIT`` and ``OFFSET`` as bound values) and
    its count. Built once (at import, or under ``functools.cache`` per shape of filter) with
    every other value bound too, a request then neither builds nor hashes a statement:
    SQLAlchemy finds the compiled forms by the statements' memoised cache keys."""

    def __init__(
        self,
        stmt: Select[Any],
        count: Select[Any] | None = None,
        deep: Select[Any] | None = None,
    ) -> None:
        """``count``: a statement of the same bound values answering the total another way
        (kept counts summed); by default ``count(*)`` of ``stmt``'s rows. ``deep``: the
        pages past the first read another way (the same rows in the same order,
        ``page_limit`` and ``page_offset`` bound in it), e.g. their keys skipping the
        offset in an index alone; by default every page is ``stmt``'s ``LIMIT … OFFSET``."""
        self.stmt = stmt
        self.page = stmt.limit(bindparam("page_limit", type_=Integer)).offset(
            bindparam("page_offset", type_=Integer)
        )
        self.deep = self.page if deep is None else deep
        self.count = (
            select(func.count()).select_from(stmt.order_by(None).subquery())
            if count is None
            else count
        )


async def paginate(
    session: AsyncSession,
    stmt: Select[Any] | ListQuery,
    params: PageParams,
    values: Mapping[str, Any] | None = None,
) -> tuple[list[Any], int]:
    """Runs ``stmt`` (already scoped and ordered; ``values`` are its bound values) for one
    page, and counts the whole.

    Two statements, not one with ``count(*) OVER ()``: a window over every row stops the
    page from walking an index in order and stopping at ``LIMIT`` (the first page of 20,000
    contacts took 40 ms instead of 5 on SQLite).
    """
    query = stmt if isinstance(stmt, ListQuery) else ListQuery(stmt)
    bound = dict(values or {})
    total = await session.scalar(query.count, bound)
    page = {**bound, "page_limit": params.limit, "page_offset": params.offset}
    rows = await session.scalars(query.page if params.offset == 0 else query.deep, page)
    return list(rows), int(total or 0)


async def paginate_rows(
    session: AsyncSession,
    query: ListQuery,
    params: PageParams,
    values: Mapping[str, Any] | None = None,
) -> tuple[list[Row[Any]], int]:
    """``paginate`` for a statement of columns (not of a mapped class): the page as rows,
    with no ORM object loaded (nor put in the session's identity map) per row."""
    bound = dict(values or {})
    page = {**bound, "page_limit": params.limit, "page_offset": params.offset}
    total = await session.scalar(query.count, bound)
    rows = await session.execute(query.page if params.offset == 0 else query.deep, page)
    return list(rows), int(total or 0)
