"""Conversations' background work: SLA breaches reported every interval, and retention
(an hourly job queues one ``retention.run`` scheduled job per office, each run a batch
at a time)."""

from __future__ import annotations

from officehub.conversations.retention import RETENTION_JOB, RUN_JOB, run_batch
from officehub.conversations.sla_breaches import SLA_BREACH_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(scheduled={RUN_JOB: run_batch}, periodic=(SLA_BREACH_JOB, RETENTION_JOB))
