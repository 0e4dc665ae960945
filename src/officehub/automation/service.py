"""Automation rules: their validation (the spec's limits and the contract) and CRUD."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation import repository, vocabulary
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
from officehub.inboxes import service as inboxes
from officehub.kit.config import Settings
from officehub.kit.encryption import MASK, mask_secrets
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow
from officehub.webhooks import actions as action_deliveries
from officehub.webhooks.schemas import ActionDeliveryOut

ELSE_WITHOUT_CONDITIONS = "ELSE_ACTIONS_WITHOUT_CONDITIONS"


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
    refuse_inapplicable(body.trigger_event, "actions", body.actions)
    refuse_inapplicable(body.trigger_event, "elseActions", body.else_actions or [])
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
        run_once_per_conversation=body.run_once_per_conversation,
        skip_while_human_assigned=body.skip_while_human_assigned,
        failure_count=0,
        last_failure=None,
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
    if sent & {"trigger_event", "actions", "else_actions"}:
        # what the PATCH changes; a rule saved before the check can still be renamed or
        # disabled
        trigger = body.trigger_event or rule.trigger_event
        refuse_inapplicable(
            trigger, "actions", body.actions if body.actions is not None else rule.actions
        )
        else_kept = body.else_actions if "else_actions" in sent else rule.else_actions
        refuse_inapplicable(trigger, "elseActions", (else_kept or []) if effective else [])
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
    if body.run_once_per_conversation is not None:
        rule.run_once_per_conversation = body.run_once_per_conversation
    if body.skip_while_human_assigned is not None:
        rule.skip_while_human_assigned = body.skip_while_human_assigned
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


WITHOUT_CONVERSATION = frozenset(
    {
        "contact.created",
        "contact.updated",
        "contact.deleted",
        "template.updated",
        "webhook.endpoint.disabled",
        "webhook.test",
    }
)
"""Triggers whose events never carry a conversation (nor a card)."""


def _needs_conversation(name: str) -> bool:
    """Done to the event's conversation or card (the catalogue says which). ``PAUSE_AUTOMATION``
    is taken on any trigger: with no conversation its outcome is ``skipped``."""
    entry = vocabulary.RULE_ACTIONS.get(name)
    return entry is not None and entry.spec.needs_conversation


def refuse_inapplicable(
    trigger: str, branch: str, actions: Sequence[Action | dict[str, Any]]
) -> None:
    """An action that cannot apply to the record the trigger gives is refused when the rule
    is saved (400 naming it), never left to fail at each run."""
    for index, action in enumerate(actions):
        name = action.action if isinstance(action, Action) else str(action.get("action"))
        if trigger in WITHOUT_CONVERSATION and _needs_conversation(name):
            raise ValidationFailed.field(
                f"body.{branch}.{index}.action",
                f"{name} acts on the event's conversation, and {trigger} events have none",
            )
        if trigger == "crm.lead.deleted" and name == "MOVE_CARD":
            raise ValidationFailed.field(
                f"body.{branch}.{index}.action",
                "MOVE_CARD moves the event's card, and a crm.lead.deleted card is gone",
            )


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


async def check_actions(
    session: AsyncSession,
    office_id: str,
    integration_id: str | None,
    branch: str,
    actions: Sequence[Action],
    settings: Settings,
) -> None:
    """Each action's params by its catalogue entry (``automation.vocabulary``)."""
    await vocabulary.check(
        session,
        office_id,
        integration_id,
        branch,
        [(a.action, a.action_params) for a in actions],
        settings.webhook_allow_private,
    )
