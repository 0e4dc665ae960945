"""The jobs every worker runs. Each domain adds its own here."""

from __future__ import annotations

from officehub.crm.overdue import OVERDUE_JOB
from officehub.webhooks.delivery import PURGE_JOB, deliver_due, fan_out_events
from officehub.worker.runner import PeriodicJob, QueueJob


def queue_jobs() -> list[QueueJob]:
    return [fan_out_events, deliver_due]


def periodic_jobs() -> list[PeriodicJob]:
    return [PURGE_JOB, OVERDUE_JOB]
