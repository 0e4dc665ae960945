"""Automation's background work: the scheduled sends of rules (a delayed message, a
sequence's next block, a webhook scheduled before action deliveries existed) and the
purge of old rule runs. The handlers are ``automation.actions``'; the runner is
``kit.scheduled_jobs``."""

from __future__ import annotations

from officehub.automation.actions import (
    FIRE_WEBHOOK,
    SEND_MESSAGE,
    SEQUENCE_BLOCK,
    fire_webhook_job,
    send_message_job,
    sequence_block_job,
)
from officehub.automation.consumer import RUNS_PURGE_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(
    scheduled={
        SEND_MESSAGE: send_message_job,
        SEQUENCE_BLOCK: sequence_block_job,
        FIRE_WEBHOOK: fire_webhook_job,
    },
    periodic=(RUNS_PURGE_JOB,),
)
