from __future__ import annotations

from typing import Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import HEX_COLOR_PATTERN, ApiModel, BodyModel, LongText
from officehub.kit.timeutil import Timestamp

TicketPriority = TypeAliasType("TicketPriority", Literal["LOW", "MEDIUM", "HIGH"])


class TicketStatusCreate(BodyModel):
    name: str = Field(min_length=1, max_length=100)
    color: str | None = Field(None, pattern=HEX_COLOR_PATTERN, description="#rrggbb")


class TicketStatusOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    color: str | None
    created_at: Timestamp
    updated_at: Timestamp


class TicketStatusRef(ApiModel):
    id: ServerId
    name: str
    color: str | None


class TicketCreate(BodyModel):
    title: str = Field(min_length=1, max_length=200)
    description: LongText | None = Field(None, max_length=10_000)
    status_id: Id
    priority: TicketPriority = "MEDIUM"
    assignee_ids: list[Id] = Field(default_factory=list, max_length=50)
    department_ids: list[Id] = Field(default_factory=list, max_length=50)
    conversation_id: Id | None = None


class TicketUpdate(BodyModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    description: LongText | None = Field(None, max_length=10_000)
    status_id: Id | None = None
    priority: TicketPriority | None = None
    assignee_ids: list[Id] | None = Field(None, max_length=50)
    department_ids: list[Id] | None = Field(None, max_length=50)
    conversation_id: Id | None = None


class TicketOut(ApiModel):
    id: ServerId
    office_id: ServerId
    title: str
    description: str | None
    status_id: ServerId
    status: TicketStatusRef
    priority: str
    assignee_ids: list[ServerId]
    department_ids: list[ServerId]
    conversation_id: ServerId | None
    created_at: Timestamp
    updated_at: Timestamp
