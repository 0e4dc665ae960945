from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    Field,
    GetJsonSchemaHandler,
    StringConstraints,
    TypeAdapter,
    create_model,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypeAliasType

from officehub.actions.base import ActionSpec
from officehub.automation.vocabulary import RULE_ACTIONS
from officehub.events.catalogue import EVENT_NAMES, EventName
from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import ApiModel, BodyModel, StrictApiModel, StrictBodyModel
from officehub.kit.timeutil import Timestamp

ActionName = TypeAliasType(
    "ActionName",
    Literal[
        "SEND_FAST_MESSAGE",
        "SCHEDULE_MESSAGE",
        "MOVE_CARD",
        "TAG_CONVERSATION",
        "ASSIGN_LEGAL_AREA",
        "CREATE_TICKET",
        "FIRE_WEBHOOK",
        "PAUSE_AUTOMATION",
    ],
)
RunBranch = TypeAliasType("RunBranch", Literal["then", "else", "skipped"])
ActionStatus = TypeAliasType("ActionStatus", Literal["done", "failed", "scheduled", "skipped"])
Name = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Ref = Annotated[str, StringConstraints(max_length=128)]
CONDITION_KEYS = (
    "funnel_column_id",
    "from_funnel_column_id",
    "to_funnel_column_id",
    "assigned_to_user_id",
    "assigned_to_department_id",
    "message_text",
    "template_name",
    "within_business_hours",
)


def _trigger(value: str | None) -> str | None:
    if value is not None and value not in EVENT_NAMES:
        raise ValueError(
            "must be an event of the catalogue (GET /webhooks/events): "
            + ", ".join(sorted(EVENT_NAMES))
        )
    return value


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


class Conditions(StrictBodyModel):
    """The When part's filters; any of the string keys set non-empty is an effective
    condition. ``restartOnReturn`` is not a filter."""

    funnel_column_id: Ref | None = None
    from_funnel_column_id: Ref | None = None
    to_funnel_column_id: Ref | None = None
    assigned_to_user_id: Ref | None = None
    assigned_to_department_id: Ref | None = None
    message_text: Annotated[str, StringConstraints(max_length=1000)] | None = None
    template_name: Annotated[str, StringConstraints(max_length=512)] | None = None
    within_business_hours: bool | None = Field(
        None,
        description="Whether the event happened within the business hours of the "
        "conversation's inbox (an inbox without hours is always open)",
    )
    restart_on_return: bool | None = None

    def effective(self) -> bool:
        return any(_set(getattr(self, key)) for key in CONDITION_KEYS)


def _set(value: object) -> bool:
    """A string condition counts when non-empty; a boolean one when given (even false)."""
    return value is not None if isinstance(value, bool) else bool(value)


def _documented(name: str, spec: ActionSpec[Any]) -> type[BaseModel]:
    """The document's model of one rule action: its name and its parameters' model."""
    title = "".join(part.capitalize() for part in name.split("_")) + "Action"
    model: type[BaseModel] = create_model(
        title,
        __base__=StrictApiModel,
        __doc__=spec.summary,
        action=(Literal[name], ...),  # type: ignore[arg-type]
        action_params=(spec.params, Field(default_factory=dict)),
    )
    model.model_config["json_schema_extra"] = {
        "examples": [{"action": name, "actionParams": spec.example}]
    }
    model.model_rebuild(force=True)
    return model


_DOCUMENTED: TypeAdapter[Any] = TypeAdapter(
    Annotated[  # type: ignore[arg-type]
        Union[tuple(_documented(n, e.spec) for n, e in RULE_ACTIONS.items())],  # noqa: UP007
        Field(discriminator="action"),
    ]
)


class Action(StrictBodyModel):
    """One action of a rule: ``actionParams`` as the action's entry of the catalogue takes
    them (``officehub.actions``), checked when the rule is saved."""

    action: ActionName
    action_params: dict[str, Any] = Field(
        default_factory=dict, description="The action's parameters (one model per action)"
    )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The document states each action's parameters: a union discriminated by
        ``action`` (the body is still read as a name and an object, and the catalogue's
        model checks the object, so a refusal names ``actionParams.<key>``)."""
        return handler(_DOCUMENTED.core_schema)


RUN_ONCE = (
    "The rule acts (then or else) at most once in a conversation: later events of that "
    "conversation log a skipped run. Events without a conversation are not counted"
)
SKIP_WHILE_HUMAN = (
    "While a person is assigned to the conversation, the rule does not act (a skipped run "
    "says so): it stands aside once a lawyer has taken the client"
)


class RuleCreate(BodyModel):
    name: Name
    enabled: bool = True
    trigger_event: EventName = Field(description="An event name of GET /webhooks/events")
    integration_id: Id | None = Field(None, description="null: the rule applies to every one")
    conditions: Conditions | None = None
    actions: list[Action] = Field(min_length=1, max_length=5)
    else_actions: list[Action] | None = Field(None, max_length=5)
    priority: float = Field(0, description="Higher runs first; ties by creation")
    run_once_per_conversation: bool = Field(False, description=RUN_ONCE)
    skip_while_human_assigned: bool = Field(False, description=SKIP_WHILE_HUMAN)

    _check_trigger = field_validator("trigger_event")(_trigger)
    _check_priority = field_validator("priority")(_finite)


class RulePatch(BodyModel):
    """Partial update: only the fields sent change."""

    NOT_NULL = frozenset(
        {
            "name",
            "enabled",
            "trigger_event",
            "actions",
            "priority",
            "run_once_per_conversation",
            "skip_while_human_assigned",
        }
    )

    name: Name | None = None
    enabled: bool | None = None
    trigger_event: EventName | None = None
    integration_id: Id | None = None
    conditions: Conditions | None = None
    actions: list[Action] | None = Field(None, min_length=1, max_length=5)
    else_actions: list[Action] | None = Field(None, max_length=5)
    priority: float | None = None
    run_once_per_conversation: bool | None = Field(None, description=RUN_ONCE)
    skip_while_human_assigned: bool | None = Field(None, description=SKIP_WHILE_HUMAN)

    _check_trigger = field_validator("trigger_event")(_trigger)
    _check_priority = field_validator("priority")(_finite)


class RuleWarning(ApiModel):
    code: str = Field(description="CASE_NOTICES_TELL_TOO")
    message: str


class RuleFailure(ApiModel):
    """The newest run of the rule in which an action failed."""

    at: Timestamp
    run_id: ServerId
    event_id: ServerId
    event: str
    action: str = Field(description="The action that failed (the first, when several did)")
    error: str


class RuleOut(ApiModel):
    id: ServerId
    office_id: ServerId
    integration_id: ServerId | None
    name: str
    enabled: bool
    trigger_event: str
    conditions: dict[str, Any]
    actions: list[dict[str, Any]]
    else_actions: list[dict[str, Any]] | None
    priority: float
    run_once_per_conversation: bool = Field(description=RUN_ONCE)
    skip_while_human_assigned: bool = Field(description=SKIP_WHILE_HUMAN)
    failure_count: int = Field(
        description="Runs in which an action failed since the last run in which none did "
        "(0: the rule works; the console shows an alert on the rule while above 0)"
    )
    last_failure: RuleFailure | None = Field(
        description="The newest failed run (kept after a good run resets failureCount)"
    )
    created_at: Timestamp
    updated_at: Timestamp
    warnings: list[RuleWarning] = Field(
        default_factory=list,
        description="What the office should know about the rule as saved (it still runs): "
        "CASE_NOTICES_TELL_TOO, an enabled rule sending the client a message on "
        "case.movement.created while case notices tell the client of movements too",
    )


class ActionOutcome(ApiModel):
    index: int
    action: str
    status: ActionStatus
    error: str | None = None
    detail: str | None = None


class RunOut(ApiModel):
    id: ServerId
    rule_id: ServerId
    event_id: ServerId
    event: str
    conversation_id: ServerId | None
    causation_id: ServerId | None
    depth: int
    branch: RunBranch
    reason: str | None
    actions: list[ActionOutcome]
    created_at: Timestamp


class RuleTestIn(BodyModel):
    """A recorded event (``eventId``), or an event name and its subject; neither: the
    office's latest event of the rule's trigger."""

    event_id: Id | None = None
    event: EventName | None = None
    integration_id: Id | None = None
    conversation_id: Id | None = None
    card_id: Id | None = None
    from_funnel_column_id: Ref | None = None
    to_funnel_column_id: Ref | None = None
    message_text: Annotated[str, StringConstraints(max_length=4096)] | None = None
    template_name: Annotated[str, StringConstraints(max_length=512)] | None = None

    _check_event = field_validator("event")(_trigger)


class ConditionCheck(ApiModel):
    key: str
    expected: str
    actual: str | None
    holds: bool


class RuleTestOut(ApiModel):
    event_id: ServerId | None
    event: str
    branch: RunBranch
    reason: str
    conditions: list[ConditionCheck]
    actions: list[dict[str, Any]]
