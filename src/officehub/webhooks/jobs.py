"""Webhooks' background work: webhook and action deliveries sent as they fall due, and
their logs purged after their retention."""

from __future__ import annotations

from officehub.kit.scheduled_jobs import DomainJobs
from officehub.webhooks.actions import ACTION_PURGE_JOB, deliver_actions_due
from officehub.webhooks.delivery import PURGE_JOB, deliver_due

JOBS = DomainJobs(periodic=(PURGE_JOB, ACTION_PURGE_JOB), queue=(deliver_due, deliver_actions_due))
