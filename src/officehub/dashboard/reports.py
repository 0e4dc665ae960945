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
ascending order (the median is the lower middle value), picked by window functions in the
same statement on both databases. A day is the office's local day: PostgreSQL converts with
``AT TIME ZONE``; SQLite, which has no zones, shifts each time by the zone's UTC offset of
its stretch of the range (the offsets and their changes computed here).
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
    and_,
    case,
    cast,
    func,
    literal,
    literal_column,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute

from officehub.conversations.models import Conversation
from officehub.inboxes.models import Inbox, Integration
from officehub.legal_areas.models import LegalArea
from officehub.users.models import User

GROUPS = ("day", "inbox", "user", "legalArea", "channel")
MAX_DAYS = 366
OPENED, CLOSED, ANSWERED = "o", "c", "f"
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


def _local_day(dialect: str, column: Col, zone: str, shifts: list[tuple[datetime, int]]) -> Col:
    if dialect == "postgresql":
        return func.to_char(func.timezone(literal(zone, String), column), "YYYY-MM-DD")
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


def _key(
    query: Query,
    dialect: str,
    column: Col,
    shifts: list[tuple[datetime, int]],
    total: bool,
) -> Col:
    if total:
        return literal("*", String)
    if query.group_by == "day":
        return _local_day(dialect, column, query.zone, shifts)
    if query.group_by == "inbox":
        return Conversation.inbox_id
    if query.group_by == "user":
        return Conversation.assigned_user_id
    if query.group_by == "legalArea":
        return Conversation.legal_area_id
    return Integration.type


async def _compute(
    session: AsyncSession, query: Query, *, total: bool
) -> dict[str | None, Figures]:
    dialect = session.get_bind().dialect.name
    zone = ZoneInfo(query.zone)
    start, end = bounds(query.first, query.last, zone)
    shifts = offsets(start, end, zone) if dialect != "postgresql" else []
    closed_sql = Conversation.status == literal_column("'CLOSED'")  # the partial index's term
    breached = or_(
        Conversation.first_response_breached_at.is_not(None),
        Conversation.next_response_breached_at.is_not(None),
        Conversation.resolution_breached_at.is_not(None),
    )
    met = case(
        (Conversation.sla_policy_id.is_(None), null()),
        (breached, literal(0)),
        else_=literal(1),
    )
    c = Conversation
    parts = (
        (OPENED, c.created_at, null(), null(), ()),
        (
            CLOSED,
            c.closed_at,
            _seconds(dialect, c.closed_at, func.coalesce(c.resolution_started_at, c.created_at)),
            met,
            (closed_sql,),
        ),
        (
            ANSWERED,
            c.first_response_at,
            _seconds(dialect, c.first_response_at, c.first_inbound_at),
            null(),
            (c.first_inbound_at.is_not(None),),
        ),
    )
    selects = []
    for kind, stamp, seconds, sla_met, extra in parts:
        stmt = select(
            literal(kind, String).label("kind"),
            _key(query, dialect, stamp, shifts, total).label("k"),
            seconds.label("seconds"),
            sla_met.label("met"),
        ).where(c.office_id == query.office_id, stamp >= start, stamp < end, *extra)
        if query.group_by == "channel" and not total:
            stmt = stmt.select_from(c).join(
                Integration,
                and_(Integration.id == c.integration_id, Integration.office_id == c.office_id),
            )
        if query.inbox_ids is not None:
            stmt = stmt.where(c.inbox_id.in_(sorted(query.inbox_ids)))
        selects.append(stmt)
    events = union_all(*selects).subquery("events")
    part = (events.c.kind, events.c.k)
    ranked = select(
        events.c.kind,
        events.c.k,
        events.c.seconds,
        events.c.met,
        func.row_number().over(partition_by=part, order_by=events.c.seconds).label("rn"),
        func.count(events.c.seconds).over(partition_by=part).label("n"),
    ).subquery("ranked")
    r = ranked.c
    stmt = select(
        r.kind,
        r.k,
        func.count(),
        func.min(case((r.rn == (r.n + 1) // 2, r.seconds))),
        func.min(case((r.rn == (r.n * 9 + 9) // 10, r.seconds))),
        func.count(r.met),
        func.sum(case((r.met == 1, 1), else_=0)),
    ).group_by(r.kind, r.k)
    found: dict[str | None, Figures] = {}
    for kind, key, count, median, p90, sla_total, sla_met in (await session.execute(stmt)).all():
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
    return found


async def conversations(session: AsyncSession, query: Query) -> Report:
    """The report's rows (by group key) and totals: two statements, the same events."""
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
        stmt = select(Inbox.id, Inbox.name).where(Inbox.office_id == office_id, Inbox.id.in_(ids))
    elif group_by == "user":
        stmt = select(User.id, User.name).where(User.office_id == office_id, User.id.in_(ids))
    else:
        stmt = select(LegalArea.id, LegalArea.name).where(
            or_(LegalArea.office_id == office_id, LegalArea.office_id.is_(None)),
            LegalArea.id.in_(ids),
        )
    return {str(i): str(n) for i, n in (await session.execute(stmt)).all()}
