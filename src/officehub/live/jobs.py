"""The live stream's background work: stale presence swept every minute."""

from __future__ import annotations

from officehub.kit.scheduled_jobs import DomainJobs
from officehub.live.presence import PRESENCE_JOB

JOBS = DomainJobs(periodic=(PRESENCE_JOB,))
