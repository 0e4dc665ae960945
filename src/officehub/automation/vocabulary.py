"""The rules' names for the catalogue's actions (``officehub.actions.catalogue``) and their
``actionParams``: parsed by the action's parameters model, checked by its check, each
refusal a 400 naming ``body.<branch>.<index>.actionParams.<key>``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions import catalogue
from officehub.actions.base import ActionSpec, CheckContext, Refused
from officehub.kit.errors import ValidationFailed


@dataclass(frozen=True)
class RuleAction:
    spec: ActionSpec[Any]
    required: tuple[str, ...] = ()
    """Parameters the rule must give though the action does not need them."""


RULE_ACTIONS: dict[str, RuleAction] = {
    "SEND_FAST_MESSAGE": RuleAction(catalogue.SEND_FAST_MESSAGE),
    "SCHEDULE_MESSAGE": RuleAction(catalogue.SCHEDULE_MESSAGE),
    "MOVE_CARD": RuleAction(catalogue.MOVE_CARD),
    "TAG_CONVERSATION": RuleAction(catalogue.TAG_CONVERSATION),
    "ASSIGN_LEGAL_AREA": RuleAction(catalogue.ASSIGN_LEGAL_AREA),
    # a rule names its ticket status (a flow step may leave it to the office's first)
    "CREATE_TICKET": RuleAction(catalogue.CREATE_TICKET, required=("ticketStatusId",)),
    "FIRE_WEBHOOK": RuleAction(catalogue.FIRE_WEBHOOK),
    "PAUSE_AUTOMATION": RuleAction(catalogue.PAUSE_AUTOMATION),
}


def parse(name: str, params: dict[str, Any], prefix: str) -> BaseModel:
    """The action's parameters model; 400 naming the first refused key (an unknown key
    first: ``UNKNOWN_FIELD``, as a body's)."""
    entry = RULE_ACTIONS[name]
    try:
        model: BaseModel = entry.spec.params.model_validate(params)
    except PydanticValidationError as exc:
        errors = exc.errors()
        unknown = [e for e in errors if e["type"] == "extra_forbidden"]
        if unknown:
            raise ValidationFailed.unknown_field(f"{prefix}.{_where(unknown[0])}") from exc
        first = errors[0]
        raise ValidationFailed.field(f"{prefix}.{_where(first)}", _reason(first)) from exc
    for key in entry.required:
        if params.get(key) in (None, ""):
            raise ValidationFailed.field(f"{prefix}.{key}", "required")
    return model


def _where(error: Any) -> str:
    return ".".join(str(part) for part in error["loc"])


def _reason(error: Any) -> str:
    if error["type"] == "missing":
        return "required"
    return str(error["msg"])


async def check(
    session: AsyncSession,
    office_id: str,
    integration_id: str | None,
    branch: str,
    actions: Sequence[tuple[str, dict[str, Any]]],
    allow_private: bool,
) -> None:
    context = CheckContext(office_id, integration_id, allow_private)
    for index, (name, params) in enumerate(actions):
        prefix = f"body.{branch}.{index}.actionParams"
        model = parse(name, params, prefix)
        try:
            await RULE_ACTIONS[name].spec.check(session, context, model)
        except Refused as exc:
            path = f"{prefix}.{exc.key}" + (f".{exc.part}" if exc.part else "")
            raise ValidationFailed.field(path, exc.reason, code=exc.code) from exc
