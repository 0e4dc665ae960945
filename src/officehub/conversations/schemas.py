from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.contacts.schemas import TagRef
from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import ApiModel, BodyModel, LongText
from officehub.kit.timeutil import Timestamp

ConversationStatus = TypeAliasType("ConversationStatus", Literal["OPEN", "CLOSED"])
ConversationPriority = TypeAliasType("ConversationPriority", Literal["LOW", "MEDIUM", "HIGH"])
RefId = Annotated[str, StringConstraints(min_length=1, max_length=32)]


class ConversationIn(BodyModel):
    person_id: Id
    inbox_id: RefId
    integration_id: RefId
    priority: ConversationPriority = "MEDIUM"
    legal_area_id: RefId | None = Field(
        None, description="The legal area it is about (an inbox routing byLegalArea reads it)"
    )


class ConversationPatch(BodyModel):
    """Only the fields sent change; ``tags`` (tag ids) replaces the current set."""

    NOT_NULL = frozenset({"status", "priority", "tags", "is_fixed", "is_archived"})

    status: ConversationStatus | None = None
    priority: ConversationPriority | None = None
    assigned_user_id: RefId | None = None
    department_id: RefId | None = None
    legal_area_id: RefId | None = Field(
        None, description="The legal area it is about (an inbox routing byLegalArea reads it)"
    )
    tags: Annotated[list[RefId], Field(max_length=50)] | None = None
    is_fixed: bool | None = Field(default=None, description="Pinned: listed first")
    is_archived: bool | None = None


class LastMessage(ApiModel):
    """The conversation's last message, kept on the conversation as each is stored."""

    id: ServerId
    content: str | None = Field(description="Its text (null for media without a caption)")
    type: str
    message_at: Timestamp
    user_id: ServerId | None = Field(description="The operator who sent it, if one did")
    user_name: str | None


class Responsable(ApiModel):
    id: ServerId
    name: str


class SlaOut(ApiModel):
    """The service level the conversation follows (issue 32); due times count only within
    its inbox's business hours. A due is null until its clock starts (the client's first
    message; a message unanswered since a response)."""

    policy_id: ServerId
    first_response_due_at: Timestamp | None
    next_response_due_at: Timestamp | None = Field(
        description="While a client message awaits an answer after the first response"
    )
    resolution_due_at: Timestamp | None
    breached_at: Timestamp | None = Field(description="When it first missed a due time")


class ConversationOut(ApiModel):
    id: ServerId
    person_id: ServerId
    inbox_id: ServerId
    integration_id: ServerId
    status: ConversationStatus
    priority: ConversationPriority
    assigned_user_id: ServerId | None
    department_id: ServerId | None
    legal_area_id: ServerId | None = None
    last_message_at: Timestamp | None
    tags: list[TagRef]
    is_fixed: bool
    is_archived: bool
    unread_count: int = Field(
        description="Inbound messages after the reader's read mark: a signed-in user's own "
        "mark; for an API key (and in events) the office's, set by POST /conversation/{id}/read"
    )
    last_message: LastMessage | None
    responsables: list[Responsable] = Field(description="The assigned user, if any")
    sla: SlaOut | None = Field(None, description="Null when no SLA policy applies")
    first_inbound_at: Timestamp | None = Field(None, description="The client's first message")
    first_response_at: Timestamp | None = Field(
        None, description="The first answer a person or an API key sent after it"
    )
    awaiting_since: Timestamp | None = Field(
        None, description="The client's oldest message unanswered since the last response"
    )
    resolved_at: Timestamp | None = Field(
        None,
        validation_alias=AliasChoices("closed_at", "resolved_at"),
        description="When it was last closed",
    )
    created_at: Timestamp
    updated_at: Timestamp


class TagAdd(BodyModel):
    tag_id: RefId


class EndHumanSupport(BodyModel):
    conversation_id: Id


class NoteIn(BodyModel):
    conversation_id: Id
    text: Annotated[LongText, StringConstraints(min_length=1, max_length=10_000)]
    user_id: RefId | None = Field(default=None, description="The operator who wrote it")


class NoteOut(ApiModel):
    id: ServerId
    conversation_id: ServerId
    user_id: ServerId | None
    text: str
    created_at: Timestamp
