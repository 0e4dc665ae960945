"""Publications' background work: the offices' publications synced as they fall due."""

from __future__ import annotations

from officehub.kit.scheduled_jobs import DomainJobs
from officehub.publications.sync import SYNC_JOB

JOBS = DomainJobs(periodic=(SYNC_JOB,))
