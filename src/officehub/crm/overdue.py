"""The periodic job that reports cards staying past their column's time limit.

A stay's due time is kept on the card (``overdue_at``); the partial index over it holds
only unreported stays, so each run reads just the cards that are due. Reporting clears
``overdue_at`` and stamps ``overdue_emitted_at``: once per stay. A move starts a new stay.
"""

from __future__ import annotations

from datetime import timedelta

from officehub.crm import events, repository
from officehub.kit.worker import PeriodicJob, WorkerContext

INTERVAL = timedelta(minutes=1)
BATCH = 200


async def report_overdue(ctx: WorkerContext) -> int:
    """Emits ``crm.lead.overdue`` for every due stay; returns how many."""
    reported = 0
    while True:
        now = ctx.now()
        async with ctx.sessionmaker() as session, session.begin():
            due = await repository.claim_overdue(session, now, BATCH)
            for card, column in due:
                card.overdue_at = None
                card.overdue_emitted_at = now
                await events.emit_lead(
                    session, card, events.LEAD_OVERDUE, timeLimitDays=column.time_limit_days
                )
        reported += len(due)
        if len(due) < BATCH:
            return reported


OVERDUE_JOB = PeriodicJob("crm.lead.overdue", INTERVAL, report_overdue)
