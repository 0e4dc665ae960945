"""Contacts' background work: an erasure's clean-up (its files, PostgreSQL's ``VACUUM``),
queued by ``contacts.erasure.forget_derived`` as a scheduled job."""

from __future__ import annotations

from officehub.contacts.erasure import ERASED_JOB, clean_up_erased
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(scheduled={ERASED_JOB: clean_up_erased})
