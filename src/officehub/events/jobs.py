"""The outbox's background work: one queue job per registered consumer (as each
registered itself in ``officehub.hook_subscriptions.install``), and processed events
purged every hour."""

from __future__ import annotations

from officehub.events import registry
from officehub.events.consumers import consumer_job
from officehub.events.retention import OUTBOX_PURGE_JOB
from officehub.kit.scheduled_jobs import DomainJobs
from officehub.kit.worker import QueueJob

JOBS = DomainJobs(periodic=(OUTBOX_PURGE_JOB,))


def consumer_jobs() -> list[QueueJob]:
    """A queue job per consumer registered so far (call after the hooks are installed)."""
    return [consumer_job(consumer) for consumer in registry.consumers()]
