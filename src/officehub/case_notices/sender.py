"""The worker's part: sends the APPROVED notices whose time came (quiet hours over, or
approved by the office's settings at once). A notice that cannot be sent is FAILED with
the reason; the lawyer may approve it again."""

from __future__ import annotations

import logging
from datetime import timedelta

from officehub.case_notices import repository, service
from officehub.kit.errors import ServiceError
from officehub.kit.worker import PeriodicJob, WorkerContext

logger = logging.getLogger("officehub.case_notices")

RUN_EVERY = timedelta(seconds=30)
BATCH = 100


async def send_due(ctx: WorkerContext) -> int:
    """One batch of due notices, each sent in its own savepoint; how many were handled."""
    now = ctx.now()
    async with ctx.sessionmaker() as session, session.begin():
        notices = await repository.due(session, now, BATCH)
        for notice in notices:
            rules = await service.rules_of(session, notice.office_id)
            try:
                async with session.begin_nested():
                    await service.deliver(session, notice, rules, now)
            except ServiceError as exc:
                notice.status = service.FAILED
                notice.send_after = None
                notice.error = f"{exc.code}: {exc.details or exc.message}"[:300]
                logger.info("case notice %s not sent: %s", notice.id, exc.code)
        return len(notices)


SEND_JOB = PeriodicJob("case_notices.send", RUN_EVERY, send_due)
