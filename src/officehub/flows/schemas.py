"""The flow and its step graph, exactly as the spec draws them (``media`` per the contract)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Discriminator, Field, StringConstraints, Tag, field_validator
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.outbound.urls import check_url
from officehub.kit.schemas import HEX_COLOR_PATTERN, ApiModel, BodyModel, LongText, StrictBodyModel
from officehub.kit.timeutil import Timestamp
from officehub.messages.schemas import FallbackTemplate
from officehub.tickets.schemas import TicketPriority

SystemAction = TypeAliasType(
    "SystemAction",
    Literal[
        "SEARCH_MOVEMENTS",
        "ASSIGN_USER",
        "ADD_LABELS",
        "CHANGE_CRM_COLUMN",
        "ASSIGN_AGENT",
        "CREATE_TICKET",
        "FIRE_WEBHOOK",
    ],
)
HttpMethod = TypeAliasType("HttpMethod", Literal["GET", "POST", "PUT", "PATCH", "DELETE"])
FlowSessionStatus = TypeAliasType(
    "FlowSessionStatus", Literal["RUNNING", "WAITING", "PAUSED", "ENDED", "EXPIRED"]
)
FlowWaitingFor = TypeAliasType("FlowWaitingFor", Literal["REPLY", "HUMAN"])
MAX_STEPS = 500
MAX_OPTIONS = 100

StepId = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Ref = Annotated[str, StringConstraints(max_length=128)]
Short = Annotated[str, StringConstraints(max_length=500)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
StepText = Annotated[LongText, StringConstraints(max_length=4096)]


class Position(StrictBodyModel):
    x: float
    y: float

    @field_validator("x", "y")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


class WebhookHeader(StrictBodyModel):
    key: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    value: Annotated[str, StringConstraints(max_length=4096)]


class StepMetadata(StrictBodyModel):
    """Every key optional and nullable; no other keys."""

    user_id: Ref | None = None
    department_id: Ref | None = None
    department_ids: list[Ref] | None = Field(None, max_length=5)
    agent_id: Ref | None = None
    is_available: bool | None = None
    tag_ids: list[Ref] | None = Field(None, max_length=100)
    funnel_id: Ref | None = None
    funnel_column_id: Ref | None = None
    ticket_title: Short | None = None
    ticket_description: Annotated[LongText, StringConstraints(max_length=10_000)] | None = None
    ticket_status_id: Ref | None = None
    ticket_priority: TicketPriority | None = None
    ticket_assignee_ids: list[Ref] | None = Field(None, max_length=100)
    ticket_department_ids: list[Ref] | None = Field(None, max_length=100)
    webhook_url: Annotated[str, StringConstraints(max_length=2048)] | None = None
    webhook_method: HttpMethod | None = None
    webhook_headers: list[WebhookHeader] | None = Field(None, max_length=20)
    webhook_body: Annotated[LongText, StringConstraints(max_length=65_536)] | None = None
    webhook_include_context: bool | None = None
    fallback_template: FallbackTemplate | None = Field(
        None,
        description=(
            "A text step: the APPROVED template sent instead when the conversation's "
            "24-hour window is closed"
        ),
    )


class Option(BodyModel):
    """All four keys required; ``nextStepId`` may be null (choosing it ends the flow)."""

    text: StepText
    title: Annotated[str, StringConstraints(max_length=200)]
    value: Annotated[str, StringConstraints(max_length=200)]
    next_step_id: StepId | None


class _Step(BodyModel):
    id: StepId
    content: StepText
    next_step_id: StepId | None = None
    position: Position | None = None
    metadata: StepMetadata | None = None


class TextStep(_Step):
    type: Literal["text"]


class MediaStep(_Step):
    """``content`` is the URL of an image, audio, video or document."""

    type: Literal["media"]

    @field_validator("content")
    @classmethod
    def _url(cls, value: str) -> str:
        check_url(value)
        return value


class ListStep(_Step):
    type: Literal["list"]
    options: list[Option] = Field(min_length=1, max_length=MAX_OPTIONS)


class SystemStep(_Step):
    type: Literal["system"]
    system_action: SystemAction


def _step_type(value: Any) -> Any:
    return value.get("type") if isinstance(value, dict) else getattr(value, "type", None)


# A callable discriminator: BodyModel's before-validators (strict scalars) apply to every
# field, which a field-named discriminator does not allow on its ``type``.
Step = Annotated[
    Annotated[TextStep, Tag("text")]
    | Annotated[ListStep, Tag("list")]
    | Annotated[SystemStep, Tag("system")]
    | Annotated[MediaStep, Tag("media")],
    Discriminator(
        _step_type,
        custom_error_type="invalid_step_type",
        custom_error_message="type must be one of text, list, system, media",
    ),
]


class FlowContent(BodyModel):
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    initial_step_id: StepId


class FlowContentPatch(BodyModel):
    """``initialStepId`` left out keeps the stored one."""

    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    initial_step_id: StepId | None = None


class FlowCreate(BodyModel):
    name: Name
    description: Annotated[LongText, StringConstraints(max_length=2000)] = ""
    content: FlowContent
    color: Annotated[str, StringConstraints(pattern=HEX_COLOR_PATTERN)] | None = None
    inbox_id: Id
    is_social_flow: bool = False


class FlowUpdate(BodyModel):
    """Partial update: only the fields sent change."""

    name: Name | None = None
    description: Annotated[LongText, StringConstraints(max_length=2000)] | None = None
    content: FlowContentPatch | None = None
    color: Annotated[str, StringConstraints(pattern=HEX_COLOR_PATTERN)] | None = None
    is_social_flow: bool | None = None


class FlowWarning(ApiModel):
    step_id: str
    reason: str
    details: str


class FlowCheckOut(ApiModel):
    """``POST /flow/check``: what a save of this body would refuse (``problems``: the
    ``INVALID_FLOW_GRAPH`` reasons, by step) and warn of (``warnings``: unreachable steps);
    ``valid`` when there is no problem."""

    valid: bool
    problems: list[FlowWarning]
    warnings: list[FlowWarning]


class FlowOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    description: str
    content: dict[str, Any]
    color: str | None
    is_social_flow: bool
    inbox_id: ServerId
    warnings: list[FlowWarning]
    created_at: Timestamp
    updated_at: Timestamp


class SessionStep(ApiModel):
    step_id: str | None
    outcome: str
    detail: str | None
    at: str


class FlowSessionOut(ApiModel):
    """``waitingFor``: ``REPLY`` (a list step awaits the contact), ``HUMAN`` (a person has the
    conversation), null when the session is over."""

    id: ServerId
    conversation_id: ServerId
    flow_id: ServerId
    flow_name: str
    status: FlowSessionStatus
    current_step_id: str | None
    waiting_for: FlowWaitingFor | None
    reasked: bool
    end_reason: str | None
    expires_at: Timestamp | None
    last_activity_at: Timestamp
    steps: list[SessionStep]
    created_at: Timestamp


class MovementCreate(BodyModel):
    person_id: Id
    case_number: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    description: Annotated[LongText, StringConstraints(min_length=1, max_length=4000)]
    occurred_at: AwareDatetime


class MovementOut(ApiModel):
    id: ServerId
    person_id: ServerId
    case_number: str
    description: str
    occurred_at: Timestamp
    created_at: Timestamp
