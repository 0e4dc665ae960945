from __future__ import annotations

from typing import Literal

from pydantic import Field

from officehub.params import Id
from officehub.schemas import ApiModel, BodyModel
from officehub.timeutil import Timestamp

IntegrationType = Literal["WHATSAPP_OFFICIAL", "WHATSAPP", "INSTAGRAM", "WEBCHAT"]
Name = Field(min_length=1, max_length=200)


class InboxCreate(BodyModel):
    name: str = Name


class InboxUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)


class InboxOut(ApiModel):
    id: str
    office_id: str
    name: str
    created_at: Timestamp
    updated_at: Timestamp


class IntegrationCreate(BodyModel):
    inbox_id: Id
    type: IntegrationType
    name: str = Name
    device_id: str | None = Field(
        None, min_length=1, max_length=200, description="Required for WHATSAPP_OFFICIAL"
    )


class IntegrationUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    device_id: str | None = Field(None, min_length=1, max_length=200)


class IntegrationOut(ApiModel):
    id: str
    office_id: str
    inbox_id: str
    type: str
    name: str
    device_id: str | None
    created_at: Timestamp
    updated_at: Timestamp
