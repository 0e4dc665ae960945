from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp
from officehub.sla.rules import Priority

RefId = Annotated[str, StringConstraints(min_length=1, max_length=32)]
Minutes = Annotated[int, Field(ge=1, le=525_600, description="Minutes of business hours")]
BusinessDays = Annotated[int, Field(ge=1, le=365, description="Open days of the inbox")]


class SlaPolicyCreate(BodyModel):
    inbox_id: RefId
    priority: Priority | None = Field(None, description="Only conversations of this priority")
    legal_area_id: RefId | None = Field(None, description="Only conversations about this area")
    first_response_minutes: Minutes
    next_response_minutes: Minutes
    resolution_business_days: BusinessDays


class SlaPolicyUpdate(BodyModel):
    """Only the fields sent change; ``priority`` and ``legalAreaId`` may be set to null
    (the policy then matches any)."""

    NOT_NULL = frozenset(
        {"first_response_minutes", "next_response_minutes", "resolution_business_days"}
    )

    priority: Priority | None = None
    legal_area_id: RefId | None = None
    first_response_minutes: Minutes | None = None
    next_response_minutes: Minutes | None = None
    resolution_business_days: BusinessDays | None = None


class SlaPolicyOut(ApiModel):
    id: ServerId
    office_id: ServerId
    inbox_id: ServerId
    priority: Priority | None
    legal_area_id: ServerId | None
    first_response_minutes: int
    next_response_minutes: int
    resolution_business_days: int
    created_at: Timestamp
    updated_at: Timestamp
