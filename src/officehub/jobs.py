"""The job list: every job a worker runs, collected from the domains. Each domain
declares its own background work in its ``jobs.py`` (a ``kit.scheduled_jobs.DomainJobs``);
the runners are ``kit.worker`` (queue and periodic jobs) and ``kit.scheduled_jobs``
(scheduled jobs, dispatched by kind to the handler their domain registered)."""

from __future__ import annotations

from officehub.accounts import jobs as accounts
from officehub.automation import jobs as automation
from officehub.case_notices import jobs as case_notices
from officehub.cases import jobs as cases
from officehub.channels import jobs as channels
from officehub.contacts import jobs as contacts
from officehub.conversations import jobs as conversations
from officehub.crm import jobs as crm
from officehub.events import jobs as events
from officehub.hook_subscriptions import install as install_hooks
from officehub.kit.scheduled_jobs import DomainJobs, handlers_of, scheduled_runner
from officehub.kit.worker import PeriodicJob, QueueJob
from officehub.live import jobs as live
from officehub.publications import jobs as publications
from officehub.users import jobs as users
from officehub.webhooks import jobs as webhooks

DOMAINS: tuple[DomainJobs, ...] = (
    webhooks.JOBS,
    crm.JOBS,
    conversations.JOBS,
    automation.JOBS,
    events.JOBS,
    channels.JOBS,
    cases.JOBS,
    accounts.JOBS,
    case_notices.JOBS,
    publications.JOBS,
    live.JOBS,
    users.JOBS,
    contacts.JOBS,
)
"""Every domain's background work, in the order a worker's pass runs it."""


def queue_jobs() -> list[QueueJob]:
    install_hooks()  # the jobs run domain services, whose hooks crm must answer
    return [
        *events.consumer_jobs(),
        scheduled_runner(handlers_of(DOMAINS)),
        *(job for domain in DOMAINS for job in domain.queue),
    ]


def periodic_jobs() -> list[PeriodicJob]:
    install_hooks()
    return [job for domain in DOMAINS for job in domain.periodic]
