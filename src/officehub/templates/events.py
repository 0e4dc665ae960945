"""``template.updated``: the platform changed an official-channel template."""

from __future__ import annotations

from pydantic import Field

from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.templates.schemas import TemplateOut


class TemplateUpdatedPayload(TemplateOut):
    platform_status: str | None = Field(description="The platform's own word for the status")
    rejected_reason: str | None
    quality_score: str | None
    integration_id: ServerId
    changes: list[str] = Field(
        description="What changed: status, platformStatus, rejectedReason, qualityScore, category"
    )


UPDATED = declare("template.updated", TemplateUpdatedPayload)
