"""Case notices' background work: the notices due sent to clients."""

from __future__ import annotations

from officehub.case_notices.sender import SEND_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(periodic=(SEND_JOB,))
