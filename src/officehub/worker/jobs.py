"""The jobs every worker runs. Each domain adds its own here."""

from __future__ import annotations

from officehub.channels.dispatcher import download_media, send_queued
from officehub.channels.template_sync import TEMPLATE_SYNC_JOB
from officehub.crm.overdue import OVERDUE_JOB
from officehub.webhooks.delivery import PURGE_JOB, deliver_due, fan_out_events
from officehub.worker.runner import PeriodicJob, QueueJob


def queue_jobs() -> list[QueueJob]:
    return [fan_out_events, deliver_due, send_queued, download_media]


def periodic_jobs() -> list[PeriodicJob]:
    return [PURGE_JOB, OVERDUE_JOB, TEMPLATE_SYNC_JOB]
