from __future__ import annotations

from pydantic import Field

from officehub.schemas import ApiModel
from officehub.timeutil import Timestamp


class DepartmentCreate(ApiModel):
    name: str = Field(min_length=1, max_length=200)


class DepartmentUpdate(ApiModel):
    name: str | None = Field(None, min_length=1, max_length=200)


class DepartmentOut(ApiModel):
    id: str
    office_id: str
    name: str
    created_at: Timestamp
    updated_at: Timestamp
