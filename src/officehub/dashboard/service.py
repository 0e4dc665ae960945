"""The clients map: conversations by the state (UF) of the contact phone's area code.

The DDD → UF table (67 area codes, 27 states) is package data (``ddd_uf.json``). The
database groups by DDD; the grouping into states happens on those few rows. Each office's
map is cached in the process for five minutes; ``cacheAt`` says when it was computed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.visibility import sees_everything
from officehub.dashboard import reports, repository
from officehub.dashboard.schemas import (
    ClientsMap,
    ConversationReport,
    DddCount,
    ReportFigures,
    ReportRow,
    StateCount,
)
from officehub.inboxes import service as inboxes
from officehub.kit.auth import Actor
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.offices.settings import office_zone_name

CACHE_TTL = timedelta(minutes=5)


@dataclass(frozen=True)
class State:
    uf: str
    name: str
    ddds: tuple[str, ...]


@cache
def states() -> tuple[State, ...]:
    raw = json.loads(resources.files("officehub.dashboard").joinpath("ddd_uf.json").read_text())
    return tuple(State(s["uf"], s["name"], tuple(s["ddds"])) for s in raw["states"])


@dataclass
class ClientsMapCache:
    ttl: timedelta = CACHE_TTL
    clock: Callable[[], datetime] = utcnow
    entries: dict[str, ClientsMap] = field(default_factory=dict)

    def get(self, office_id: str) -> ClientsMap | None:
        entry = self.entries.get(office_id)
        if entry is None or self.clock() - entry.cache_at >= self.ttl:
            return None
        if _STALE_SINCE.get(office_id, entry.cache_at) > entry.cache_at:
            return None  # computed before an erasure: counted the erased client
        return entry

    def put(self, office_id: str, value: ClientsMap) -> None:
        self.entries[office_id] = value


_STALE_SINCE: dict[str, datetime] = {}
"""When an office's cached maps of this process last went stale (an erasure)."""


def forget_cached(office_id: str) -> None:
    """This process's cached maps of the office are computed afresh (a contact was erased;
    another process's copy, counts only, expires within ``CACHE_TTL``)."""
    _STALE_SINCE[office_id] = utcnow()


def build(counts: dict[str, int], at: datetime) -> ClientsMap:
    rows: list[StateCount] = []
    for state in states():
        ddds = [DddCount(ddd=d, total=counts[d]) for d in state.ddds if counts.get(d)]
        if ddds:
            ddds.sort(key=lambda d: (-d.total, d.ddd))
            rows.append(
                StateCount(
                    uf=state.uf, name=state.name, total=sum(d.total for d in ddds), ddds=ddds
                )
            )
    rows.sort(key=lambda s: (-s.total, s.uf))
    return ClientsMap(cache_at=at, total=sum(s.total for s in rows), states=rows)


async def clients_map(session: AsyncSession, office_id: str, cache_: ClientsMapCache) -> ClientsMap:
    cached = cache_.get(office_id)
    if cached is not None:
        return cached
    value = build(await repository.conversations_by_ddd(session, office_id), cache_.clock())
    cache_.put(office_id, value)
    return value


# Conversation reports (issue 32).

REPORT_DEFAULT_DAYS = 30
REPORT_COLUMNS = (
    "key",
    "label",
    "opened",
    "closed",
    "firstResponseMedianSeconds",
    "firstResponseP90Seconds",
    "resolutionMedianSeconds",
    "resolutionP90Seconds",
    "slaTotal",
    "slaMet",
    "slaCompliance",
)


def _figures(found: reports.Figures) -> dict[str, Any]:
    return {
        "opened": found.opened,
        "closed": found.closed,
        "first_response_median_seconds": found.first_response_median_seconds,
        "first_response_p90_seconds": found.first_response_p90_seconds,
        "resolution_median_seconds": found.resolution_median_seconds,
        "resolution_p90_seconds": found.resolution_p90_seconds,
        "sla_total": found.sla_total,
        "sla_met": found.sla_met,
        "sla_compliance": found.sla_compliance,
    }


def check_range(first: date, last: date) -> None:
    if last < first:
        raise ValidationFailed.field("query.to", "must not be before `from`")
    if (last - first).days + 1 > reports.MAX_DAYS:
        raise ValidationFailed.field("query.to", f"a report covers at most {reports.MAX_DAYS} days")


async def conversation_report(
    session: AsyncSession,
    actor: Actor,
    first: date | None,
    last: date | None,
    group_by: str,
    inbox_id: str | None,
) -> ConversationReport:
    """A SUPERVISOR's report covers their inboxes only (another inbox's ``inboxId`` is 404,
    as another office's); an ADMIN's and a key's the whole office. Without ``to``: the
    office's today; without ``from``: 30 days up to ``to``."""
    office_id = actor.office_id
    zone = await office_zone_name(session, office_id)
    if last is None:
        last = utcnow().astimezone(ZoneInfo(zone)).date()
    if first is None:
        first = last - timedelta(days=REPORT_DEFAULT_DAYS - 1)
    check_range(first, last)
    scope: frozenset[str] | None = None if sees_everything(actor) else actor.inbox_ids
    if inbox_id is not None:
        if scope is not None and inbox_id not in scope:
            raise NotFound.of("Inbox", inbox_id)
        await inboxes.get_inbox(session, office_id, inbox_id)
        scope = frozenset({inbox_id})
    query = reports.Query(office_id, first, last, zone, group_by, scope)
    found = await reports.conversations(session, query)
    names = await reports.labels(session, office_id, group_by, list(found.rows))
    rows = [
        ReportRow(
            key=key,
            label=names.get(key) if key is not None else None,
            **_figures(figures),
        )
        for key, figures in found.rows.items()
    ]
    if group_by != "day":
        rows.sort(key=lambda r: (r.key is None, (r.label or r.key or "").casefold(), r.key or ""))
    return ConversationReport(
        date_from=first,
        date_to=last,
        group_by=group_by,
        time_zone=zone,
        inbox_id=inbox_id,
        rows=rows,
        totals=ReportFigures(**_figures(found.totals)),
    )


def report_csv(report: ConversationReport) -> str:
    """The rows and a last ``total`` row, with a header; the same numbers as the JSON."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(REPORT_COLUMNS)
    listed = [r.model_dump(by_alias=True) for r in report.rows]
    listed.append({"key": "total", "label": None, **report.totals.model_dump(by_alias=True)})
    for row in listed:
        writer.writerow(["" if row[c] is None else row[c] for c in REPORT_COLUMNS])
    return out.getvalue()
