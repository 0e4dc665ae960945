"""The job list: every job a worker runs (the runner is ``kit.worker``). Each domain adds its
own here."""

from __future__ import annotations

from officehub.accounts.retention import ACCOUNTS_PURGE_JOB
from officehub.automation.actions import JOB_HANDLERS as AUTOMATION_JOBS
from officehub.automation.consumer import RUNS_PURGE_JOB
from officehub.automation.scheduled import scheduled_runner
from officehub.case_notices.sender import SEND_JOB as CASE_NOTICES_JOB
from officehub.cases.watch import WATCH_JOB
from officehub.channels.dispatcher import download_media, send_queued, send_read_receipts
from officehub.channels.template_sync import TEMPLATE_SYNC_JOB
from officehub.contacts.erasure import JOB_HANDLERS as ERASURE_JOBS
from officehub.conversations.retention import JOB_HANDLERS as RETENTION_JOBS
from officehub.conversations.retention import RETENTION_JOB
from officehub.conversations.sla_breaches import SLA_BREACH_JOB
from officehub.crm.overdue import OVERDUE_JOB
from officehub.events import registry
from officehub.events.consumers import consumer_job
from officehub.events.retention import OUTBOX_PURGE_JOB
from officehub.hook_subscriptions import install as install_hooks
from officehub.kit.worker import PeriodicJob, QueueJob
from officehub.live.presence import PRESENCE_JOB
from officehub.publications.sync import SYNC_JOB as PUBLICATIONS_SYNC_JOB
from officehub.users.mail import JOB_HANDLERS as USERS_JOBS
from officehub.webhooks.actions import ACTION_PURGE_JOB, deliver_actions_due
from officehub.webhooks.delivery import PURGE_JOB, deliver_due


def queue_jobs() -> list[QueueJob]:
    install_hooks()  # the jobs run domain services, whose hooks crm must answer
    return [
        # One job per outbox consumer, as each registered itself in ``install_hooks``.
        *(consumer_job(consumer) for consumer in registry.consumers()),
        scheduled_runner({**AUTOMATION_JOBS, **ERASURE_JOBS, **RETENTION_JOBS, **USERS_JOBS}),
        deliver_due,
        deliver_actions_due,
        send_queued,
        download_media,
        send_read_receipts,
    ]


def periodic_jobs() -> list[PeriodicJob]:
    install_hooks()
    return [
        PURGE_JOB,
        ACTION_PURGE_JOB,
        OVERDUE_JOB,
        SLA_BREACH_JOB,
        RUNS_PURGE_JOB,
        OUTBOX_PURGE_JOB,
        TEMPLATE_SYNC_JOB,
        WATCH_JOB,
        ACCOUNTS_PURGE_JOB,
        CASE_NOTICES_JOB,
        PUBLICATIONS_SYNC_JOB,
        RETENTION_JOB,
        PRESENCE_JOB,
    ]
