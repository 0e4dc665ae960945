"""What the office pays the WhatsApp platform (issue 40): its sends by pricing category and
month, billable or free, from the ``pricing`` the platform's statuses put on each message
(``channels.platform_status``; per-message pricing, ``PMP``, since July 2025).

A send is billable when its pricing ``type`` is ``regular`` (``free_customer_service`` and
``free_entry_point`` are free); a send priced before ``type`` existed (``CBP``) by its
``billable`` flag. A month is a calendar month in UTC, as the platform counts its pricing
tiers; the month of a send is when it was made. A SUPERVISOR's report covers their inboxes.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.visibility import sees_everything
from officehub.dashboard.schemas import UsageFigures, UsageRow, WhatsAppUsageReport
from officehub.inboxes import service as inboxes
from officehub.kit.auth import Actor
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.messages import repository as messages

MAX_MONTHS = 24
DEFAULT_MONTHS = 12
# YYYY-MM from 0001-01 (there is no year 0) to 9999-12.
MONTH_PATTERN = r"^(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])$"
FIRST_MONTH, LAST_MONTH = 1 * 12, 9999 * 12 + 11
UNKNOWN_CATEGORY = "unknown"
COLUMNS = ("month", "category", "billable", "free")


def _month_index(month: str) -> int:
    year, number = month.split("-")
    return int(year) * 12 + int(number) - 1


def _month_of(index: int) -> str:
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _start(index: int) -> datetime:
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def billable(kind: str | None, flag: bool | None) -> bool:
    """``type`` decides (``regular`` is billed); without it, the deprecated ``billable``."""
    if kind is not None:
        return kind == "regular"
    return bool(flag)


async def usage(
    session: AsyncSession,
    actor: Actor,
    first: str | None,
    last: str | None,
    integration_id: str | None,
) -> WhatsAppUsageReport:
    """Sends with pricing per month and category, ``from``/``to`` months included (default:
    the 12 months up to the current one, at most 24); another office's (or, for a
    SUPERVISOR, another inbox's) ``integrationId`` is 404."""
    office_id = actor.office_id
    now = utcnow()
    last_index = _month_index(last) if last else now.year * 12 + now.month - 1
    first_index = (
        _month_index(first) if first else max(FIRST_MONTH, last_index - DEFAULT_MONTHS + 1)
    )
    if last_index < first_index:
        raise ValidationFailed.field("query.to", "must not be before `from`")
    if last_index - first_index + 1 > MAX_MONTHS:
        raise ValidationFailed.field("query.to", f"a report covers at most {MAX_MONTHS} months")
    scope = None if sees_everything(actor) else actor.inbox_ids
    if integration_id is not None:
        integration = await inboxes.get_integration(session, office_id, integration_id)
        if scope is not None and integration.inbox_id not in scope:
            raise NotFound.of("Integration", integration_id)
    found = await messages.priced_sends(
        session,
        office_id,
        _start(first_index),
        _start(last_index + 1) if last_index < LAST_MONTH else None,  # none after 9999-12
        integration_id,
        scope,
    )
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for at, category, kind, flag, count in found:
        figures = counts[(str(at), str(category or UNKNOWN_CATEGORY)[:64])]
        figures[0 if billable(kind, flag) else 1] += int(count)
    rows = [
        UsageRow(month=m, category=c, billable=b, free=f)
        for (m, c), (b, f) in sorted(counts.items())
    ]
    return WhatsAppUsageReport(
        month_from=_month_of(first_index),
        month_to=_month_of(last_index),
        integration_id=integration_id,
        rows=rows,
        totals=UsageFigures(billable=sum(r.billable for r in rows), free=sum(r.free for r in rows)),
    )


def _cell(text: str) -> str:
    """A text cell a spreadsheet never reads as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def usage_csv(report: WhatsAppUsageReport) -> str:
    """The rows and a last ``total`` row, with a header; the same numbers as the JSON."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for row in report.rows:
        writer.writerow([row.month, _cell(row.category), row.billable, row.free])
    writer.writerow(["total", "", report.totals.billable, report.totals.free])
    return out.getvalue()
