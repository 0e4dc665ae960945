"""The flow steps' names for the catalogue's actions (``officehub.actions.catalogue``): a
system step's ``systemAction`` and ``metadata`` become one or more of the catalogue's
actions and parameters, checked when the flow is saved and run when the step is reached.

``SEARCH_MOVEMENTS`` is no action on a record (it answers the contact with their case's
movements): the flow runtime does it itself.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from officehub.actions import catalogue
from officehub.actions.base import ActionSpec
from officehub.flows.schemas import StepMetadata

Planned = list[tuple[ActionSpec[Any], BaseModel]]

FLOW_KEYS: dict[str, dict[str, str]] = {
    "ASSIGN_USER": {"userId": "userId", "departmentId": "departmentIds"},
    "ASSIGN_AGENT": {"userId": "agentId", "departmentId": "departmentIds"},
    "ADD_LABELS": {"tagId": "tagIds"},
    "CHANGE_CRM_COLUMN": {"targetFunnelColumnId": "funnelColumnId"},
    "CREATE_TICKET": {"ticketStatusId": "ticketStatusId"},
    "FIRE_WEBHOOK": {"url": "webhookUrl", "headers": "webhookHeaders"},
}
"""A catalogue parameter's name in a step's ``metadata`` (what a refusal names)."""


def to_check(action: str, meta: StepMetadata) -> Planned:
    """What the save checks: every reference the step names (each department of an
    assignment, each tag of ADD_LABELS). The flow's own ``schemas`` validated the shapes,
    so the parameters are built without validating again."""
    if action in ("ASSIGN_USER", "ASSIGN_AGENT"):
        user_id = meta.user_id if action == "ASSIGN_USER" else meta.agent_id
        wanted = [meta.department_id] if meta.department_id else []
        planned: Planned = [
            (
                catalogue.ASSIGN_CONVERSATION,
                catalogue.AssignConversationParams.model_construct(user_id=user_id),
            )
        ]
        for department_id in wanted + list(meta.department_ids or []):
            planned.append(
                (
                    catalogue.ASSIGN_CONVERSATION,
                    catalogue.AssignConversationParams.model_construct(department_id=department_id),
                )
            )
        return planned
    if action == "CHANGE_CRM_COLUMN":
        return []  # the funnel and its column: flows.service._column_problems
    return to_run(action, meta, payload={})


def to_run(action: str, meta: StepMetadata, *, payload: dict[str, Any]) -> Planned:
    """The catalogue's actions a step performs, in order (``payload``: a FIRE_WEBHOOK's body)."""
    if action in ("ASSIGN_USER", "ASSIGN_AGENT"):
        user_id = meta.user_id if action == "ASSIGN_USER" else meta.agent_id
        department_id = meta.department_id or next(iter(meta.department_ids or []), None)
        return [
            (
                catalogue.ASSIGN_CONVERSATION,
                catalogue.AssignConversationParams.model_construct(
                    user_id=user_id or None, department_id=department_id or None
                ),
            )
        ]
    if action == "ADD_LABELS":
        return [
            (catalogue.TAG_CONVERSATION, catalogue.TagConversationParams.model_construct(tag_id=t))
            for t in meta.tag_ids or []
        ]
    if action == "CHANGE_CRM_COLUMN":
        return [
            (
                catalogue.MOVE_CARD,
                catalogue.MoveCardParams.model_construct(
                    target_funnel_column_id=str(meta.funnel_column_id)
                ),
            )
        ]
    if action == "CREATE_TICKET":
        return [
            (
                catalogue.CREATE_TICKET,
                catalogue.CreateTicketParams.model_construct(
                    title=str(meta.ticket_title),
                    description=meta.ticket_description,
                    ticket_status_id=meta.ticket_status_id,
                    priority=meta.ticket_priority,
                    assignee_ids=list(meta.ticket_assignee_ids or []),
                    department_ids=list(meta.ticket_department_ids or []),
                ),
            )
        ]
    if action == "FIRE_WEBHOOK" and meta.webhook_url is not None:
        return [
            (
                catalogue.FIRE_WEBHOOK,
                catalogue.FireWebhookParams.model_construct(
                    url=meta.webhook_url,
                    method=meta.webhook_method,
                    headers={h.key: h.value for h in meta.webhook_headers or []},
                    secret=None,
                ),
            )
        ]
    return []


def webhook_body(meta: StepMetadata) -> dict[str, Any]:
    """The step's ``webhookBody``: its JSON object, else wrapped as ``{"body": …}``."""
    body: Any = {}
    if meta.webhook_body:
        try:
            body = json.loads(meta.webhook_body)
        except ValueError:
            body = {"body": meta.webhook_body}
    if not isinstance(body, dict):
        body = {"body": body}
    found: dict[str, Any] = body
    return found
