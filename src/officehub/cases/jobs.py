"""Cases' background work: the watched cases' courts consulted as they fall due."""

from __future__ import annotations

from officehub.cases.watch import WATCH_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(periodic=(WATCH_JOB,))
