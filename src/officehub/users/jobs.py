"""Users' background work: the e-mail to an office's administrators when a webhook is
paused (the job is queued by ``webhooks.delivery``; its kind is ``PAUSED_MAIL_JOB``)."""

from __future__ import annotations

from officehub.kit.scheduled_jobs import DomainJobs
from officehub.users.mail import mail_webhook_paused
from officehub.webhooks.events import PAUSED_MAIL_JOB

JOBS = DomainJobs(scheduled={PAUSED_MAIL_JOB: mail_webhook_paused})
