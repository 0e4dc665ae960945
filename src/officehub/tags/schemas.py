from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import HEX_COLOR_PATTERN, ApiModel, BodyModel, non_blank_schema
from officehub.kit.timeutil import Timestamp

TagModule = TypeAliasType(
    "TagModule", Literal["crm", "conversas", "pessoas", "fast-messages", "tickets"]
)
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    non_blank_schema(100),
]


class TagCreate(BodyModel):
    name: Name
    color: str = Field(pattern=HEX_COLOR_PATTERN, description="#rrggbb, for example #FF0000")
    inbox_id: Id
    modules: list[TagModule] = Field(
        min_length=1, description="Where the tag is available", max_length=5
    )


class TagUpdate(BodyModel):
    name: Name | None = None
    color: str | None = Field(None, pattern=HEX_COLOR_PATTERN, description="#rrggbb")
    modules: list[TagModule] | None = Field(None, min_length=1, max_length=5)


class TagOut(ApiModel):
    id: ServerId
    name: str
    color: str
    office_id: ServerId
    inbox_id: ServerId
    modules: list[str]
    created_at: Timestamp
    updated_at: Timestamp
