"""E-mail to the office's administrators (``kit.mail``), as scheduled jobs: a lower domain
adds the job in its own transaction (the kind's name is its constant), the worker sends.

A job whose office has no active administrator, or a service with no mail server
(``OFFICEHUB_SMTP_URL`` empty), ends without sending and says so in its payload; a mail
server's refusal fails the job, which the runner retries."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit import mail
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.kit.worker import WorkerContext
from officehub.offices.settings import office_zone
from officehub.users import repository, texts

logger = logging.getLogger(__name__)


def _when(value: object, zone: object) -> str:
    if not isinstance(value, str):
        return "—"
    at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return at.astimezone(zone).strftime("%d/%m/%Y %H:%M")  # type: ignore[arg-type]


async def mail_webhook_paused(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    """``PAUSED_MAIL_JOB``: tells each active administrator that a webhook was paused."""
    admins = [
        admin for admin in await repository.active_admins(session, job.office_id) if admin.email
    ]
    if not ctx.settings.smtp_url or not admins:
        job.payload = {**job.payload, "mailed": 0}
        logger.info("paused-webhook mail not sent: %s", "no mail server" if admins else "no admin")
        return
    zone = await office_zone(session, job.office_id)
    values = {
        "name": job.payload.get("name", ""),
        "webhook_id": job.payload.get("webhookId", ""),
        "failing_since": _when(job.payload.get("failingSince"), zone),
        "disabled_at": _when(job.payload.get("disabledAt"), zone),
    }
    subject = texts.WEBHOOK_PAUSED_SUBJECT.format(**values)
    mails = [
        mail.message(
            ctx.settings.mail_from,
            admin.email,
            subject,
            texts.WEBHOOK_PAUSED_BODY.format(admin=admin.name, **values),
        )
        for admin in admins
    ]
    await mail.send(ctx.settings, mails)
    job.payload = {**job.payload, "mailed": len(mails)}
