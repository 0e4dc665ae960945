"""The jobs every worker runs. Each domain adds its own here."""

from __future__ import annotations

from officehub.crm.overdue import OVERDUE_JOB
from officehub.worker.runner import PeriodicJob, QueueJob


def queue_jobs() -> list[QueueJob]:
    return []


def periodic_jobs() -> list[PeriodicJob]:
    return [OVERDUE_JOB]
