"""Conversation reports (issue 32): counts, response and resolution times, SLA compliance,
by local day, inbox, user, legal area or channel, computed by the database.

Each measure is counted on the day (or in the group) of its own event, read from the times
kept on ``conversations`` (``docs/decisions.md``, "Conversation reports"):

- ``opened``: conversations created in the range (``created_at``);
- ``closed``: conversations whose last close falls in the range (``closed_at``, status
  ``CLOSED``); their resolution time (``closed_at`` minus ``resolution_started_at``, else
  ``created_at``) and, when a policy applied, whether it held no breach stamp (SLA met);
- first response: conversations first answered in the range (``first_response_at``), the
  time since the client's first message (``first_inbound_at``).

Percentiles are nearest-rank: the value at rank ``ceil(p * n)`` of the ``n`` values in
ascending order (the median is the lower middle value). A day is the office's local day.
PostgreSQL computes the rows and the totals in one statement, one pass over the
conversations (``percentile_disc``, GROUPING SETS; a time's day is its bucket among the
local midnights, ``day_starts``). SQLite runs two (the rows, the totals), picks the
percentiles with ``row_number()`` and, having no zones, shifts each time by the zone's UTC
offset of its stretch of the range (the offsets and their changes computed here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    String,
    case,
    cast,
    func,
    literal,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute

from officehub.conversations import repository as conversations_repository
from officehub.inboxes import repository as inboxes
from officehub.legal_areas import repository as legal_areas
from officehub.users import repository as users

GROUPS = ("day", "inbox", "user", "legalArea", "channel")
MAX_DAYS = 366
OPENED, CLOSED, ANSWERED = (
    conversations_repository.REPORT_OPENED,
    conversations_repository.REPORT_CLOSED,
    conversations_repository.REPORT_ANSWERED,
)
Col = ColumnElement[Any] | QueryableAttribute[Any]


@dataclass
class Figures:
    opened: int = 0
    closed: int = 0
    first_response_median_seconds: int | None = None
    first_response_p90_seconds: int | None = None
    resolution_median_seconds: int | None = None
    resolution_p90_seconds: int | None = None
    sla_total: int = 0
    sla_met: int = 0

    @property
    def sla_compliance(self) -> float | None:
        return None if not self.sla_total else round(self.sla_met / self.sla_total, 4)


@dataclass
class Report:
    rows: dict[str | None, Figures] = field(default_factory=dict)
    totals: Figures = field(default_factory=Figures)


def nearest_rank(values: Sequence[int], p: float) -> int | None:
    """The nearest-rank percentile (what the statement computes), for tests and the bench."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-int(p * 100) * len(ordered) // 100))
    return ordered[rank - 1]


def bounds(first: date, last: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants of the first day's local midnight and of the day after the last."""
    start = datetime.combine(first, time(), zone).astimezone(UTC)
    end = datetime.combine(last + timedelta(days=1), time(), zone).astimezone(UTC)
    return start, end


def offsets(start: datetime, end: datetime, zone: ZoneInfo) -> list[tuple[datetime, int]]:
    """The zone's UTC offset (seconds) from ``start`` and from each change before ``end``:
    ``[(since, offset), …]``, found hour by hour and narrowed to the minute."""

    def offset(at: datetime) -> int:
        found = at.astimezone(zone).utcoffset()
        return int(found.total_seconds()) if found is not None else 0

    stretches = [(start, offset(start))]
    at = start
    while at < end:
        step = min(at + timedelta(hours=1), end)
        if offset(step) != stretches[-1][1]:
            low, high = at, step  # the change is in (low, high]
            while high - low > timedelta(minutes=1):
                middle = low + (high - low) / 2
                if offset(middle) == stretches[-1][1]:
                    low = middle
                else:
                    high = middle
            stretches.append((high, offset(step)))
        at = step
    return stretches


def _seconds(dialect: str, later: Col, earlier: Col) -> Col:
    if dialect == "postgresql":
        return cast(func.round(func.extract("epoch", later - earlier)), BigInteger)
    return cast(func.round((func.julianday(later) - func.julianday(earlier)) * 86400), Integer)


def _local_day(column: Col, shifts: list[tuple[datetime, int]]) -> Col:
    """SQLite's local day of a time: ``date(t, '<offset> seconds')``."""
    modifier: Col = literal(f"{shifts[-1][1]:+d} seconds", String)
    if len(shifts) > 1:
        modifier = case(
            *(
                (column < since, literal(f"{before:+d} seconds", String))
                for (_, before), (since, _) in pairwise(shifts)
            ),
            else_=modifier,
        )
    return func.date(column, modifier)


@dataclass(frozen=True)
class Query:
    office_id: str
    first: date
    last: date
    zone: str
    group_by: str
    inbox_ids: frozenset[str] | None  # None: every inbox of the office


def _figures(
    found: dict[str | None, Figures],
    key: str | None,
    kind: str,
    count: int,
    median: int | None,
    p90: int | None,
    sla_total: int,
    sla_met: int | None,
) -> None:
    figures = found.setdefault(key, Figures())
    if kind == OPENED:
        figures.opened = int(count)
    elif kind == CLOSED:
        figures.closed = int(count)
        figures.resolution_median_seconds = None if median is None else int(median)
        figures.resolution_p90_seconds = None if p90 is None else int(p90)
        figures.sla_total = int(sla_total)
        figures.sla_met = int(sla_met or 0)
    else:
        figures.first_response_median_seconds = None if median is None else int(median)
        figures.first_response_p90_seconds = None if p90 is None else int(p90)


def day_starts(first: date, last: date, zone: ZoneInfo) -> list[datetime]:
    """The UTC instants of each local midnight from ``first`` to the day after ``last``
    (``len`` = days + 1): a time's day is the bucket it falls in (PostgreSQL's
    ``width_bucket``), DST days of 23 or 25 hours included. A day starts at its earliest
    instant: of a midnight that happens twice (Havana, back from 01:00 to 00:00), the
    first (``fold=0``); of a skipped one, the change."""
    days = (last - first).days + 1
    return [
        datetime.combine(first + timedelta(days=n), time(), zone).astimezone(UTC)
        for n in range(days + 1)
    ]


async def _compute(
    session: AsyncSession, query: Query, *, total: bool
) -> dict[str | None, Figures]:
    """SQLite's statement: the rows, or (``total``) the totals keyed ``"*"``."""
    zone = ZoneInfo(query.zone)
    start, end = bounds(query.first, query.last, zone)
    shifts = offsets(start, end, zone)
    stmt = conversations_repository.report_statement(
        query.office_id,
        start,
        end,
        query.inbox_ids,
        "*" if total else query.group_by,
        lambda column: _local_day(column, shifts),
        lambda later, earlier: _seconds("sqlite", later, earlier),
    )
    found: dict[str | None, Figures] = {}
    for kind, key, count, median, p90, sla_total, sla_met in (await session.execute(stmt)).all():
        _figures(found, key, kind, count, median, p90, sla_total, sla_met)
    return found


async def _compute_postgresql(
    session: AsyncSession, query: Query
) -> tuple[dict[str | None, Figures], Figures]:
    """PostgreSQL's one statement: the rows and the totals in one pass."""
    zone = ZoneInfo(query.zone)
    starts = day_starts(query.first, query.last, zone)
    stmt = conversations_repository.report_statement_postgresql(
        query.office_id,
        starts[0],
        starts[-1],
        query.inbox_ids,
        query.group_by,
        starts,
        lambda later, earlier: _seconds("postgresql", later, earlier),
    )
    rows: dict[str | None, Figures] = {}
    totals: dict[str | None, Figures] = {}
    result = await session.execute(stmt)
    for kind, key, whole, count, picked, sla_total, sla_met in result.all():
        median, p90 = picked if picked is not None else (None, None)
        if whole:
            _figures(totals, "*", kind, count, median, p90, sla_total, sla_met)
            continue
        if query.group_by == "day":  # the bucket: 1 for the first day
            key = (query.first + timedelta(days=int(key) - 1)).isoformat()
        _figures(rows, key, kind, count, median, p90, sla_total, sla_met)
    return rows, totals.get("*", Figures())


async def conversations(session: AsyncSession, query: Query) -> Report:
    """The report's rows (by group key) and totals: on PostgreSQL one statement, on SQLite
    two (the rows, the totals), the same events."""
    if session.get_bind().dialect.name == "postgresql":
        rows, totals = await _compute_postgresql(session, query)
    else:
        rows = await _compute(session, query, total=False)
        totals = (await _compute(session, query, total=True)).get("*", Figures())
    if query.group_by == "day":
        days = (query.last - query.first).days + 1
        every = [(query.first + timedelta(days=n)).isoformat() for n in range(days)]
        rows = {day: rows.get(day, Figures()) for day in every}
    return Report(rows=rows, totals=totals)


async def labels(
    session: AsyncSession, office_id: str, group_by: str, keys: Sequence[str | None]
) -> dict[str, str]:
    """Names of the groups' records (inboxes, users, legal areas), one read."""
    ids = sorted(k for k in keys if k is not None)
    if not ids or group_by in ("day", "channel"):
        return {}
    if group_by == "inbox":
        return await inboxes.inbox_names(session, office_id, ids)
    if group_by == "user":
        return await users.user_names(session, office_id, ids)
    return await legal_areas.legal_area_names(session, office_id, ids)
