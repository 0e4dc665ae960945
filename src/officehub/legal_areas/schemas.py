from __future__ import annotations

from pydantic import Field

from officehub.schemas import ApiModel, BodyModel
from officehub.timeutil import Timestamp


class LegalAreaCreate(BodyModel):
    name: str = Field(min_length=1, max_length=100)
    color: str = Field(min_length=1, max_length=32)


class LegalAreaUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=100)
    color: str | None = Field(None, min_length=1, max_length=32)


class LegalAreaOut(ApiModel):
    id: str
    name: str
    color: str
    office_id: str | None = Field(description="null for a default area")
    created_at: Timestamp
    updated_at: Timestamp
