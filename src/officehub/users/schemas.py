from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import EMAIL_PATTERN, ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp

UserRole = TypeAliasType("UserRole", Literal["ADMIN", "SUPERVISOR", "AGENT"])
Availability = TypeAliasType("Availability", Literal["ONLINE", "AWAY", "OFFLINE"])
Capacity = Annotated[int, Field(ge=0, le=10_000)]
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
    availability: Availability = Field(
        "ONLINE", description="Only ONLINE users receive conversations by an inbox's routing"
    )
    capacity: Capacity | None = Field(
        None, description="Most open conversations routing gives the user (null: no limit)"
    )
    legal_area_ids: list[Id] = Field(default_factory=list, max_length=50)


class UserUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    email: Email | None = None
    role: UserRole | None = None
    document: str | None = Field(None, max_length=64)
    inbox_ids: list[Id] | None = Field(None, max_length=100)
    is_active: bool | None = Field(
        None, description="false: the user can no longer sign in and their sessions end at once"
    )
    only_assigned_conversations: bool | None = Field(
        None,
        description="true: the user sees only the conversations assigned to them or unassigned",
    )

    availability: Availability | None = Field(
        None, description="Only ONLINE users receive conversations by an inbox's routing"
    )
    capacity: Capacity | None = Field(
        None, description="Most open conversations routing gives the user (null: no limit)"
    )
    legal_area_ids: list[Id] | None = Field(
        None, max_length=50, description="The legal areas the user handles (replaces the set)"
    )

    NOT_NULL = frozenset(
        {"is_active", "only_assigned_conversations", "availability", "legal_area_ids"}
    )


class UserOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    email: str
    role: str
    document: str | None
    image_url: str | None
    inbox_ids: list[ServerId]
    is_active: bool
    only_assigned_conversations: bool
    availability: Availability
    capacity: int | None
    legal_area_ids: list[ServerId]
    has_password: bool = Field(description="Whether the user has chosen a password (can sign in)")
    created_at: Timestamp
    updated_at: Timestamp


class AvatarRemoved(ApiModel):
    image_url: str | None
