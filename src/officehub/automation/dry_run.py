"""``POST /automation-rules/{id}/test``: the branch an event would take, nothing done."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation import repository
from officehub.automation.evaluation import decide, subject_of
from officehub.automation.schemas import RuleTestIn, RuleTestOut
from officehub.automation.service import get_rule
from officehub.kit.encryption import mask_secrets
from officehub.kit.errors import NotFound, ValidationFailed


async def test_rule(
    session: AsyncSession, office_id: str, ident: str, body: RuleTestIn
) -> RuleTestOut:
    rule = await get_rule(session, office_id, ident)
    event_id: str | None = None
    name = body.event or rule.trigger_event
    data: dict[str, Any] = {}
    conversation_id = body.conversation_id
    integration_id = body.integration_id
    given = body.model_fields_set - {"event"}
    at: datetime | None = None
    if body.event_id is not None or not given:
        recorded = (
            await repository.get_event(session, office_id, body.event_id)
            if body.event_id is not None
            else await repository.latest_event(session, office_id, name)
        )
        if recorded is None:
            if body.event_id is not None:
                raise NotFound.of("Event", body.event_id)
            raise NotFound(
                "No event to test with",
                details=f"No {name} event recorded in this office; give the event's subject",
            )
        event_id, name, data = recorded.id, recorded.name, dict(recorded.data or {})
        at = recorded.created_at
        conversation_id = recorded.conversation_id
        integration_id = recorded.integration_id
    else:
        data = {
            "id": body.card_id,
            "text": body.message_text,
            "templateName": body.template_name,
            "fromColumnId": body.from_funnel_column_id,
            "toColumnId": body.to_funnel_column_id,
        }
        if body.to_funnel_column_id:
            data["columnId"] = body.to_funnel_column_id
    if name != rule.trigger_event:
        return RuleTestOut(
            event_id=event_id,
            event=name,
            branch="skipped",
            reason=f"the rule triggers on {rule.trigger_event}, not {name}",
            conditions=[],
            actions=[],
        )
    if rule.integration_id is not None and integration_id not in (None, rule.integration_id):
        return RuleTestOut(
            event_id=event_id,
            event=name,
            branch="skipped",
            reason="the event is of another integration than the rule's",
            conditions=[],
            actions=[],
        )
    if conversation_id is not None and body.event_id is None and event_id is None:
        try:
            await _conversation_exists(session, office_id, conversation_id)
        except NotFound as exc:
            raise ValidationFailed.field(
                "body.conversationId", "not a conversation of this office"
            ) from exc
    subject = await subject_of(session, office_id, name, data, conversation_id, at=at)
    decision = decide(rule, subject, None)
    reason = decision.reason
    if not rule.enabled:
        reason += " (the rule is disabled: it would not run now)"
    return RuleTestOut(
        event_id=event_id,
        event=name,
        branch=decision.branch,
        reason=reason,
        conditions=decision.checks,
        actions=mask_secrets(decision.actions),
    )


async def _conversation_exists(session: AsyncSession, office_id: str, ident: str) -> None:
    from officehub.conversations import service as conversations

    await conversations.get_conversation(session, office_id, ident)
