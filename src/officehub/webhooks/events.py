"""``webhook.test``: sent by ``POST /webhooks/{id}/test`` to that webhook only."""

from __future__ import annotations

from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel


class WebhookTestPayload(ApiModel):
    webhook_id: ServerId
    message: str


TEST = declare("webhook.test", WebhookTestPayload)
