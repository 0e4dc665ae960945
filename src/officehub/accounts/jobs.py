"""Accounts' background work: ended accounts purged every hour."""

from __future__ import annotations

from officehub.accounts.retention import ACCOUNTS_PURGE_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(periodic=(ACCOUNTS_PURGE_JOB,))
