"""CRM's background work: overdue leads reported every interval."""

from __future__ import annotations

from officehub.crm.overdue import OVERDUE_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(periodic=(OVERDUE_JOB,))
