from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import EMAIL_PATTERN, ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp

UserRole = TypeAliasType("UserRole", Literal["ADMIN", "SUPERVISOR", "AGENT"])
Email = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=320, pattern=EMAIL_PATTERN),
]


class UserCreate(BodyModel):
    name: str = Field(min_length=1, max_length=200)
    email: Email
    role: UserRole = "AGENT"
    document: str | None = Field(None, max_length=64)
    inbox_ids: list[Id] = Field(default_factory=list, max_length=100)


class UserUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    email: Email | None = None
    role: UserRole | None = None
    document: str | None = Field(None, max_length=64)
    inbox_ids: list[Id] | None = Field(None, max_length=100)


class UserOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    email: str
    role: str
    document: str | None
    image_url: str | None
    inbox_ids: list[ServerId]
    created_at: Timestamp
    updated_at: Timestamp


class AvatarRemoved(ApiModel):
    image_url: str | None
