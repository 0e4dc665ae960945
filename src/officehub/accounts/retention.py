"""Ended sessions and spent or expired links are deleted every hour: nothing of a session
(its browser's user agent included) is kept past its end (LGPD: no more than needed)."""

from __future__ import annotations

from datetime import timedelta

from officehub.accounts import repository
from officehub.kit.worker import PeriodicJob, WorkerContext


async def purge_ended(ctx: WorkerContext) -> int:
    now = ctx.now()
    idle_since = now - timedelta(seconds=ctx.settings.session_idle_seconds)
    async with ctx.sessionmaker() as session, session.begin():
        return await repository.purge_ended(session, now, idle_since)


ACCOUNTS_PURGE_JOB = PeriodicJob("accounts-purge", timedelta(hours=1), purge_ended)
