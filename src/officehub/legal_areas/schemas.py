from __future__ import annotations

from pydantic import Field

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import HEX_COLOR_PATTERN, ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp


class LegalAreaCreate(BodyModel):
    name: str = Field(min_length=1, max_length=100)
    color: str = Field(pattern=HEX_COLOR_PATTERN, description="#rrggbb")


class LegalAreaUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=100)
    color: str | None = Field(None, pattern=HEX_COLOR_PATTERN, description="#rrggbb")


class LegalAreaOut(ApiModel):
    id: ServerId
    name: str
    color: str
    office_id: ServerId | None = Field(description="null for a default area")
    created_at: Timestamp
    updated_at: Timestamp
