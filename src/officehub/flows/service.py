"""Flows: the schema's rules, the graph check (``INVALID_FLOW_GRAPH``) and CRUD."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions.base import CheckContext, Refused
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.crm import service as crm
from officehub.flows import graph, repository, vocabulary
from officehub.flows.graph import Problem
from officehub.flows.models import CaseMovement, Flow
from officehub.flows.schemas import (
    FlowCheckOut,
    FlowContent,
    FlowCreate,
    FlowOut,
    FlowSessionOut,
    FlowUpdate,
    FlowWarning,
    MovementCreate,
    SessionStep,
    Step,
    StepMetadata,
    SystemStep,
)
from officehub.inboxes import service as inboxes
from officehub.kit.encryption import MASK, mask_secrets
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.webhooks import actions as action_deliveries
from officehub.webhooks.schemas import ActionDeliveryOut

INVALID_FLOW_GRAPH = "INVALID_FLOW_GRAPH"
EXPIRY = timedelta(hours=24)
"""A waiting session expires after this long without a reply."""


async def list_deliveries(
    session: AsyncSession, office_id: str, ident: str, params: PageParams, *, status: str | None
) -> tuple[list[ActionDeliveryOut], int]:
    """The flow's ``FIRE_WEBHOOK`` step deliveries, newest first (kept 90 days)."""
    await get_flow(session, office_id, ident)
    rows, total = await action_deliveries.list_for(
        session, office_id, params, flow_id=ident, status=status
    )
    return [ActionDeliveryOut.model_validate(r) for r in rows], total


async def get_flow(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Flow:
    flow = await repository.get_flow(session, office_id, ident, for_change=for_change)
    if flow is None:
        raise NotFound.of("Flow", ident)
    return flow


def _said(problems: Sequence[Problem]) -> list[FlowWarning]:
    return [FlowWarning(step_id=p.step_id, reason=p.reason, details=p.details) for p in problems]


def flow_out(flow: Flow) -> FlowOut:
    content = FlowContent.model_validate(flow.content)
    warnings = graph.unreachable(content.steps, content.initial_step_id)
    return FlowOut(
        id=flow.id,
        office_id=flow.office_id,
        name=flow.name,
        description=flow.description,
        content=mask_secrets(flow.content),
        color=flow.color,
        is_social_flow=flow.is_social_flow,
        inbox_id=flow.inbox_id,
        warnings=_said(warnings),
        created_at=flow.created_at,
        updated_at=flow.updated_at,
    )


def stored_content(steps: Sequence[Step], initial_step_id: str) -> dict[str, Any]:
    """As the API shows it: every step key present (null when unset), metadata only with
    the keys sent."""
    out = []
    for step in steps:
        data = step.model_dump(mode="json", by_alias=True, exclude={"metadata"})
        data["metadata"] = (
            step.metadata.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if step.metadata is not None
            else None
        )
        out.append(data)
    return {"steps": out, "initialStepId": initial_step_id}


def _unmasked(content: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """``content`` with each header value sent back masked (``MASK``, as reads show it)
    replaced by the stored step's value of that header (a 400 when there is none)."""
    before = {s["id"]: (s.get("metadata") or {}) for s in stored.get("steps", [])}
    for index, step in enumerate(content["steps"]):
        headers = (step.get("metadata") or {}).get("webhookHeaders") or []
        if not any(h["value"] == MASK for h in headers):
            continue
        kept = {
            h["key"]: h["value"] for h in before.get(step["id"], {}).get("webhookHeaders") or []
        }
        for number, header in enumerate(headers):
            if header["value"] != MASK:
                continue
            if header["key"] not in kept:
                field = f"body.content.steps.{index}.metadata.webhookHeaders.{number}.value"
                raise ValidationFailed.field(field, "the masked value of no stored header")
            header["value"] = kept[header["key"]]
    return content


def _refused(problems: Sequence[Problem]) -> ValidationFailed:
    first = problems[0]
    return ValidationFailed(
        f"Invalid flow graph: step {first.step_id!r}: {first.reason}",
        details="; ".join(p.describe() for p in problems),
        code=INVALID_FLOW_GRAPH,
    )


async def graph_problems(
    session: AsyncSession,
    office_id: str,
    steps: Sequence[Step],
    initial_step_id: str,
    *,
    allow_private: bool,
) -> list[Problem]:
    """What refuses the graph, by step: the shape first, then (the shape sound) what the
    system steps refer to. Reads only."""
    problems = graph.structural_problems(steps, initial_step_id)
    if not problems:
        for step in steps:
            if isinstance(step, SystemStep):
                problems.extend(await _reference_problems(session, office_id, step, allow_private))
    return problems


async def check_graph(
    session: AsyncSession,
    office_id: str,
    steps: Sequence[Step],
    initial_step_id: str,
    *,
    allow_private: bool,
) -> None:
    """400 ``INVALID_FLOW_GRAPH`` naming each step and reason (``graph_problems``)."""
    problems = await graph_problems(
        session, office_id, steps, initial_step_id, allow_private=allow_private
    )
    if problems:
        raise _refused(problems)


async def check_flow(
    session: AsyncSession, office_id: str, body: FlowCreate, *, allow_private: bool
) -> FlowCheckOut:
    """The graph check of a create's body, answered instead of refused: the problems a save
    would refuse it for and the warnings it would carry. The inbox is looked up as create
    does (another office's: 404). Nothing is written."""
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    content = body.content
    problems = await graph_problems(
        session, office_id, content.steps, content.initial_step_id, allow_private=allow_private
    )
    warnings = graph.unreachable(content.steps, content.initial_step_id)
    return FlowCheckOut(valid=not problems, problems=_said(problems), warnings=_said(warnings))


async def _exists(lookup: Awaitable[object]) -> bool:
    try:
        await lookup
    except NotFound:
        return False
    return True


async def _reference_problems(
    session: AsyncSession, office_id: str, step: SystemStep, allow_private: bool
) -> list[Problem]:
    """Each of the step's catalogue actions checked (``flows.vocabulary``), and a
    CHANGE_CRM_COLUMN's funnel and column."""
    meta = step.metadata or StepMetadata()
    problems: list[Problem] = []
    action = step.system_action
    keys = vocabulary.FLOW_KEYS.get(action, {})
    context = CheckContext(office_id, None, allow_private)
    for spec, params in vocabulary.to_check(action, meta):
        try:
            await spec.check(session, context, params)
        except Refused as exc:
            key = keys.get(exc.key, exc.key)
            if exc.what is not None:
                detail = f"metadata.{key} {exc.value!r} is no {exc.what}"
                problems.append(Problem(step.id, graph.UNKNOWN_REFERENCE, detail))
            else:
                part = f" {exc.part}" if exc.part else ""
                detail = f"metadata.{key}{part}: {exc.reason}"
                problems.append(Problem(step.id, graph.WEBHOOK_NOT_SENDABLE, detail))
    if action == "CHANGE_CRM_COLUMN" and meta.funnel_id and meta.funnel_column_id:
        problems.extend(
            await _column_problems(
                session, office_id, step.id, meta.funnel_id, meta.funnel_column_id
            )
        )
    return problems


async def _column_problems(
    session: AsyncSession, office_id: str, step_id: str, funnel_id: str, column_id: str
) -> list[Problem]:
    if not await _exists(crm.get_funnel(session, office_id, funnel_id)):
        return [
            Problem(
                step_id,
                graph.UNKNOWN_REFERENCE,
                f"metadata.funnelId {funnel_id!r} is no funnel of the office",
            )
        ]
    try:
        column = await crm.get_column(session, office_id, column_id)
    except NotFound:
        column = None
    if column is None or column.funnel_id != funnel_id:
        return [
            Problem(
                step_id,
                graph.UNKNOWN_REFERENCE,
                f"metadata.funnelColumnId {column_id!r} is no column of the funnel {funnel_id!r}",
            )
        ]
    return []


async def list_flows(
    session: AsyncSession, office_id: str, params: PageParams, *, inbox_id: str | None = None
) -> tuple[list[FlowOut], int]:
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    flows, total = await repository.list_flows(session, office_id, params, inbox_id=inbox_id)
    return [flow_out(f) for f in flows], total


async def create_flow(
    session: AsyncSession, office_id: str, body: FlowCreate, *, allow_private: bool
) -> FlowOut:
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    content = body.content
    await check_graph(
        session, office_id, content.steps, content.initial_step_id, allow_private=allow_private
    )
    flow = Flow(
        office_id=office_id,
        inbox_id=body.inbox_id,
        name=body.name,
        description=body.description,
        color=body.color,
        is_social_flow=body.is_social_flow,
        content=_unmasked(stored_content(content.steps, content.initial_step_id), {}),
    )
    session.add(flow)
    await session.flush()
    return flow_out(flow)


async def update_flow(
    session: AsyncSession, office_id: str, ident: str, body: FlowUpdate, *, allow_private: bool
) -> FlowOut:
    flow = await get_flow(session, office_id, ident, for_change=True)
    if body.content is not None:
        initial = body.content.initial_step_id or str(flow.content["initialStepId"])
        await check_graph(
            session, office_id, body.content.steps, initial, allow_private=allow_private
        )
        flow.content = _unmasked(stored_content(body.content.steps, initial), flow.content)
    if body.name is not None:
        flow.name = body.name
    if body.description is not None:
        flow.description = body.description
    if "color" in body.model_fields_set:
        flow.color = body.color
    if body.is_social_flow is not None:
        flow.is_social_flow = body.is_social_flow
    await session.flush()
    return flow_out(flow)


async def delete_flow(session: AsyncSession, office_id: str, ident: str) -> FlowOut:
    flow = await get_flow(session, office_id, ident, for_change=True)
    out = flow_out(flow)
    await repository.delete(session, flow)
    return out


async def flow_session(
    session: AsyncSession, office_id: str, conversation_id: str, now: datetime
) -> FlowSessionOut:
    """A waiting session past its 24 h shows as expired even before the next message
    records it."""
    await conversations.get_conversation(session, office_id, conversation_id)
    record = await repository.session_of(session, office_id, conversation_id)
    flow = None if record is None else await repository.get_flow(session, office_id, record.flow_id)
    if record is None or flow is None:
        raise NotFound(
            "Flow session not found",
            details=f"No flow has run in conversation {conversation_id}",
        )
    status, end_reason = record.status, record.end_reason
    expires_at = record.last_activity_at + EXPIRY if status == "WAITING" else None
    if expires_at is not None and now > expires_at:
        status, end_reason, expires_at = "EXPIRED", "EXPIRED", None
    waiting = {"WAITING": "REPLY", "PAUSED": "HUMAN"}.get(status)
    return FlowSessionOut(
        id=record.id,
        conversation_id=record.conversation_id,
        flow_id=record.flow_id,
        flow_name=flow.name,
        status=status,
        current_step_id=record.current_step_id if status not in ("ENDED", "EXPIRED") else None,
        waiting_for=waiting,
        reasked=record.reasked,
        end_reason=end_reason,
        expires_at=expires_at,
        last_activity_at=record.last_activity_at,
        steps=[SessionStep.model_validate(s) for s in record.steps],
        created_at=record.created_at,
    )


async def record_movement(
    session: AsyncSession, office_id: str, body: MovementCreate
) -> CaseMovement:
    await contacts.get_contact(session, office_id, body.person_id)
    movement = CaseMovement(
        office_id=office_id,
        person_id=body.person_id,
        case_number=body.case_number,
        description=body.description,
        occurred_at=body.occurred_at,
    )
    session.add(movement)
    await session.flush()
    return movement


async def list_movements(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    person_id: str | None = None,
    visible: ColumnElement[bool] | None = None,
) -> tuple[list[CaseMovement], int]:
    if person_id is not None:
        await contacts.get_contact(session, office_id, person_id)
    return await repository.list_movements(
        session, office_id, params, person_id=person_id, visible=visible
    )


async def delete_movement(session: AsyncSession, office_id: str, ident: str) -> CaseMovement:
    movement = await repository.get_movement(session, office_id, ident, for_change=True)
    if movement is None:
        raise NotFound.of("Case movement", ident)
    await session.delete(movement)
    await session.flush()
    return movement
