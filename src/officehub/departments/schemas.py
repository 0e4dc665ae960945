from __future__ import annotations

from pydantic import Field

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp


class DepartmentCreate(BodyModel):
    name: str = Field(min_length=1, max_length=200)


class DepartmentUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)


class DepartmentOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    created_at: Timestamp
    updated_at: Timestamp
