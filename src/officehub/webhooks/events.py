"""``webhook.test`` (sent by ``POST /webhooks/{id}/test`` to that webhook only) and
``webhook.endpoint.disabled`` (a webhook paused after its retry window failed)."""

from __future__ import annotations

from datetime import datetime

from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp


class WebhookTestPayload(ApiModel):
    webhook_id: ServerId
    message: str


TEST = declare("webhook.test", WebhookTestPayload)


class WebhookDisabledPayload(ApiModel):
    """Which webhook stopped, since when it failed and why (never its URL nor secret)."""

    webhook_id: ServerId
    name: str
    reason: str
    failing_since: Timestamp | None
    disabled_at: Timestamp


DISABLED = declare("webhook.endpoint.disabled", WebhookDisabledPayload)

PAUSED_MAIL_JOB = "users.webhook_paused_mail"
"""The scheduled job, added in the pause's transaction, that writes to the office's
administrators (``users.mail``: users sit above webhooks, so the kind is named here)."""


def disabled_payload(
    webhook_id: str, name: str, reason: str, failing_since: datetime | None, at: datetime
) -> WebhookDisabledPayload:
    return WebhookDisabledPayload(
        webhook_id=webhook_id, name=name, reason=reason, failing_since=failing_since, disabled_at=at
    )
