"""Automation rules: their validation (the spec's limits and the contract) and CRUD."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation import repository
from officehub.automation.models import AutomationRule
from officehub.automation.schemas import (
    Action,
    ActionOutcome,
    Conditions,
    RuleCreate,
    RuleOut,
    RulePatch,
    RuleWarning,
    RunOut,
)
from officehub.automation.templates import is_approved_template
from officehub.crm import service as crm
from officehub.fast_messages import service as fast_messages
from officehub.inboxes import service as inboxes
from officehub.kit.config import Settings
from officehub.kit.encryption import MASK, mask_secrets
from officehub.kit.errors import NotFound, ServiceError, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow
from officehub.legal_areas import service as legal_areas
from officehub.messages.schemas import FallbackTemplate
from officehub.tags import service as tags
from officehub.tickets import service as tickets
from officehub.webhooks import actions as action_deliveries
from officehub.webhooks.schemas import ActionDeliveryOut
from officehub.webhooks.service import check_url

ELSE_WITHOUT_CONDITIONS = "ELSE_ACTIONS_WITHOUT_CONDITIONS"
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_PRIORITIES = ("LOW", "MEDIUM", "HIGH")
_URL = re.compile(r"^https?://[^\s/?#]+\S*$", re.IGNORECASE)


async def get_rule(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> AutomationRule:
    rule = await repository.get_rule(session, office_id, ident, for_change=for_change)
    if rule is None:
        raise NotFound.of("Automation rule", ident)
    return rule


CASE_NOTICES_TELL_TOO = "CASE_NOTICES_TELL_TOO"
_SENDS = frozenset({"SEND_FAST_MESSAGE", "SCHEDULE_MESSAGE"})


def warnings_of(rule: AutomationRule) -> list[RuleWarning]:
    """An enabled rule that messages the client on ``case.movement.created`` tells what
    case notices tell too (docs/decisions.md, "Double notices"): said, not prevented."""
    actions = [*rule.actions, *(rule.else_actions or [])]
    if (
        rule.enabled
        and rule.trigger_event == "case.movement.created"
        and any(a.get("action") in _SENDS for a in actions)
    ):
        return [
            RuleWarning(
                code=CASE_NOTICES_TELL_TOO,
                message="Case notices also tell the client of new movements (GET "
                "/case-notice-settings): with both, the client hears twice. Set the notice "
                "categories to NEVER, or drop this rule's send, to tell once",
            )
        ]
    return []


def rule_out(rule: AutomationRule) -> RuleOut:
    """The rule as every read shows it: a FIRE_WEBHOOK's ``secret`` and header values are
    write-only, shown as ``MASK`` (docs/decisions.md, "Write-only secrets")."""
    out = RuleOut.model_validate(rule)
    return out.model_copy(
        update={
            "actions": mask_secrets(out.actions),
            "else_actions": mask_secrets(out.else_actions),
            "warnings": warnings_of(rule),
        }
    )


def stored_conditions(conditions: Conditions | None) -> dict[str, Any]:
    if conditions is None:
        return {}
    return conditions.model_dump(mode="json", by_alias=True, exclude_none=True)


def _stored_actions(
    actions: Sequence[Action], branch: str, rule: AutomationRule | None = None
) -> list[dict[str, Any]]:
    """``actions`` to store; a masked secret or header value sent back is the stored one's."""
    stored = [a.model_dump(mode="json", by_alias=True) for a in actions]
    for index, action in enumerate(stored):
        if action["action"] == "FIRE_WEBHOOK":
            previous = _previous_webhook(rule, branch, index, action["actionParams"])
            prefix = f"body.{branch}.{index}.actionParams"
            action["actionParams"] = _unmasked(action["actionParams"], previous, prefix)
    return stored


def _previous_webhook(
    rule: AutomationRule | None, branch: str, index: int, params: dict[str, Any]
) -> dict[str, Any]:
    """The stored FIRE_WEBHOOK an updated one continues: the one at the same place, else
    the first to the same URL."""
    if rule is None:
        return {}
    branches = {"actions": rule.actions, "elseActions": rule.else_actions or []}
    same_place = branches[branch][index : index + 1]
    candidates = [*same_place, *rule.actions, *(rule.else_actions or [])]
    webhooks = [a["actionParams"] for a in candidates if a.get("action") == "FIRE_WEBHOOK"]
    if same_place and same_place[0].get("action") == "FIRE_WEBHOOK":
        return dict(webhooks[0])
    return next((dict(w) for w in webhooks if w.get("url") == params.get("url")), {})


def _unmasked(params: dict[str, Any], previous: dict[str, Any], prefix: str) -> dict[str, Any]:
    params = dict(params)
    if params.get("secret") == MASK:
        if not previous.get("secret"):
            raise ValidationFailed.field(f"{prefix}.secret", "the masked value of no stored secret")
        params["secret"] = previous["secret"]
    headers = params.get("headers")
    if isinstance(headers, dict):
        stored = previous.get("headers") or {}
        for name, value in headers.items():
            if value == MASK:
                if not isinstance(stored.get(name), str):
                    raise ValidationFailed.field(
                        f"{prefix}.headers.{name}", "the masked value of no stored header"
                    )
                headers = {**headers, name: stored[name]}
        params["headers"] = headers
    return params


def has_effective_conditions(conditions: dict[str, Any]) -> bool:
    return Conditions.model_validate(conditions).effective()


async def create_rule(
    session: AsyncSession, office_id: str, body: RuleCreate, settings: Settings
) -> RuleOut:
    conditions = stored_conditions(body.conditions)
    effective = has_effective_conditions(conditions)
    if body.else_actions and not effective:
        raise _else_refused()
    if body.integration_id is not None:
        await _integration(session, office_id, body.integration_id)
    await check_actions(session, office_id, body.integration_id, "actions", body.actions, settings)
    else_actions = body.else_actions or None
    if else_actions:
        await check_actions(
            session, office_id, body.integration_id, "elseActions", else_actions, settings
        )
    now = utcnow()
    rule = AutomationRule(
        office_id=office_id,
        integration_id=body.integration_id,
        name=body.name,
        enabled=body.enabled,
        trigger_event=body.trigger_event,
        conditions=conditions,
        actions=_stored_actions(body.actions, "actions"),
        else_actions=None if not else_actions else _stored_actions(else_actions, "elseActions"),
        priority=body.priority,
        created_at=now,
        updated_at=now,
    )
    session.add(rule)
    await session.flush()
    return rule_out(rule)


async def update_rule(
    session: AsyncSession, office_id: str, ident: str, body: RulePatch, settings: Settings
) -> RuleOut:
    """The spec's partial PATCH and its else-branch rules:

    - ``elseActions`` (non-empty) on a rule that has, and keeps, no effective condition → 400;
    - a PATCH leaving the rule without an effective condition clears ``elseActions``, even
      when the payload or the stored rule holds one;
    - ``elseActions: null`` removes the branch.
    """
    rule = await get_rule(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    body.refuse_sent_nulls()
    had_effective = has_effective_conditions(rule.conditions)
    conditions = stored_conditions(body.conditions) if "conditions" in sent else rule.conditions
    effective = has_effective_conditions(conditions)
    if "else_actions" in sent and body.else_actions and not had_effective and not effective:
        raise _else_refused()
    integration_id = body.integration_id if "integration_id" in sent else rule.integration_id
    if "integration_id" in sent and integration_id is not None:
        await _integration(session, office_id, integration_id)
    if body.actions is not None:
        await check_actions(session, office_id, integration_id, "actions", body.actions, settings)
        rule.actions = _stored_actions(body.actions, "actions", rule)
    if "else_actions" in sent:
        else_actions = body.else_actions or None
        if else_actions and effective:
            await check_actions(
                session, office_id, integration_id, "elseActions", else_actions, settings
            )
        rule.else_actions = (
            _stored_actions(else_actions, "elseActions", rule) if else_actions else None
        )
    if not effective:
        rule.else_actions = None
    rule.conditions = conditions
    rule.integration_id = integration_id
    if body.name is not None:
        rule.name = body.name
    if body.enabled is not None:
        rule.enabled = body.enabled
    if body.trigger_event is not None:
        rule.trigger_event = body.trigger_event
    if body.priority is not None:
        rule.priority = body.priority
    rule.updated_at = utcnow()
    await session.flush()
    return rule_out(rule)


async def delete_rule(session: AsyncSession, office_id: str, ident: str) -> RuleOut:
    rule = await get_rule(session, office_id, ident, for_change=True)
    out = rule_out(rule)
    await session.delete(rule)
    await session.flush()
    return out


async def read_rule(session: AsyncSession, office_id: str, ident: str) -> RuleOut:
    return rule_out(await get_rule(session, office_id, ident))


async def list_rules(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    trigger_event: str | None,
    enabled: bool | None,
) -> tuple[list[RuleOut], int]:
    rows, total = await repository.list_rules(
        session, office_id, params, trigger_event=trigger_event, enabled=enabled
    )
    return [rule_out(r) for r in rows], total


async def list_deliveries(
    session: AsyncSession,
    office_id: str,
    ident: str,
    params: PageParams,
    *,
    status: str | None,
) -> tuple[list[ActionDeliveryOut], int]:
    """The rule's ``FIRE_WEBHOOK`` deliveries, newest first (kept 90 days)."""
    await get_rule(session, office_id, ident)
    rows, total = await action_deliveries.list_for(
        session, office_id, params, rule_id=ident, status=status
    )
    return [ActionDeliveryOut.model_validate(r) for r in rows], total


async def list_runs(
    session: AsyncSession, office_id: str, ident: str, params: PageParams
) -> tuple[list[RunOut], int]:
    await get_rule(session, office_id, ident)
    rows, total = await repository.list_runs(session, office_id, ident, params)
    return [
        RunOut(
            id=r.id,
            rule_id=r.rule_id,
            event_id=r.event_id,
            event=r.event_name,
            conversation_id=r.conversation_id,
            causation_id=r.causation_id,
            depth=r.depth,
            branch=r.branch,
            reason=r.reason,
            actions=[ActionOutcome.model_validate(o) for o in r.outcomes],
            created_at=r.created_at,
        )
        for r in rows
    ], total


def _else_refused() -> ValidationFailed:
    return ValidationFailed(
        "elseActions needs an effective condition",
        details=(
            "body.elseActions: the rule has no effective condition (set one of funnelColumnId, "
            "fromFunnelColumnId, toFunnelColumnId, assignedToUserId, assignedToDepartmentId, "
            "messageText, templateName), so it has no else-branch"
        ),
        code=ELSE_WITHOUT_CONDITIONS,
    )


async def _integration(session: AsyncSession, office_id: str, ident: str) -> None:
    try:
        await inboxes.get_integration(session, office_id, ident)
    except NotFound as exc:
        raise ValidationFailed.field(
            "body.integrationId", f"no integration {ident} in this office"
        ) from exc


# Action params ------------------------------------------------------------------------


_FALLBACK = ("fallbackTemplate",)
ACTION_PARAMS: dict[str, frozenset[str]] = {
    "SEND_FAST_MESSAGE": frozenset({"fastMessageId", "templateName", *_FALLBACK}),
    "SCHEDULE_MESSAGE": frozenset({"text", "templateName", "delayMinutes", *_FALLBACK}),
    "MOVE_CARD": frozenset({"targetFunnelColumnId"}),
    "TAG_CONVERSATION": frozenset({"tagId"}),
    "ASSIGN_LEGAL_AREA": frozenset({"legalAreaId"}),
    "CREATE_TICKET": frozenset({"title", "description", "ticketStatusId", "priority"}),
    "FIRE_WEBHOOK": frozenset({"url", "method", "headers", "secret"}),
    "PAUSE_AUTOMATION": frozenset({"durationMinutes", "resumeOnTemplateSent"}),
}
"""The params each action takes; any other key is refused (``UNKNOWN_FIELD``), as a body
field is: a misspelt ``tagID`` must not be kept and then fail at run time."""


class _Params:
    """Reads one action's params, raising a 400 that names branch, index and key."""

    def __init__(self, branch: str, index: int, params: dict[str, Any]) -> None:
        self.prefix = f"body.{branch}.{index}.actionParams"
        self.params = params

    def fail(self, key: str, reason: str) -> ValidationFailed:
        return ValidationFailed.field(f"{self.prefix}.{key}", reason)

    def text(self, key: str, *, required: bool = False, max_length: int = 4096) -> str | None:
        value = self.params.get(key)
        if value is None or value == "":
            if required:
                raise self.fail(key, "required")
            return None
        if not isinstance(value, str):
            raise self.fail(key, "must be a string")
        if len(value) > max_length:
            raise self.fail(key, f"at most {max_length} characters")
        return value

    def required(self, key: str, *, max_length: int) -> str:
        value = self.text(key, required=True, max_length=max_length)
        if value is None:  # pragma: no cover - text() raised already
            raise self.fail(key, "required")
        return value

    def number(self, key: str, *, low: int, high: int) -> int | None:
        value = self.params.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"must be a whole number from {low} to {high}")
        return value

    def flag(self, key: str) -> bool | None:
        value = self.params.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.fail(key, "must be true or false")
        return value

    async def record(self, key: str, lookup: Any) -> None:
        """``lookup`` raises NotFound when the id is not a record of the office."""
        try:
            await lookup
        except NotFound as exc:
            raise self.fail(key, "not a record of this office") from exc


async def check_actions(
    session: AsyncSession,
    office_id: str,
    integration_id: str | None,
    branch: str,
    actions: Sequence[Action],
    settings: Settings,
) -> None:
    for index, action in enumerate(actions):
        p = _Params(branch, index, action.action_params)
        for key in action.action_params:
            if key not in ACTION_PARAMS[action.action]:
                raise ValidationFailed.unknown_field(f"{p.prefix}.{key}")
        await _check_action(session, office_id, integration_id, action.action, p, settings)


async def _check_template(
    session: AsyncSession, office_id: str, integration_id: str | None, p: _Params, name: str
) -> None:
    if not await is_approved_template(session, office_id, integration_id, name):
        raise p.fail("templateName", f"{name!r} is not an APPROVED template of the office")


async def _check_fallback(
    session: AsyncSession, office_id: str, integration_id: str | None, p: _Params
) -> None:
    """``fallbackTemplate`` (``{name, language, variables}``): the APPROVED template sent
    instead of the text when the conversation's 24-hour window is closed."""
    value = p.params.get("fallbackTemplate")
    if value is None:
        return
    try:
        fallback = FallbackTemplate.model_validate(value)
    except PydanticValidationError as exc:
        where = ".".join(str(part) for part in exc.errors()[0]["loc"])
        key = f"fallbackTemplate.{where}" if where else "fallbackTemplate"
        raise p.fail(key, "an object {name, language, variables} of strings") from exc
    if not await is_approved_template(session, office_id, integration_id, fallback.name):
        raise p.fail(
            "fallbackTemplate.name", f"{fallback.name!r} is not an APPROVED template of the office"
        )


async def _check_action(
    session: AsyncSession,
    office_id: str,
    integration_id: str | None,
    name: str,
    p: _Params,
    settings: Settings,
) -> None:
    if name == "SEND_FAST_MESSAGE":
        fast_id = p.text("fastMessageId", max_length=64)
        template = p.text("templateName", max_length=512)
        if fast_id is None and template is None:
            raise p.fail("fastMessageId", "required (or templateName)")
        if fast_id is not None:
            await p.record(
                "fastMessageId", fast_messages.get_fast_message(session, office_id, fast_id)
            )
        if template is not None:
            await _check_template(session, office_id, integration_id, p, template)
        await _check_fallback(session, office_id, integration_id, p)
    elif name == "SCHEDULE_MESSAGE":
        text = p.text("text")
        template = p.text("templateName", max_length=512)
        if text is None and template is None:
            raise p.fail("text", "required (or templateName)")
        if template is not None:
            await _check_template(session, office_id, integration_id, p, template)
        await _check_fallback(session, office_id, integration_id, p)
        p.number("delayMinutes", low=0, high=525_600)
    elif name == "MOVE_CARD":
        column_id = p.required("targetFunnelColumnId", max_length=64)
        await p.record("targetFunnelColumnId", crm.get_column(session, office_id, column_id))
    elif name == "TAG_CONVERSATION":
        tag_id = p.required("tagId", max_length=64)
        await p.record("tagId", tags.get_tag(session, office_id, tag_id))
    elif name == "ASSIGN_LEGAL_AREA":
        area_id = p.required("legalAreaId", max_length=64)
        await p.record("legalAreaId", legal_areas.get_legal_area(session, office_id, area_id))
    elif name == "CREATE_TICKET":
        p.text("title", required=True, max_length=200)
        p.text("description", max_length=10_000)
        status_id = p.required("ticketStatusId", max_length=64)
        await p.record("ticketStatusId", tickets.get_ticket_status(session, office_id, status_id))
        priority = p.text("priority", max_length=16)
        if priority is not None and priority not in _PRIORITIES:
            raise p.fail("priority", "one of LOW, MEDIUM, HIGH")
    elif name == "FIRE_WEBHOOK":
        url = p.required("url", max_length=2000)
        if not _URL.match(url):
            raise p.fail("url", "must be an http or https URL")
        try:
            check_url(url, allow_private=settings.webhook_allow_private)
        except ServiceError as exc:
            reason = exc.details.split(": ", 1)[-1] or exc.message
            raise ValidationFailed.field(f"{p.prefix}.url", reason, code=exc.code) from exc
        method = p.text("method", max_length=8)
        if method is not None and method not in _METHODS:
            raise p.fail("method", "one of " + ", ".join(_METHODS))
        headers = p.params.get("headers")
        if headers is not None and not (
            isinstance(headers, dict)
            and len(headers) <= 20
            and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
        ):
            raise p.fail("headers", "an object of at most 20 string values")
        secret = p.text("secret", max_length=256)
        if secret is not None and len(secret) < 8:
            raise p.fail("secret", "8 to 256 characters")
    elif name == "PAUSE_AUTOMATION":
        p.number("durationMinutes", low=1, high=525_600)
        p.flag("resumeOnTemplateSent")
